"""A backfill plan across a change of leader (issue 29): three celos-server nodes on one private
PostgreSQL; the leader is killed (kill -9) while a backfill runs. The plan carries on under the
new leader and ends; every slot of it started exactly once (none twice, none lost).

The jobs (command jobs on shared storage) append "<workflow> <slot>" to runs.log when they
start. Steps are asked at a fixed time, of whichever node answers (standbys forward them)."""

import collections
import os
import time
import unittest

from backfill_fixture import daily_workflow, run_lines
from cluster_process import Cluster
from server_process import SERVER
from e2e_util import poll  # noqa: E402 (put on the path by cluster_process)

LEASE = 3
NOW = "2015-09-13T00:30Z"
START, END = "2015-08-01T00:00Z", "2015-09-01T00:00Z"  # 31 daily slots per workflow


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class BackfillLeaderChangeTest(unittest.TestCase):
    def setUp(self):
        self.cluster = Cluster((), LEASE, "backfill")
        self.runs = os.path.join(self.cluster.shared, "runs.log")
        for w in ("bf-a", "bf-b"):
            self.cluster.workflows[w + ".js"] = daily_workflow(w, self.runs, 3, "; sleep 0.2")
        self.cluster.start(("a", "b", "c"))

    def tearDown(self):
        self.cluster.close()

    def any_node(self):
        return next(iter(self.cluster.nodes.values()))

    def step(self):
        """One step through any node; a node that answers 503 (no leader yet) is fine."""
        try:
            self.any_node().post("/scheduler?time=" + NOW, timeout=30)
        except OSError:
            pass

    def plan(self, plan_id):
        r = self.any_node().get("/api/v1/backfills/" + plan_id)
        self.assertEqual(r.status, 200, r)
        return r.json

    def backfill_runs(self):
        return [line for line in run_lines(self.runs) if line[1].startswith("2015-08")]

    def step_until(self, predicate, what, timeout=240):
        def stepped():
            self.step()
            time.sleep(0.1)
            return predicate()
        poll(stepped, what, timeout=timeout, interval=0.01)

    def test_leader_killed_during_a_backfill_no_slot_twice_none_lost(self):
        first = self.cluster.leader()
        r = self.any_node().post("/api/v1/backfills?workflows=bf-*&start=%s&end=%s&maxRunning=4"
                                 % (START, END))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["slots"], 62)
        plan_id = r.json["id"]
        self.step_until(lambda: len(self.backfill_runs()) >= 8, "a part of the backfill run")
        self.cluster.kill(first["id"]).close()
        self.cluster.leader(other_than=first["id"])
        self.step_until(lambda: self.plan(plan_id)["state"] == "done", "the backfill done")
        counts = collections.Counter(self.backfill_runs())
        twice = {slot: n for slot, n in counts.items() if n > 1}
        self.assertEqual(twice, {})
        expected = {(w, "2015-08-%02dT00:00:00.000Z" % d) for w in ("bf-a", "bf-b")
                    for d in range(1, 32)}
        self.assertEqual(set(counts), expected)
        done = self.plan(plan_id)
        self.assertEqual(done["slots"]["SUCCESS"], 62, done)


if __name__ == "__main__":
    unittest.main()
