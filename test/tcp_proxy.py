"""A TCP proxy the test controls, for network faults (standard library only).

    proxy = TcpProxy(("127.0.0.1", pg_port))   # listens on 127.0.0.1:proxy.port
    proxy.hold()      # a partition: bytes stop flowing both ways, every socket stays open
    proxy.release()   # the partition heals: what was held is delivered, in order
    proxy.cut()       # every connection is closed (RST), new ones are refused until release()
    proxy.hold_after(b"INSERT INTO celos_slots")  # hold right after a client packet with this

While held, the proxy keeps reading from both sides into its own buffers (as a network would
keep the packets in flight, the peers' kernels see nothing wrong: no reset, no timeout of their
own), and new connections are accepted but carry nothing. `hold_after` forwards the first
client-to-server chunk that contains the pattern (the statement reaches the server) and holds
everything after it, the server's answer included: a client cut off in the middle of a
transaction. `held` is an Event set when a hold_after hold begins."""

import select
import socket
import struct
import threading


class _Pair:
    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.pending = {client: bytearray(), server: bytearray()}  # bytes waiting to go *to* it
        self.ended = False  # one side closed (or failed): closed once what is held is delivered

    def peer(self, sock):
        return self.server if sock is self.client else self.client

    def close(self, reset=False):
        for s in (self.client, self.server):
            try:
                if reset:  # RST instead of FIN: the peer sees "connection reset"
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            except OSError:
                pass


class TcpProxy:
    def __init__(self, target, port=0):
        self.target = target
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.held = threading.Event()
        self._lock = threading.Lock()
        self._holding = False
        self._cut = False
        self._pattern = None
        self._pairs = []
        self._stopping = False
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    # --- what the test calls -------------------------------------------------------------
    def hold(self):
        with self._lock:
            self._holding = True
        self._wake()

    def hold_after(self, pattern):
        self.held.clear()
        with self._lock:
            self._pattern = pattern
        self._wake()

    def release(self):
        with self._lock:
            self._holding = False
            self._cut = False
            self._pattern = None
        self.held.clear()
        self._wake()

    def cut(self):
        with self._lock:
            self._cut = True
            pairs, self._pairs = self._pairs, []
        for p in pairs:
            p.close(reset=True)
        self._wake()

    def connections(self):
        with self._lock:
            return len(self._pairs)

    def close(self):
        self._stopping = True
        self._wake()
        self._thread.join(5)
        for p in self._pairs:
            p.close()
        self.listener.close()
        self._wake_r.close()
        self._wake_w.close()

    # --- the loop ------------------------------------------------------------------------
    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _accept(self):
        client, _ = self.listener.accept()
        if self._cut:
            client.close()
            return
        try:
            server = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        for s in (client, server):
            s.setblocking(False)
        with self._lock:
            self._pairs.append(_Pair(client, server))

    def _read(self, pair, sock):
        """Reads what `sock` sent; False when the connection ended."""
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return True
        except OSError:
            data = b""
        if not data:
            return False
        with self._lock:
            if (self._pattern is not None and sock is pair.client and not self._holding
                    and self._pattern in data):
                self._pattern = None
                pair.pending[pair.server] += data  # this one still reaches the server
                self._flush(pair, pair.server)
                self._holding = True
                self.held.set()
                return True
        pair.pending[pair.peer(sock)] += data
        return True

    def _flush(self, pair, sock):
        buf = pair.pending[sock]
        if not buf:
            return True
        try:
            n = sock.send(buf)
        except BlockingIOError:
            return True
        except OSError:
            return False
        del buf[:n]
        return True

    def _run(self):
        while not self._stopping:
            with self._lock:
                pairs = list(self._pairs)
                holding = self._holding
            readers = [self.listener, self._wake_r]
            writers = []
            for p in pairs:
                if not p.ended:
                    readers += [p.client, p.server]
                if not holding:
                    writers += [s for s in (p.client, p.server) if p.pending[s]]
            try:
                r, w, _ = select.select(readers, writers, [], 0.5)
            except (OSError, ValueError):
                continue  # a socket closed by cut() meanwhile
            if self._wake_r in r:
                self._wake_r.recv(4096)
            if self.listener in r:
                self._accept()
            by_sock = {}
            for p in pairs:
                by_sock[p.client] = p
                by_sock[p.server] = p
            for s in r:
                p = by_sock.get(s)
                if p and not p.ended and not self._read(p, s):
                    p.ended = True
            with self._lock:
                holding = self._holding
            for s in w:
                p = by_sock.get(s)
                if p and not holding and not self._flush(p, s):
                    p.ended = True
            if not holding:
                for p in pairs:
                    if p.ended:
                        self._finish(p)

    def _finish(self, pair):
        """One side closed (a partition hides that until released): deliver what is left to the
        other, then close both."""
        with self._lock:
            if pair in self._pairs:
                self._pairs.remove(pair)
        for s in (pair.client, pair.server):
            try:
                s.setblocking(True)
                s.settimeout(1)
                if pair.pending[s]:
                    s.sendall(pair.pending[s])
            except OSError:
                pass
        pair.close()
