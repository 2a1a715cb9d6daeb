"""Data checks in bulk and with back-off (issue 28), celos-server against the fake WebHDFS name
node: the waiting paths of one directory cost one LISTSTATUS per step (a missing directory one
404), a slot whose data stays missing is not asked again until its back-off ends, /trigger-status
says when that is, and a step of the workflow (what an event makes) checks at once."""

import datetime
import os
import shutil
import sys
import tempfile
import unittest
import urllib.parse

from fake_process import FakeServer
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from server_process import SERVER, CelosServer  # noqa: E402

WORKFLOW = """
celos.defineWorkflow({
    "id": "wf",
    "schedule": %(schedule)s,
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.hdfsCheckTrigger("%(path)s", "webhdfs://127.0.0.1:%(nn)d"),
    "externalService": celos.oozieExternalService({"oozie.wf.application.path": "/app"},
                                                  "http://127.0.0.1:9/oozie"),
    "startTime": "%(start)s"
});
"""

NOW = "2015-09-13T06:30Z"  # slots 00:00 to 06:00 of 2015-09-13 wait


@unittest.skipUnless(SERVER and os.path.exists(SERVER), "celos-server is not built")
class BulkChecksTest(unittest.TestCase):
    def start(self, schedule, path, start, args=()):
        self.root = tempfile.mkdtemp(prefix="celos-bulk-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.hdfs = FakeServer("fake_webhdfs.py", "--root", self.root)
        self.addCleanup(self.hdfs.stop)
        text = WORKFLOW % {"schedule": schedule, "path": path, "nn": self.hdfs.port,
                           "start": start}
        self.server = CelosServer({"wf.js": text}, args=list(args))
        self.addCleanup(self.server.close)

    def touch(self, path):
        local = os.path.join(self.root, path.lstrip("/"))
        os.makedirs(os.path.dirname(local), exist_ok=True)
        open(local, "w").close()

    def step(self, query=""):
        """One step; the WebHDFS requests it made, as (op, path)."""
        self.hdfs.control("/_control/reset")
        reply = self.server.post("/scheduler" + query, timeout=120)
        self.assertEqual(reply.status, 200, reply)
        return [(r["op"], r["path"]) for r in self.hdfs.control("/_control/requests", "GET")]

    def statuses(self):
        slots = self.server.get("/workflow-slots?id=wf&end=2015-09-13T07:00Z").json["slots"]
        return {s["time"][11:16]: s["status"] for s in slots}

    def test_the_waiting_paths_of_a_directory_take_one_liststatus(self):
        self.start("celos.hourlySchedule()", "/in/${year}-${month}-${day}/${hour}00",
                   "2015-09-13T00:00Z")
        at = "?time=" + urllib.parse.quote(NOW)
        self.assertEqual(self.step(at), [("LISTSTATUS", "/in/2015-09-13")])  # 404: none there
        self.assertEqual(set(self.statuses().values()), {"WAITING"})
        self.touch("/in/2015-09-13/0300")
        self.assertEqual(self.step(at), [("LISTSTATUS", "/in/2015-09-13")])
        statuses = self.statuses()
        self.assertEqual(statuses["03:00"], "READY")  # seen in the same step as one by one
        self.assertEqual({t: s for t, s in statuses.items() if t != "03:00"},
                         {"%02d:00" % h: "WAITING" for h in range(7) if h != 3})
        self.assertIn("7 data checks (1 calls, 6 saved: 6 by listing, 0 by back-off)",
                      self.server.stderr_text())

    def test_a_slot_that_keeps_waiting_backs_off_until_a_step_of_its_workflow(self):
        # Daily slots of the last three days at the wall clock (steps without ?time= and
        # /trigger-status run at the server's now); a back-off step of 600 s outlasts the test.
        today = datetime.datetime.now(datetime.timezone.utc).date()
        start = (today - datetime.timedelta(days=2)).strftime("%Y-%m-%dT00:00Z")
        self.start('celos.cronSchedule("0 0 0 * * ?")', "/in/${year}${month}${day}", start,
                   ["--data-check-backoff", "600"])
        self.assertEqual(self.step(), [("LISTSTATUS", "/in")])
        self.assertEqual(self.step(), [])  # all three back off
        self.assertRegex(self.server.stderr_text(),
                         r"0 data checks \(0 calls, 3 saved: 0 by listing, 3 by back-off\)")
        slot = today.strftime("%Y-%m-%dT00:00Z")
        status = self.server.get("/trigger-status?id=wf&time=" + urllib.parse.quote(slot)).json
        self.assertFalse(status["ready"])
        next_check = datetime.datetime.strptime(status["nextCheckAt"], "%Y-%m-%dT%H:%M:%S.%fZ")
        self.assertGreater(next_check.replace(tzinfo=datetime.timezone.utc),
                           datetime.datetime.now(datetime.timezone.utc))

        self.touch(today.strftime("/in/%Y%m%d"))
        self.assertEqual(self.step(), [])  # the data is there, the slot still backs off
        self.assertEqual(self.newest(today), "WAITING")
        # A step of the workflow, as an announcement, a file or an operator makes: checked now.
        self.assertEqual(self.step("?ids=wf"), [("LISTSTATUS", "/in")])
        self.assertEqual(self.newest(today), "READY")

    def newest(self, today):
        newest = self.server.get("/workflow-slots?id=wf").json["slots"][0]
        self.assertEqual(newest["time"][:10], today.isoformat())
        return newest["status"]


if __name__ == "__main__":
    unittest.main()
