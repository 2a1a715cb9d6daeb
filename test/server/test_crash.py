"""Crash consistency (issue 11, SPEC §5, §15, §16): celos-server with 50 workflows of command
jobs, killed with SIGKILL at random moments of its steps and restarted, again and again. At the
end, with a last clean start:

- every state file parses (no torn or unparsable file) and has a known status;
- no temporaries of interrupted writes are left under state/, rerun/, paused/;
- every job that started belongs to a recorded slot: its directory is the slot's recorded
  external id (no job runs that the state does not know of);
- no attempt started twice: each job appends a line when it starts, per external id at most one;
- no slot is FAILURE whose job exited 0;
- a backfill plan (issue 29) created before the first kill is still there, its record parses, and
  the slots it took carry its id (their jobs are held to the checks above like any other).

CELOS_CRASH_KILLS (default 12) sets the number of kills, CELOS_CRASH_SEED the random seed
(printed on failure). bench/crash/run_crash.sh runs it with 200 kills. CELOS_CRASH_EVENTS=1
(ctest celos_crash_events_e2e) runs the server with --autoSchedule 3600, so that event-driven
partial steps (issue 28: slots that became READY, jobs' ends) run at the wall clock's now beside
the test's own steps and are killed too; the server is then stopped before the checks, since
events would go on submitting while they read."""

import datetime
import json
import os
import random
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import CelosServer, poll  # noqa: E402
from e2e_util import wait_for_command_jobs  # noqa: E402 (test/e2e_util.py)

WORKFLOWS = 50
KILLS = int(os.environ.get("CELOS_CRASH_KILLS", "12"))
EVENTS = os.environ.get("CELOS_CRASH_EVENTS") == "1"
SEED = int(os.environ.get("CELOS_CRASH_SEED", str(random.randrange(1 << 30))))
START = datetime.datetime(2015, 9, 13, 0, 0)
STATUSES = {"WAITING", "READY", "RUNNING", "SUCCESS", "FAILURE", "WAIT_TIMEOUT", "KILLED"}

# Each job appends "start <external id>" before its work and "exit <external id> <code>" at the
# end; its working directory is its job directory, named after its external id. Every fifth
# workflow's jobs fail (exit 3).
WORKFLOW = """celos.defineWorkflow({id: "w%(n)02d", startTime: "2015-09-13T00:00Z",
    schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
    trigger: celos.alwaysTrigger(),
    externalService: celos.commandExternalService(
        'id=$(basename "$PWD"); echo "start $id" >> %(runs)s; sleep 0.02; '
        + 'echo "exit $id %(code)d" >> %(runs)s; exit %(code)d')});
"""


