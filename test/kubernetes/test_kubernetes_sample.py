"""samples/kubernetes/run.sh end to end: one command starts the fake Kubernetes API server
(HTTPS, a token) and celos; the wordcount slots run as Kubernetes Jobs to SUCCESS with the right
counts; Ctrl-C stops celos and the API server.

The binaries come from $CELOS_SERVER / $CELOS_UI (set by ctest); the script is told not to
build (--no-build)."""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("CELOS_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
SAMPLE = os.path.join(SOURCE, "samples", "kubernetes")
sys.path.insert(0, os.path.join(HERE, ".."))
from e2e_util import free_port, poll  # noqa: E402

WORKFLOWS = ["wordcount-lax", "wordcount-nyc", "wordcount-total"]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as res:
            return res.status, res.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class KubernetesSampleTest(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="celos-kube-sample-")
        self.port = free_port()
        self.log_path = self.home + ".out"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [os.path.join(SAMPLE, "run.sh"), "--no-build", "--home", self.home, "--port",
             str(self.port), "--ui-port", str(free_port()), "--hours", "2", "--auto-schedule",
             "1"], stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.addCleanup(self.remove_home)
        self.addCleanup(self.stop)

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
        try:
            return self.process.wait(timeout=90)
        finally:
            self.log.close()

    def remove_home(self):
        shutil.rmtree(self.home, ignore_errors=True)
        os.unlink(self.log_path)

    def output(self):
        with open(self.log_path) as f:
            return f.read()

    def statuses(self, workflow):
        status, body = get("http://127.0.0.1:%d/workflow-slots?id=%s" % (self.port, workflow))
        self.assertEqual(status, 200, body)
        return [s["status"] for s in json.loads(body)["slots"]]

    def all_succeeded(self):
        if self.process.poll() is not None:
            raise AssertionError("run.sh exited with %d:\n%s" % (self.process.returncode,
                                                                 self.output()))
        try:
            found = {w: self.statuses(w) for w in WORKFLOWS}
        except OSError:
            return False  # not up yet
        for w, statuses in found.items():
            if any(s in ("FAILURE", "WAIT_TIMEOUT", "KILLED") for s in statuses):
                raise AssertionError("%s: %s\n%s" % (w, statuses, self.output()))
        return all(s.count("SUCCESS") >= 2 for s in found.values())

    def test_one_command_runs_the_wordcount_story_on_kubernetes(self):
        poll(self.all_succeeded, "every sample slot to reach SUCCESS as a Kubernetes Job",
             timeout=180, interval=0.5)
        totals = sorted(glob.glob(os.path.join(self.home, "data/output/total/*/*/part-00000")))
        self.assertEqual(len(totals), 2, totals)
        with open(totals[0]) as f:
            counts = {w: int(n) for n, w in (line.split() for line in f)}
        self.assertEqual(counts["nyc"], 1)
        self.assertEqual(counts["lax"], 1)
        self.assertEqual(counts["the"], 6)
        with open(os.path.join(self.home, "kube", "state.json")) as f:
            jobs = json.load(f)["objects"]["jobs"]
        self.assertEqual(len([k for k in jobs if k.startswith("wordcount/wordcount-nyc-")]), 2)

        self.assertEqual(self.stop(), 130, self.output())


if __name__ == "__main__":
    unittest.main()
