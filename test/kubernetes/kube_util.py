"""Starting the fake Kubernetes API server from tests over HTTPS with a throw-away certificate,
a kubeconfig for it, kubectl, and raw requests that return errors as answers."""

import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "celos-test-token"
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def make_certificate(directory):
    """A self-signed certificate for 127.0.0.1 (cert, key), made with the openssl tool."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


class FakeKube:
    """fake_kube_apiserver.py as a process; restart() keeps its port (and --state)."""

    def __init__(self, directory, *args, token=TOKEN):
        self.directory = directory
        self.cert, self.key = make_certificate(directory)
        self.args = ["--tls-cert", self.cert, "--tls-key", self.key] + list(args)
        if token:
            self.args += ["--token", token]
        self.token = token
        self.port = 0
        self.process = None
        self.start()
        self.context = ssl.create_default_context(cafile=self.cert)

    def start(self):
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "fake_kube_apiserver.py"), "--port",
             str(self.port)] + self.args, stdout=subprocess.PIPE, text=True)
        first = self.process.stdout.readline()
        if not first:
            raise RuntimeError("fake_kube_apiserver.py did not start")
        self.port = int(first)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process.stdout.close()
        self.process = None

    def restart(self):
        self.stop()
        self.start()

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def request(self, method, path, body=None, token=True, content_type="application/json"):
        """(status, headers, parsed JSON or text) of one API request."""
        headers = {"Accept": "application/json"}
        if token and self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30, context=self.context) as r:
                status, answer_headers, text = r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            status, answer_headers, text = e.code, e.headers, e.read().decode()
            e.close()
        try:
            return status, answer_headers, json.loads(text)
        except ValueError:
            return status, answer_headers, text

    def control(self, path):
        status, _, body = self.request("POST", "/_control/" + path, token=False)
        if status != 200:
            raise RuntimeError("control %s: %d %s" % (path, status, body))
        return body

    def objects(self):
        return self.request("GET", "/_control/objects", token=False)[2]

    def kubeconfig(self, namespace="default"):
        path = os.path.join(self.directory, "kubeconfig")
        with open(path, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "fake",
                       "clusters": [{"name": "fake", "cluster": {
                           "server": self.url, "certificate-authority": self.cert}}],
                       "users": [{"name": "celos", "user": {"token": self.token}}],
                       "contexts": [{"name": "fake", "context": {
                           "cluster": "fake", "user": "celos", "namespace": namespace}}]}, f)
        return path


def wait_for(what, probe, timeout=60):
    """probe()'s first true value, polled with a bound; fails naming what did not happen."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.1)


def job_body(name, command, suspend=True, labels=None, **spec):
    """A batch/v1 Job as a client would send it."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": dict({"suspend": suspend, "backoffLimit": 0, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{
                    "name": "main", "image": "debian:12", "command": command,
                    "env": [{"name": "GREETING", "value": "hello"}]}]}}}, **spec)}


def condition(job, kind):
    """The (status, reason) of a Job's condition, or None."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c["type"] == kind:
            return c["status"], c.get("reason")
    return None


class Kubectl:
    def __init__(self, kubeconfig):
        self.env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        self.env.update({"KUBECONFIG": kubeconfig, "HOME": os.path.dirname(kubeconfig)})

    def run(self, *args, stdin=None, check=True):
        done = subprocess.run([KUBECTL] + list(args), input=stdin, env=self.env,
                              capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError("kubectl %s: %s" % (" ".join(args), done.stderr))
        return done

    def json(self, *args):
        return json.loads(self.run(*args, "-o", "json").stdout)


def temporary_directory(test):
    directory = tempfile.mkdtemp(prefix="fake-kube-test-")
    test.addCleanup(shutil.rmtree, directory, True)
    return directory
