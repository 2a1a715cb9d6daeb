"""Exactly once across a crash (SPEC §16, issue 30): celos-server is killed with SIGKILL in the
middle of a step that creates 100 Kubernetes Jobs (the fake answers after 20 ms each), then
started again on the same state. Counted at the fake: exactly one Job per slot (the suspended
Jobs the crash left are adopted, not created again), each resumed exactly once (one PATCH, one
pod), and every slot SUCCESS."""

import collections
import json
import os
import sys
import threading
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
from e2e_util import poll  # noqa: E402
from kube_util import TOKEN, FakeKube, temporary_directory  # noqa: E402
from server_process import CelosServer  # noqa: E402
from test_e2e_kubernetes import kubeconfig  # noqa: E402

SLOTS = 100
START = "2015-09-08T00:00Z"
NOW = "2015-09-12T03:59:30Z"  # 100 hourly slots from START
JOBS = "/apis/batch/v1/namespaces/team/jobs"


def workflow(config):
    return """celos.defineWorkflow({
  id: "many",
  schedule: celos.hourlySchedule(),
  schedulingStrategy: celos.serialSchedulingStrategy(%d),
  trigger: celos.alwaysTrigger(),
  externalService: celos.kubernetesExternalService({kubeconfig: %s, image: "debian:12",
                                                    command: ["true"]}),
  startTime: "%s",
  maxRetryCount: 0
});
""" % (SLOTS, json.dumps(config), START)


class CrashDuringSubmit(unittest.TestCase):
    def setUp(self):
        directory = temporary_directory(self)
        self.fake = FakeKube(directory, "--latency-ms", "20")
        self.addCleanup(self.fake.stop)
        self.server = CelosServer({"many.js": workflow(kubeconfig(directory, self.fake.url, TOKEN,
                                                                  self.fake.cert))})
        self.addCleanup(self.server.close)

    def step(self):
        return self.server.post("/scheduler?time=" + urllib.parse.quote(NOW), timeout=120)

    def requests(self):
        return self.fake.request("GET", "/_control/requests", token=False)[2]

    def slots(self):
        reply = self.server.get("/workflow-slots?id=many&end=" + urllib.parse.quote(NOW))
        return reply.json["slots"] if reply.status == 200 else []

    def test_no_job_is_resumed_twice_and_none_is_lost(self):
        self.assertEqual(self.step().status, 200)  # all READY
        self.assertEqual(collections.Counter(s["status"] for s in self.slots()), {"READY": SLOTS})
        def doomed_step():
            try:
                self.step()
            except OSError:
                pass  # the server dies under it
        threading.Thread(target=doomed_step, daemon=True).start()
        poll(lambda: sum(r["method"] == "POST" for r in self.requests()) >= SLOTS // 3,
             "a third of the Jobs to be created", timeout=60)
        self.server.process.kill()  # SIGKILL in the middle of the submits
        self.server.process.wait()
        self.server.stderr.close()
        created = len(self.fake.objects()["jobs"])
        self.assertLess(created, SLOTS)
        self.server.start()

        def all_done():
            self.assertEqual(self.step().status, 200)
            return all(s["status"] == "SUCCESS" for s in self.slots())
        poll(all_done, "every slot to succeed", timeout=240, interval=0.5)

        slots = self.slots()
        self.assertEqual(len(slots), SLOTS)
        jobs = self.fake.objects()["jobs"]
        self.assertEqual(len(jobs), SLOTS)  # one Job per slot: nothing created twice
        self.assertEqual(sorted("team/" + s["externalID"].split("/")[1] for s in slots),
                         sorted(jobs))
        self.assertTrue(all(s["externalID"].endswith("-1") for s in slots))
        patches = collections.Counter(r["path"] for r in self.requests() if r["method"] == "PATCH")
        self.assertEqual(sorted(patches), sorted(JOBS + "/" + k.split("/")[1] for k in jobs))
        self.assertEqual(set(patches.values()), {1})  # each resumed exactly once
        pods = collections.Counter(p["metadata"]["labels"]["job-name"]
                                   for p in self.fake.objects()["pods"].values())
        self.assertEqual(len(pods), SLOTS)
        self.assertEqual(set(pods.values()), {1})
        self.assertIn("adopting the suspended Kubernetes Job", self.server.stderr_text())


if __name__ == "__main__":
    unittest.main()