def stamp(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class CrashTest(unittest.TestCase):
    def setUp(self):
        self.server = CelosServer(start=False, args=["--autoSchedule", "3600"] if EVENTS else [])
        self.runs = os.path.join(self.server.root, "runs.log")
        for n in range(WORKFLOWS):
            self.server.write_workflow("w%02d.js" % n, WORKFLOW % {
                "n": n, "runs": self.runs, "code": 3 if n % 5 == 4 else 0})
        self.clock = START + datetime.timedelta(minutes=30)
        self.random = random.Random(SEED)
        self.plan_id = None

    def tearDown(self):
        self.server.close()

    def step_until_killed(self, stop, stepped):
        """Steps one hour after another until the server dies under it."""
        while not stop.is_set():
            self.clock += datetime.timedelta(hours=1)
            try:
                self.server.post("/scheduler?time=" + stamp(self.clock), timeout=60)
            except OSError:
                return
            stepped.set()

    def crash_once(self):
        self.server.start()
        if self.plan_id is None:  # slots that never ran, taken over by a plan as the clock moves
            r = self.server.post("/api/v1/backfills?workflows=w0*,w1*&start=%s&end=%s&maxRunning=8"
                                 % (stamp(START), stamp(START + datetime.timedelta(days=1))))
            self.assertEqual(r.status, 200, r)
            self.plan_id = r.json["id"]
        stop, stepped = threading.Event(), threading.Event()
        stepper = threading.Thread(target=self.step_until_killed, args=(stop, stepped))
        stepper.start()
        # After a first step (its slots READY, earlier jobs' statuses asked), at a random moment
        # of the following steps: submissions, RUNNING records, starts, status writes.
        self.assertTrue(stepped.wait(60), "no step finished")
        time.sleep(self.random.uniform(0.0, 0.5))
        self.server.process.send_signal(signal.SIGKILL)
        self.server.process.wait()
        stop.set()
        stepper.join(60)
        self.server.stderr.close()

    def test_state_survives_sigkill_at_random_moments(self):
        for _ in range(KILLS):
            self.crash_once()
        self.server.start()  # a clean start: removes the temporaries of the last crash
        self.settle()
        with self.subTest(seed=SEED):
            slots = self.check_state_files()
            self.check_no_temporaries()
            runs = self.read_runs()
            self.check_jobs_belong_to_slots(slots)
            self.check_no_attempt_started_twice(runs)
            self.check_no_failure_of_a_job_that_exited_0(slots, runs)
            self.check_backfill(slots)
        if not EVENTS:
            self.assertEqual(self.server.terminate(), 0)

    # ---- the end

    def settle(self):
        """Waits for the jobs that started to end, then steps once so that the state knows."""
        wait_for_command_jobs(self.server.db)
        self.assertEqual(self.server.post("/scheduler?time=" + stamp(self.clock)).status, 200)
        if EVENTS:  # the jobs the events submitted meanwhile end too (they are recorded)
            self.assertEqual(self.server.terminate(), 0)
            wait_for_command_jobs(self.server.db)

    def check_state_files(self):
        """{(workflow, day, time): record}; fails on any file that does not parse."""
        slots = {}
        root = os.path.join(self.server.db, "state")
        for dirpath, _, files in os.walk(root):
            for name in files:
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    data = f.read()
                try:
                    record = json.loads(data.decode("utf-8"))
                except ValueError as e:
                    self.fail("torn or unparsable state file %s (%r): %s" % (path, data[:80], e))
                self.assertIn(record.get("status"), STATUSES, path)
                workflow, day = os.path.relpath(dirpath, root).split(os.sep)
                slots[(workflow, day, name)] = record
        self.assertTrue(slots, "no slot was ever written: the kills came too early")
        return slots

    def check_backfill(self, slots):
        with open(os.path.join(self.server.db, "backfills", self.plan_id)) as f:
            record = json.load(f)  # whole: written atomically
        self.assertEqual(record["id"], self.plan_id)
        self.assertIn(record["state"], ("running", "done"))
        owned = [k for k, v in slots.items() if "backfill" in v]
        self.assertTrue(all(slots[k]["backfill"] == self.plan_id for k in owned), owned)
        self.assertTrue(all(k[0][:2] in ("w0", "w1") for k in owned), owned)

    def check_no_temporaries(self):
        for tree in ("state", "rerun", "paused", "backfills"):
            for dirpath, _, files in os.walk(os.path.join(self.server.db, tree)):
                leftovers = [f for f in files if f.startswith(".") and ".tmp-" in f]
                self.assertEqual(leftovers, [], dirpath)

    def read_runs(self):
        """{external id: {"starts": n, "exit": code or None}}"""
        runs = {}
        if not os.path.exists(self.runs):
            return runs
        with open(self.runs) as f:
            for line in f:
                words = line.split()
                run = runs.setdefault(words[1], {"starts": 0, "exit": None})
                if words[0] == "start":
                    run["starts"] += 1
                else:
                    run["exit"] = int(words[2])
        return runs

    def check_jobs_belong_to_slots(self, slots):
        root = os.path.join(self.server.db, "jobs")
        for dirpath, _, files in os.walk(root):
            if "started" not in files:
                continue  # submitted but never recorded: never started (SPEC §16)
            workflow, day, slot_time, external_id = os.path.relpath(dirpath, root).split(os.sep)
            record = slots.get((workflow, day, slot_time))
            self.assertIsNotNone(record, "job %s started for an unrecorded slot" % dirpath)
            self.assertEqual(record.get("externalID"), external_id,
                             "job %s started but the slot records %s" % (dirpath, record))

    def check_no_attempt_started_twice(self, runs):
        twice = {job: run for job, run in runs.items() if run["starts"] > 1}
        self.assertEqual(twice, {}, "attempts started more than once")

    def check_no_failure_of_a_job_that_exited_0(self, slots, runs):
        for key, record in slots.items():
            if record["status"] != "FAILURE":
                continue
            run = runs.get(record.get("externalID"))
            self.assertFalse(run and run["exit"] == 0,
                             "slot %s is FAILURE but its job exited 0" % (key,))


if __name__ == "__main__":
    unittest.main()
