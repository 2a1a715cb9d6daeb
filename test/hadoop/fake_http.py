"""A small HTTP/1.1 server for the fakes of this folder, on asyncio.

Python's http.server spends about 0.2 ms of CPU on each request (its header parsing, two
writes per answer, a thread per connection fighting for the GIL). The fakes share the machine's
cores with celos-server in the benchmarks of bench/scale, where a real Oozie would run on its
own hosts, so their cost is kept small: one thread, one event loop, keep-alive connections, a
request parsed with a few splits and its answer sent in one write. A request's latency (a real
service's round trip) is waited for without holding up other connections.

A handler class derives from Handler and implements respond(); it sees `command`, `path`,
`headers` (case-insensitive get), `body`, and answers with send_response / send_header /
end_headers / wfile.write as with http.server. An answer that goes on after respond() (a
Kubernetes watch) sets `stream` to an object with start(connection) and stop(): after the head is
written, start() gets the connection, whose write_chunk(data) sends a chunk of a chunked body
and end_stream() its end; stop() is called when the client goes away first.
"""

import asyncio
import socket
import time
from email.utils import formatdate

MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024
REASONS = {200: "OK", 201: "Created", 204: "No Content", 307: "Temporary Redirect",
           400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 411: "Length Required",
           413: "Payload Too Large", 431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable"}


class Headers(dict):
    """Request headers by lower-case name; get() takes any case."""

    def get(self, name, default=None):
        return dict.get(self, name.lower(), default)

    def __getitem__(self, name):
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name):
        return dict.__contains__(self, name.lower())


_last_date = [0, ""]


def _date():
    """The Date header's value, formatted once a second."""
    now = int(time.time())
    if _last_date[0] != now:
        _last_date[:] = [now, formatdate(now, usegmt=True)]
    return _last_date[1]


class _Body:
    def __init__(self):
        self.parts = []

    def write(self, data):
        self.parts.append(data)


class Handler:
    """One request. Subclasses implement respond(); delay() may return the seconds to wait
    before respond() (other connections are served meanwhile) and done() runs after it."""
    server_version = "FakeHTTP/1.0"
    protocol_version = "HTTP/1.1"

    def __init__(self, command, path, headers, body, client):
        self.command, self.path, self.headers, self.body = command, path, headers, body
        self.client_address = client
        self.wfile = _Body()
        self._head = []
        self.stream = None

    def delay(self):
        return 0

    def respond(self):
        raise NotImplementedError

    def done(self):
        pass

    def send_response(self, status, message=None):
        self._head.append("%s %d %s\r\nServer: %s\r\nDate: %s\r\n" % (
            self.protocol_version, status, message or REASONS.get(status, "Unknown"),
            self.server_version, _date()))

    def send_header(self, name, value):
        self._head.append("%s: %s\r\n" % (name, value))

    def end_headers(self):
        self._head.append("\r\n")

    def send_answer(self, status, data, content_type=None, headers=()):
        """A whole answer: the status, Content-Type (when given), Content-Length, the other
        headers (name, value) and the body bytes."""
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def answer(self):
        return "".join(self._head).encode("latin-1") + b"".join(self.wfile.parts)


def _error(status, text):
    body = text.encode()
    return (b"HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
            b"Connection: close\r\n\r\n%s" % (status, REASONS[status].encode(), len(body), body))


class _Connection(asyncio.Protocol):
    def __init__(self, handler_class):
        self.handler_class = handler_class
        self.buffer = bytearray()
        self.transport = None
        self.busy = False  # a request waits for its delay: the next ones wait their turn
        self.client = None
        self.stream = None  # the answer being streamed (a watch), until its end
        self.keep_alive = True

    def connection_made(self, transport):
        self.transport = transport
        self.client = transport.get_extra_info("peername")
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc):
        stream, self.stream = self.stream, None
        if stream is not None:
            stream.stop()

    def write_chunk(self, data):
        """One chunk of a streamed answer's body."""
        if data and not self.transport.is_closing():
            self.transport.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self):
        """The end of a streamed answer; the connection serves the next request (keep-alive)."""
        if self.stream is None:
            return
        self.stream = None
        if not self.transport.is_closing():
            self.transport.write(b"0\r\n\r\n")
            if not self.keep_alive:
                self.transport.close()
        self.busy = False
        self.serve_buffered()

    def data_received(self, data):
        self.buffer += data
        self.serve_buffered()

    def serve_buffered(self):
        while not self.busy and not self.transport.is_closing():
            request = self.parse()
            if request is None:
                return
            handler, keep_alive = request
            wait = handler.delay()
            if wait:
                self.busy = True
                asyncio.get_running_loop().call_later(wait, self.finish, handler, keep_alive)
                return
            self.finish(handler, keep_alive, resume=False)

    def finish(self, handler, keep_alive, resume=True):
        try:
            handler.respond()
        except Exception as e:  # a bug in the fake: answer 500 rather than hang the client
            handler._head, handler.wfile = [], _Body()
            handler.send_response(500)
            text = ("%s: %s" % (type(e).__name__, e)).encode()
            handler.send_header("Content-Length", str(len(text)))
            handler.end_headers()
            handler.wfile.write(text)
        finally:
            handler.done()
        if handler.stream is not None and not self.transport.is_closing():
            self.transport.write(handler.answer())
            self.busy, self.stream, self.keep_alive = True, handler.stream, keep_alive
            handler.stream.start(self)
            return
        if not self.transport.is_closing():
            self.transport.write(handler.answer())
            if not keep_alive:
                self.transport.close()
        self.busy = False
        if resume:
            self.serve_buffered()

    def parse(self):
        """(handler, keep_alive) of the first whole request in the buffer, or None."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                self.fail(431, "request head too large")
            return None
        lines = self.buffer[:end].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return self.fail(400, "bad request line: %r" % lines[0])
        headers = Headers()
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                return self.fail(400, "bad header line: %r" % line)
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return self.fail(411, "chunked request bodies are not supported; send Content-Length")
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            return self.fail(400, "bad Content-Length")
        if length < 0 or length > MAX_BODY:
            return self.fail(413, "body of %d bytes" % length)
        if len(self.buffer) < end + 4 + length:
            return None
        body = bytes(self.buffer[end + 4:end + 4 + length])
        del self.buffer[:end + 4 + length]
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if parts[2] == "HTTP/1.1" else connection == "keep-alive"
        return self.handler_class(parts[0], parts[1], headers, body, self.client), keep_alive

    def fail(self, status, text):
        self.transport.write(_error(status, text))
        self.transport.close()
        self.buffer.clear()
        return None


def serve(handler_class, port, on_bound=None, host="127.0.0.1", ssl_context=None):
    """Serves handler_class on host:port (0 = any free port) until interrupted; on_bound(port)
    is called once listening. With ssl_context, over TLS."""

    async def main():
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Connection(handler_class), host, port,
                                          backlog=256, reuse_address=True, ssl=ssl_context)
        if on_bound:
            on_bound(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
