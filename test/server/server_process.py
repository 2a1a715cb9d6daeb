"""Starting celos-server on a free port with temporary directories, and speaking HTTP to it.

Standard library only. The binary comes from $CELOS_SERVER (set by ctest)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_util import free_port, poll  # noqa: E402 (test/e2e_util.py)

SERVER = os.environ.get("CELOS_SERVER", "celos-server")


class Reply:
    def __init__(self, status, body, headers):
        self.status = status
        self.body = body
        self.headers = headers

    @property
    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return "Reply(%d, %s)" % (self.status, self.body[:300])


class PortTaken(AssertionError):
    """celos-server could not listen: something else holds its port."""


class CelosServer:
    """A celos-server process with its own workflows/defaults/db/logs directories."""

    def __init__(self, workflows=None, defaults=None, args=(), start=True):
        self.root = tempfile.mkdtemp(prefix="celos-server-e2e-")
        self.workflows = os.path.join(self.root, "workflows")
        self.defaults = os.path.join(self.root, "defaults")
        self.db = os.path.join(self.root, "db")
        self.logs = os.path.join(self.root, "logs")
        os.makedirs(self.workflows)
        os.makedirs(self.defaults)
        os.makedirs(self.db)
        for name, text in (workflows or {}).items():
            self.write_workflow(name, text)
        for name, text in (defaults or {}).items():
            with open(os.path.join(self.defaults, name), "w") as f:
                f.write(text)
        self.port = free_port()
        self.args = list(args)
        self.process = None
        self.stderr_path = os.path.join(self.root, "stderr.txt")
        self.cwd = None      # the server's working directory (None: the test's)
        self.db_flag = None  # what is passed as --db (None: self.db)
        self.preexec = None  # run in the child before exec (e.g. a lower RLIMIT_NOFILE)
        if start:
            self.start()

    def write_workflow(self, name, text):
        with open(os.path.join(self.workflows, name), "w") as f:
            f.write(text)

    def command(self):
        return [SERVER, "--port", str(self.port), "--workflows", self.workflows,
                "--defaults", self.defaults, "--db", self.db_flag or self.db, "--logs", self.logs,
                "--hadoop-conf", self.root] + self.args

    def start(self):
        # A restart (after kill -9) reuses the port; a test running beside this one may have
        # been handed it meanwhile. Then the server exits at once, and gets another port.
        for attempt in range(3):
            try:
                return self._start_once()
            except PortTaken:
                if attempt == 2:
                    raise
                self.port = free_port()

    def _start_once(self):
        self.stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL,
                                        stderr=self.stderr, cwd=self.cwd,
                                        preexec_fn=self.preexec)

        def up():
            if self.process.poll() is not None:
                text = self.stderr_text()
                error = PortTaken if "Address already in use" in text else AssertionError
                raise error("celos-server exited with %d: %s" % (self.process.returncode, text))
            try:
                # Never needs a token, and answers while the workflows load.
                return self.get("/health/live", timeout=2).status == 200
            except OSError:
                return False
        poll(up, "celos-server to answer /health/live")

    def stderr_text(self):
        with open(self.stderr_path) as f:
            return f.read()

    def url(self, target):
        return "http://127.0.0.1:%d%s" % (self.port, target)

    def request(self, method, target, timeout=30, body=None, headers=None):
        req = urllib.request.Request(self.url(target), method=method, data=body,
                                     headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                return Reply(res.status, res.read().decode(errors="replace"), res.headers)
        except urllib.error.HTTPError as e:
            return Reply(e.code, e.read().decode(errors="replace"), e.headers)

    def get(self, target, **kw):
        return self.request("GET", target, **kw)

    def post(self, target, **kw):
        return self.request("POST", target, body=b"", **kw)

    def terminate(self, timeout=60):
        """SIGTERM; returns the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self.stderr.close()

    def close(self, remove=True):
        """Kills the server; removes its directories unless `remove` is false (a benchmark
        removes them after its last run: see bench/events/bench_events.py)."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process:
            self.stderr.close()
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)


class ServerPerTest(unittest.TestCase):
    """A test case whose tests each start a celos-server of their own (start()); it is closed
    after the test."""

    def setUp(self):
        self.server = None

    def tearDown(self):
        if self.server:
            self.server.close()

    def start(self, workflows, **kw):
        self.server = CelosServer(workflows=workflows, **kw)
        return self.server


def serve_in_background(handler):
    """A ThreadingHTTPServer on a free port of 127.0.0.1 with `handler`, serving from a daemon
    thread; returns it (shutdown() and server_close() stop it)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class WebhookReceiver:
    """A local webhook receiver: records the JSON bodies POSTed to it, by path."""

    def __init__(self):
        self.received = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with outer.lock:
                    outer.received.append((self.path, self.headers["Content-Type"],
                                           json.loads(body)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = serve_in_background(Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def bodies(self):
        """(path, content type, parsed body) of every POST so far, in order."""
        with self.lock:
            return list(self.received)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class GatedWebHdfs:
    """A WebHDFS name node whose GETFILESTATUS answers (404: no such path) only once the test
    opens the gate: it makes a scheduler step as slow as the test wants, without sleeping."""

    def __init__(self):
        self.gate = threading.Event()
        self.asked = threading.Event()
        gate, asked = self.gate, self.asked

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                asked.set()
                gate.wait(120)
                body = json.dumps({"RemoteException": {"exception": "FileNotFoundException",
                                                       "message": "no such path"}}).encode()
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = serve_in_background(Handler)
        self.port = self.server.server_address[1]

    def close(self):
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()
