"""scripts/quickstart.sh end to end: the sample's slots reach SUCCESS, the word counts are right,
the UI answers, Ctrl-C stops both servers, and a second run reuses the home.

The binaries come from $CELOS_SERVER / $CELOS_UI (set by ctest); the script is told not to build."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_util import free_port, poll  # noqa: E402 (test/e2e_util.py)

SOURCE = os.environ.get("CELOS_SOURCE_DIR",
                        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SCRIPT = os.path.join(SOURCE, "scripts", "quickstart.sh")
WORKFLOWS = ["wordcount-nyc", "wordcount-lax", "wordcount-total"]
HOURS = 3


def get(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as res:
            return res.status, res.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def refuses(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def word_counts(path):
    counts = {}
    with open(path) as f:
        for line in f:
            n, word = line.split()
            counts[word] = int(n)
    return counts


class Quickstart:
    def __init__(self, home, stop_after=None):
        self.home = home
        self.port = free_port()
        self.ui_port = free_port()
        self.log_path = os.path.join(home + ".out")
        args = [SCRIPT, "--no-build", "--home", home, "--port", str(self.port),
                "--ui-port", str(self.ui_port), "--hours", str(HOURS), "--auto-schedule", "1"]
        if stop_after is not None:
            args += ["--stop-after", str(stop_after)]
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT)

    def output(self):
        with open(self.log_path) as f:
            return f.read()

    def api(self, target):
        return get("http://127.0.0.1:%d%s" % (self.port, target))

    def wait_until_up(self):
        def up():
            if self.process.poll() is not None:
                raise AssertionError("quickstart exited with %d:\n%s"
                                     % (self.process.returncode, self.output()))
            return "Ctrl-C stops both" in self.output()
        poll(up, "the quickstart to print its URLs", timeout=90, interval=0.2)

    def start_time(self):
        with open(os.path.join(self.home, "defaults", "quickstart.js")) as f:
            for line in f:
                if line.startswith("var START_TIME"):
                    return datetime.strptime(line.split('"')[1], "%Y-%m-%dT%H:%MZ").replace(
                        tzinfo=timezone.utc)
        raise AssertionError("no START_TIME in the generated defaults")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=60)
        finally:
            self.log.close()


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class QuickstartTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="celos-quickstart-e2e-")
        self.home = os.path.join(self.root, "home")
        self.runs = []

    def tearDown(self):
        for run in self.runs:
            run.stop()

    def start(self, **kw):
        run = Quickstart(self.home, **kw)
        self.runs.append(run)
        run.wait_until_up()
        return run

    def slot_statuses(self, run, workflow, times):
        status, body = run.api("/workflow-slots?id=%s&start=%s&end=%s" % (
            workflow, iso(times[0]), iso(times[-1] + timedelta(seconds=1))))
        self.assertEqual(status, 200, body)
        return {s["time"]: s["status"] for s in json.loads(body)["slots"]}

    def all_succeeded(self, run, times):
        for workflow in WORKFLOWS:
            statuses = self.slot_statuses(run, workflow, times)
            if any(s in ("FAILURE", "WAIT_TIMEOUT", "KILLED") for s in statuses.values()):
                raise AssertionError("%s: %s\n%s" % (workflow, statuses, run.output()))
            if sorted(statuses) != sorted(iso(t) for t in times):
                return False
            if any(s != "SUCCESS" for s in statuses.values()):
                return False
        return True

    def test_the_sample_runs_to_success_and_ctrl_c_stops_both_servers(self):
        run = self.start()
        output = run.output()
        self.assertIn("http://127.0.0.1:%d/ui" % run.ui_port, output)
        self.assertIn(os.path.join(self.home, "data", "output"), output)

        status, body = run.api("/workflow-list")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["ids"], sorted(WORKFLOWS))

        start = run.start_time()
        times = [start + timedelta(hours=i) for i in range(HOURS)]
        poll(lambda: self.all_succeeded(run, times), "every sample slot to reach SUCCESS",
             timeout=90, interval=0.2)

        # Bucket i repeats the sample lines i % 3 + 1 times; "the" is three times in them.
        for i, t in enumerate(times):
            bucket = t.strftime("%Y-%m-%d/%H00")
            totals = word_counts(os.path.join(self.home, "data/output/total", bucket, "part-00000"))
            for dc in ("nyc", "lax"):
                out = os.path.join(self.home, "data/output", dc, bucket)
                self.assertTrue(os.path.exists(os.path.join(out, "_SUCCESS")), out)
                counts = word_counts(os.path.join(out, "part-00000"))
                self.assertEqual(counts["the"], 3 * (i % 3 + 1), counts)
                self.assertEqual(counts[dc], 1, counts)
                self.assertEqual(counts["hello"], 1, counts)
                self.assertEqual(totals[dc], 1, totals)
            self.assertEqual(totals["the"], 6 * (i % 3 + 1), totals)

        status, page = get("http://127.0.0.1:%d/ui" % run.ui_port)
        self.assertEqual(status, 200)
        for text in WORKFLOWS + ["Word count per data center", "Reports"]:
            self.assertIn(text, page)

        self.assertEqual(run.stop(), 130, run.output())
        self.assertIn("stopped", run.output())
        self.assertTrue(refuses(run.port), "celos-server still listening")
        self.assertTrue(refuses(run.ui_port), "celos-ui still listening")

        # A second run on the same home keeps the state database and the outputs, and stops by
        # itself after --stop-after seconds.
        first_output = os.path.join(self.home, "data/output/nyc", times[0].strftime("%Y-%m-%d/%H00"),
                                    "part-00000")
        mtime = os.stat(first_output).st_mtime_ns
        again = self.start(stop_after=3)
        status, body = again.api("/slot-state?id=wordcount-nyc&time=" + iso(times[-1]))
        self.assertEqual((status, json.loads(body)["status"]), (200, "SUCCESS"), body)
        self.assertEqual(again.process.wait(timeout=60), 0, again.output())
        self.assertEqual(os.stat(first_output).st_mtime_ns, mtime)
        self.assertTrue(refuses(again.port))

    def test_a_port_in_use_is_refused_with_a_clear_message(self):
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = busy.getsockname()[1]
            result = subprocess.run(
                [SCRIPT, "--no-build", "--home", self.home, "--port", str(port)],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("port %d is in use" % port, result.stderr)

    def test_a_bad_flag_is_refused_with_the_usage(self):
        result = subprocess.run([SCRIPT, "--no-build", "--frobnicate"], stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown argument: --frobnicate", result.stderr)
        self.assertIn("Usage: scripts/quickstart.sh", result.stderr)


if __name__ == "__main__":
    unittest.main()
