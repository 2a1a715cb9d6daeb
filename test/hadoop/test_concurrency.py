"""celos-server makes a step's external calls concurrently (SPEC §10): against the Oozie and
WebHDFS fakes with latency switched on, the calls of different workflows are in flight
together, at most --io-concurrency of them, and the step ends with the same slot states as
with --io-concurrency 1 (one call at a time)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

from fake_process import FakeServer
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from server_process import SERVER, CelosServer  # noqa: E402

WORKFLOWS = 12
NOW = "2015-09-12T21:30Z"
SLOT = "2015-09-12T21:00:00.000Z"

WORKFLOW = """
celos.defineWorkflow({
    "id": "wf-%(n)02d",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.hdfsCheckTrigger("/in/%(n)02d/${hour}00/_READY", "webhdfs://127.0.0.1:%(nn)d"),
    "externalService": celos.oozieExternalService(
        {"oozie.wf.application.path": "/app/%(n)02d", "user.name": "celos"}, "%(oozie)s"),
    "startTime": "2015-09-12T21:00Z"
});
"""


@unittest.skipUnless(SERVER and os.path.exists(SERVER), "celos-server is not built")
class ConcurrentCallsTest(unittest.TestCase):
    def run_story(self, concurrency):
        """Steps 12 workflows through READY, RUNNING and SUCCESS; returns the final slots and
        the largest number of calls each fake saw in flight."""
        root = tempfile.mkdtemp(prefix="celos-concurrency-")
        self.addCleanup(shutil.rmtree, root, True)
        hdfs = FakeServer("fake_webhdfs.py", "--root", root, "--latency-ms", "150")
        oozie = FakeServer("fake_oozie.py", "--latency-ms", "150")
        self.addCleanup(hdfs.stop)
        self.addCleanup(oozie.stop)
        self.assertEqual(hdfs.control("/_control/stats", "GET")["latencyMs"], 150)
        workflows = {"wf%02d.js" % n: WORKFLOW % {"n": n, "nn": hdfs.port,
                                                   "oozie": oozie.url("/oozie")}
                     for n in range(WORKFLOWS)}
        server = CelosServer(workflows, args=["--io-concurrency", str(concurrency)])
        self.addCleanup(server.close)
        # The data is there for every slot: the first step sees all triggers ready.
        for n in range(WORKFLOWS):
            self.make_ready(root, n)
        self.step(server)
        hdfs_stats = hdfs.control("/_control/stats", "GET")
        self.step(server)  # submits and starts every slot
        jobs = oozie.control("/_control/jobs", "GET")
        self.assertEqual(len(jobs), WORKFLOWS)
        oozie.control("/_control/status?status=SUCCEEDED")
        self.step(server)  # asks the statuses
        oozie_stats = oozie.control("/_control/stats", "GET")
        slots = {}
        for n in range(WORKFLOWS):
            q = urllib.parse.urlencode({"id": "wf-%02d" % n, "time": SLOT})
            reply = server.get("/slot-state?" + q)
            self.assertEqual(reply.status, 200, reply)
            slots["wf-%02d" % n] = reply.json["status"]
        log = server.stderr_text()
        return slots, hdfs_stats["maxInFlight"], oozie_stats["maxInFlight"], log

    @staticmethod
    def make_ready(root, n):
        path = os.path.join(root, "in", "%02d" % n, "2100")
        os.makedirs(path, exist_ok=True)
        open(os.path.join(path, "_READY"), "w").close()

    def step(self, server):
        reply = server.post("/scheduler?time=" + urllib.parse.quote(NOW), timeout=120)
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(json.loads(reply.body).get("errors", []), [], reply)

    def test_calls_overlap_and_the_results_are_those_of_one_call_at_a_time(self):
        concurrent, hdfs_max, oozie_max, log = self.run_story(8)
        self.assertEqual(set(concurrent.values()), {"SUCCESS"}, concurrent)
        self.assertGreaterEqual(hdfs_max, 2, "data checks never overlapped")
        self.assertLessEqual(hdfs_max, 8)
        self.assertGreaterEqual(oozie_max, 2, "Oozie calls never overlapped")
        self.assertLessEqual(oozie_max, 8)
        self.assertIn("8 calls at a time", log)
        self.assertRegex(log, r"external calls \(0 failed, slowest \d+ ms")

        serial, hdfs_max, oozie_max, _ = self.run_story(1)
        self.assertEqual(serial, concurrent)
        self.assertEqual((hdfs_max, oozie_max), (1, 1))

    def test_a_bad_io_concurrency_or_timeout_is_refused_at_start_up(self):
        for args in (["--io-concurrency", "0"], ["--io-concurrency", "2000"],
                     ["--io-concurrency", "many"], ["--io-timeout", "0"]):
            server = CelosServer({}, args=args, start=False)
            self.addCleanup(server.close)
            done = subprocess.run(server.command(), capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 2, args)
            self.assertIn(args[0], done.stderr)


if __name__ == "__main__":
    unittest.main()
