"""Starting and stopping the fake Hadoop servers of this folder from tests, and a small HTTP
helper that does not follow redirects (WebHDFS's 307s are part of what the tests check)."""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


class FakeServer:
    """A fake server process started with --port (0 = any free port); the ports it printed on
    stdout are in self.ports. stop()/start() restart it on the same port."""

    def __init__(self, script, *args, port=0):
        self.script = os.path.join(HERE, script)
        self.args = list(args)
        self.ports = []
        self.process = None
        self.start(port)

    @property
    def port(self):
        return self.ports[0]

    def url(self, path=""):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def start(self, port=None):
        if port is None:
            port = self.port
        extra = []
        if len(self.ports) > 1:  # keep the data node's port too
            extra = ["--datanode-port", str(self.ports[1])]
        self.process = subprocess.Popen(
            [sys.executable, self.script, "--port", str(port)] + extra + self.args,
            stdout=subprocess.PIPE, text=True)
        first = self.process.stdout.readline()
        if not first:
            raise RuntimeError("%s did not start" % self.script)
        self.ports = [int(first)]
        if self.script.endswith("fake_webhdfs.py"):
            self.ports.append(int(self.process.stdout.readline()))

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        if self.process:
            self.process.stdout.close()
        self.process = None

    def control(self, path, method="POST"):
        status, _, body = request(method, self.url(path))
        if status != 200:
            raise RuntimeError("control %s: %d %s" % (path, status, body))
        return json.loads(body)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def request(method, url, body=None, headers=None):
    """(status, headers, body text) of one request; HTTP errors are answers, not exceptions."""
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with _opener.open(req, timeout=30) as r:
            return r.status, r.headers, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode("utf-8", "replace")
