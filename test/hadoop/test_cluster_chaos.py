"""Chaos (SPEC §11, §16): three celos-server nodes on one private PostgreSQL, stepping every
second against the Oozie fake, while the leader is killed with SIGKILL again and again for at
most a minute. Afterwards no Oozie job was started twice for one slot (jobs counted per
celosWorkflowName) and no slot is lost: every slot of the window ends SUCCESS."""

import datetime
import json
import os
import random
import shutil
import sys
import tempfile
import time
import unittest

from fake_process import FakeServer, request
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
from cluster_process import Cluster  # noqa: E402
from e2e_util import poll  # noqa: E402
from server_process import SERVER  # noqa: E402

LEASE = 2
CHAOS_SECONDS = int(os.environ.get("CELOS_CHAOS_SECONDS", "45"))
SLOTS = 24


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class ClusterChaosTest(unittest.TestCase):
    def setUp(self):
        os.environ["HADOOP_USER_NAME"] = "celos"  # Oozie wants user.name (the nodes inherit it)
        self.dir = tempfile.mkdtemp(prefix="celos-chaos-")
        self.oozie = FakeServer("fake_oozie.py", "--state", os.path.join(self.dir, "oozie.json"))
        request("POST", self.oozie.url("/_control/start-status?status=SUCCEEDED"))
        now = datetime.datetime.now(datetime.timezone.utc).replace(minute=0, second=0,
                                                                  microsecond=0)
        self.start = now - datetime.timedelta(hours=SLOTS - 1)
        self.workflow = """
var CELOS_DEFAULT_OOZIE = "%s";
celos.defineWorkflow({
    "id": "chaos",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(3),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.oozieExternalService({"oozie.wf.application.path": "/chaos"}),
    "startTime": "%s"
});
""" % (self.oozie.url("/oozie"), self.start.strftime("%Y-%m-%dT%H:%MZ"))
        try:
            self.cluster = Cluster(("a", "b", "c"), LEASE, "chaos",
                                   workflows={"chaos.js": self.workflow},
                                   args=["--autoSchedule", "1"], shared_jobs=False)
        except BaseException:
            self.stop_oozie()
            raise
        self.nodes = self.cluster.nodes

    def stop_oozie(self):
        self.oozie.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def tearDown(self):
        self.cluster.close()
        self.stop_oozie()

    def jobs(self):
        status, _, body = request("GET", self.oozie.url("/_control/jobs"))
        return json.loads(body)

    def test_killing_the_leader_repeatedly_never_starts_a_slot_twice_nor_loses_one(self):
        rng = random.Random(13)
        deadline = time.monotonic() + CHAOS_SECONDS
        kills = 0
        while time.monotonic() < deadline:
            leader = poll(self.cluster.leader_id, "a leader", timeout=LEASE + 10)
            time.sleep(rng.uniform(0.2, 2.0))
            victim = self.cluster.kill(leader)
            victim.close()
            kills += 1
            self.cluster.start_node(leader, port=victim.port)
        self.assertGreater(kills, 3)

        def all_succeeded():
            r = self.nodes["a"].get("/workflow-slots?id=chaos")
            # The SLOTS hours from the start: a run that crosses an hour boundary has one
            # slot more in the window, which is not this test's.
            end = self.start + datetime.timedelta(hours=SLOTS)
            slots = [s for s in r.json["slots"]
                     if self.start.strftime("%Y-%m-%dT%H:%M:%S") <= s["time"]
                     < end.strftime("%Y-%m-%dT%H:%M:%S")]
            return len(slots) == SLOTS and all(s["status"] == "SUCCESS" for s in slots)
        try:
            poll(all_succeeded, "every slot to end SUCCESS", timeout=60, interval=0.5)
        except AssertionError:
            r = self.nodes["a"].get("/workflow-slots?id=chaos")
            raise AssertionError("not every slot ended SUCCESS after %d kills: %s; jobs %s; "
                                 "cluster %s" % (kills, r.body, self.jobs(),
                                                 self.nodes["a"].get("/api/v1/cluster").body))

        started = {}
        submitted = {}
        for job in self.jobs().values():
            name = job.get("properties", {}).get("celosWorkflowName", job.get("appName"))
            submitted[name] = submitted.get(name, 0) + 1
            if job["status"] != "PREP":
                started[name] = started.get(name, 0) + 1
        twice = {n: c for n, c in started.items() if c > 1}
        self.assertEqual(twice, {}, "slots started twice (after %d kills)" % kills)
        window = {"chaos@" + (self.start + datetime.timedelta(hours=i)).strftime("%Y-%m-%dT%H:%MZ")
                  for i in range(SLOTS)}
        self.assertEqual(window - set(started), set(), "slots never started")
        print("chaos: %d kills, %d slots, %d submissions, %d started"
              % (kills, SLOTS, sum(submitted.values()), sum(started.values())))
