"""celos.serviceLimits through the real celos-server (issue 29): with submitsPerSecond 3 on the
fake Oozie's endpoint, the fake never receives more than 3 submissions in one second, however
fast the steps come, while every READY slot is still submitted in the end; the held-back picks
are counted in /metrics.

Four hourly workflows with five slots each (the last five hours), ten at a time: without the
limit the first submitting step sends all twenty at once. Steps run on the server's clock (no
?time=), as fast as the test can ask for them."""

import datetime
import json
import os
import sys
import time
import unittest
import urllib.parse

from fake_process import FakeServer
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from server_process import SERVER, CelosServer  # noqa: E402

LIMIT = 3
WORKFLOWS = 4

WORKFLOW = """celos.importDefaults("limits");
celos.defineWorkflow({
    id: "limited-%(n)d",
    schedule: celos.hourlySchedule(),
    schedulingStrategy: celos.serialSchedulingStrategy(10),
    trigger: celos.alwaysTrigger(),
    externalService: celos.oozieExternalService(
        {"oozie.wf.application.path": "/app/%(n)d", "user.name": "celos"}, "%(oozie)s"),
    startTime: "%(start)s"
});
"""


@unittest.skipUnless(SERVER and os.path.exists(SERVER), "celos-server is not built")
class ServiceLimitsTest(unittest.TestCase):
    def test_submissions_per_second_at_the_fake_never_exceed_the_limit(self):
        oozie = FakeServer("fake_oozie.py")
        self.addCleanup(oozie.stop)
        url = oozie.url("/oozie")
        start = (datetime.datetime.now(datetime.timezone.utc).replace(minute=0, second=0,
                                                                      microsecond=0)
                 - datetime.timedelta(hours=4)).strftime("%Y-%m-%dT%H:%MZ")
        defaults = {"limits.js": "celos.serviceLimits(%s, {submitsPerSecond: %d});\n"
                    % (json.dumps("oozie " + url), LIMIT)}
        workflows = {"limited-%d.js" % n: WORKFLOW % {"n": n, "oozie": url, "start": start}
                     for n in range(WORKFLOWS)}
        server = CelosServer(workflows, defaults=defaults)
        self.addCleanup(server.close)
        expected = WORKFLOWS * 5
        deadline = time.monotonic() + 120
        jobs = {}
        while len(jobs) < expected and time.monotonic() < deadline:
            reply = server.post("/scheduler", timeout=60)
            self.assertEqual(reply.status, 200, reply)
            jobs = oozie.control("/_control/jobs", "GET")
            time.sleep(0.02)
        self.assertGreaterEqual(len(jobs), expected, "not every slot was submitted")

        per_second = {}
        for job in jobs.values():
            second = int(job["submittedAt"])
            per_second[second] = per_second.get(second, 0) + 1
        self.assertLessEqual(max(per_second.values()), LIMIT, per_second)
        print("\nsubmissions per second at the fake: %s (max %d, limit %d)"
              % (sorted(per_second.values(), reverse=True), max(per_second.values()), LIMIT))

        metrics = server.get("/metrics").body
        metrics = metrics.decode() if isinstance(metrics, bytes) else metrics
        label = 'celos_service_limit_deferred_total{endpoint="oozie %s",limit="submitsPerSecond"}' % url
        lines = [line for line in metrics.splitlines() if line.startswith(label + " ")]
        self.assertEqual(len(lines), 1, metrics)
        self.assertGreater(int(lines[0].split()[-1]), 0)


if __name__ == "__main__":
    unittest.main()
