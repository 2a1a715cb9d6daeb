"""Backfill plans through the real celos-server (issue 29): bad requests refused naming the
field, a dry run, a plan that runs in the lane live slots leave, pause (across a restart),
resume, done, cancel, 409s, the audit trail, and every slot of the plan run exactly once.

Two daily workflows of command jobs that append "<workflow> <slot>" to runs.log. Steps are
asked at a fixed time (?time=), so the live window is the 7 days before it."""

import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backfill_fixture import daily_workflow, run_lines  # noqa: E402
from server_process import SERVER, CelosServer  # noqa: E402

NOW = "2015-09-13T00:30Z"
START, END = "2015-08-01T00:00Z", "2015-08-11T00:00Z"  # 10 daily slots per workflow

def backfill_slots(workflow):
    return ["2015-08-%02dT00:00:00.000Z" % d for d in range(1, 11)]


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class BackfillTest(unittest.TestCase):
    def setUp(self):
        self.server = CelosServer(start=False, args=["--max-backfill-slots", "100"])
        self.runs = os.path.join(self.server.root, "runs.log")
        for w in ("bf-a", "bf-b"):
            self.server.write_workflow(w + ".js", daily_workflow(w, self.runs))
        self.server.start()

    def tearDown(self):
        self.server.close()

    def post(self, target, status=200):
        r = self.server.post(target)
        self.assertEqual(r.status, status, r)
        return r.json

    def step(self):
        self.post("/scheduler?time=" + NOW)

    def plan(self, plan_id):
        r = self.server.get("/api/v1/backfills/" + plan_id)
        self.assertEqual(r.status, 200, r)
        return r.json

    def run_lines(self):
        return run_lines(self.runs)

    def step_until(self, predicate, what, steps=200):
        for _ in range(steps):
            self.step()
            if predicate():
                return
            time.sleep(0.05)  # the command jobs run on their own
        self.fail("no " + what + " after %d steps" % steps)

    def create(self, query):
        return self.post("/api/v1/backfills?workflows=bf-*&start=%s&end=%s&%s"
                         % (START, END, query))

    def test_bad_requests_are_400s_naming_the_field_and_create_nothing(self):
        cases = {
            "workflows=bf-a,nope&start=%s&end=%s" % (START, END): ["workflows", "nope"],
            "workflows=zz*&start=%s&end=%s" % (START, END): ["workflows", "zz*"],
            "workflows=bf-a&start=%s&end=%s" % (END, START): ["start", "end"],
            "workflows=bf-a&start=2001-01-01T00:00Z&end=%s" % END: ["10 years"],
            "workflows=bf-a&end=%s" % END: ["start"],
            "workflows=bf-a&start=%s&end=%s&reprocess=some" % (START, END): ["reprocess", "some"],
            "workflows=bf-a&start=%s&end=%s&order=random" % (START, END): ["order"],
            "workflows=bf-a&start=%s&end=%s&maxRunning=0" % (START, END): ["maxRunning"],
            "workflows=bf-*&start=2015-08-01T00:00Z&end=2015-12-01T00:00Z": [
                "more than 100 slots"],
        }
        for query, words in cases.items():
            r = self.server.post("/api/v1/backfills?" + query)
            self.assertEqual(r.status, 400, (query, r))
            for word in words:
                self.assertIn(word, r.json["error"], query)
        self.assertEqual(self.server.get("/api/v1/backfills").json, {"backfills": []})
        self.assertEqual(self.server.get("/api/v1/backfills/bf-nope").status, 404)

    def test_a_plan_runs_after_live_slots_pauses_across_a_restart_resumes_and_ends(self):
        dry = self.create("dryRun=true")
        self.assertEqual(dry, {"id": None, "dryRun": True, "slots": 20,
                               "workflows": {"bf-a": 10, "bf-b": 10}})
        self.assertEqual(self.server.get("/api/v1/backfills").json, {"backfills": []})
        plan_id = self.create("maxRunning=2")["id"]
        listed = self.server.get("/api/v1/backfills").json["backfills"]
        self.assertEqual([p["id"] for p in listed], [plan_id])
        self.assertEqual(listed[0]["state"], "running")
        self.assertEqual(listed[0]["slots"]["total"], 20)
        self.assertEqual(listed[0]["slots"]["PENDING"], 20)

        # Some of it runs; then pause: nothing more of it is submitted, even after a restart.
        self.step_until(lambda: any(line[1].startswith("2015-08") for line in self.run_lines()),
                        "backfill slot run")
        self.assertEqual(self.post("/api/v1/backfills/%s/pause" % plan_id)["state"], "paused")
        self.assertEqual(self.server.terminate(), 0)
        self.server.start()
        self.assertEqual(self.plan(plan_id)["state"], "paused")
        self.step()
        submitted = self.backfill_jobs()
        for _ in range(5):
            self.step()
        self.assertEqual(self.backfill_jobs(), submitted)

        self.assertEqual(self.post("/api/v1/backfills/%s/resume" % plan_id)["state"], "running")
        self.step_until(lambda: self.plan(plan_id)["state"] == "done", "done plan")
        done = self.plan(plan_id)
        self.assertEqual(done["slots"]["SUCCESS"], 20, done)
        self.assertEqual(done["slots"]["PENDING"], 0, done)
        self.assertIsNone(done["eta"])
        self.assertGreater(done["ratePerHour"], 0)
        self.assertEqual(self.post("/api/v1/backfills/%s/resume" % plan_id, 409)["error"],
                         "backfill %s is done" % plan_id)

        # Every slot of the plan ran once, after every live slot of its workflow.
        lines = self.run_lines()
        for w in ("bf-a", "bf-b"):
            mine = [slot for wf, slot in lines if wf == w]
            filled = [s for s in mine if s.startswith("2015-08")]
            self.assertEqual(sorted(filled), backfill_slots(w))
            first_backfill = mine.index(filled[0])
            self.assertTrue(all(s.startswith("2015-09") for s in mine[:first_backfill]), mine)
            self.assertEqual(len([s for s in mine if s.startswith("2015-09")]), 7, mine)
            state = self.server.get("/slot-state?id=%s&time=2015-08-01T00:00Z" % w).json
            self.assertEqual(state["backfill"], plan_id)
        with open(os.path.join(self.server.logs, "audit.log")) as f:
            audited = [json.loads(line) for line in f]
        paths = [(a["path"], a["status"]) for a in audited if "backfills" in a["path"]]
        self.assertIn(("/api/v1/backfills", 200), paths)
        self.assertIn(("/api/v1/backfills/%s/pause" % plan_id, 200), paths)
        self.assertIn(("/api/v1/backfills/%s/resume" % plan_id, 409), paths)

    def backfill_jobs(self):
        """The plan's slots that were submitted (have an external id)."""
        n = 0
        for w in ("bf-a", "bf-b"):
            for start, end in ((START, "2015-08-06T00:00Z"), ("2015-08-06T00:00Z", END)):
                r = self.server.get("/api/v1/workflow-slots?id=%s&start=%s&end=%s"
                                    % (w, start, end))
                self.assertEqual(r.status, 200, r)  # at most 7 days a call
                n += len([s for s in r.json["slots"] if s["externalID"]])
        return n

    def test_cancel_lets_running_slots_finish_and_starts_no_new_one(self):
        plan_id = self.create("maxRunning=1&order=newest")["id"]
        self.step_until(lambda: self.backfill_jobs() > 0, "backfill job")
        cancelled = self.post("/api/v1/backfills/%s/cancel" % plan_id)
        self.assertEqual(cancelled["state"], "cancelled")
        submitted = self.backfill_jobs()
        self.assertEqual(submitted, 1)
        for _ in range(8):
            self.step()
            time.sleep(0.05)
        self.assertEqual(self.backfill_jobs(), submitted)
        self.assertIsNotNone(self.plan(plan_id)["finished"])
        self.assertEqual(self.post("/api/v1/backfills/%s/cancel" % plan_id, 409)["error"],
                         "backfill %s is cancelled" % plan_id)
        # The newest slot went first.
        self.assertEqual([s for w, s in self.run_lines() if s.startswith("2015-08")],
                         ["2015-08-10T00:00:00.000Z"])


if __name__ == "__main__":
    unittest.main()
