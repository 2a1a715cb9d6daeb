"""OpenLineage (issue 32) end to end: the real celos-server with command jobs and datasets sends
RunEvents to a fake collector (collector.py) or writes them to a file; every event is checked
against the standard's JSON schema, and per run there is exactly one START and one final event:

- the file transport, with a success, a failure and its retry, and a kill;
- an outage of the collector, first failing (HTTP 503), then down (connection refused), then
  back: nothing lost, nothing sent twice differently. The issue asks for 60 s; the sender's
  behaviour does not depend on the outage's length (it retries the same oldest event with
  back-off, the spool keeps the rest, the step never waits for it), so the outage here is a
  count of refused POSTs and a few seconds of a closed socket, long enough for several retries;
- a collector that rejects one run's events (HTTP 400): dropped after 3 tries and counted;
- kill -9 of celos-server at random moments of its steps (CELOS_LINEAGE_KILLS, default 6);
- the runs of a backfill plan's slots carry a parent facet naming the plan;
- a malformed --openlineage-url stops the start naming the flag."""

import datetime
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
sys.path.insert(0, HERE)
from server_process import CelosServer  # noqa: E402
from e2e_util import poll, wait_for_command_jobs  # noqa: E402
from collector import Collector, EventSchema, runs_of  # noqa: E402

KILLS = int(os.environ.get("CELOS_LINEAGE_KILLS", "6"))
SEED = int(os.environ.get("CELOS_LINEAGE_SEED", str(random.randrange(1 << 30))))
START = datetime.datetime(2015, 9, 13, 0, 0)
DATASETS = """
var RAW = celos.dataset("raw", {"path": "%(d)s/raw/${year}${month}${day}/${hour}"});
var OUT = celos.dataset("out", {"path": "%(d)s/out/${year}${month}${day}/${hour}"});
"""
# A command job that succeeds (code 0), fails (3), or runs until killed (sleep).
WORKFLOW = """importDefaults("datasets");
celos.defineWorkflow({id: "%(id)s", startTime: "2015-09-13T00:00Z",
    schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
    trigger: celos.alwaysTrigger(), maxRetryCount: %(retries)d,
    inputs: [RAW], outputs: [%(outputs)s],
    externalService: celos.commandExternalService(%(command)s)});
"""


def stamp(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def read_lines(path):
    """The events of the file transport's file so far."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


class LineageServer(CelosServer):
    """celos-server with the datasets defaults and the given workflows {id: (command, retries)};
    "ok" and "w00" write OUT."""

    def __init__(self, workflows, args):
        super().__init__(start=False, args=args)
        self.data = os.path.join(self.root, "data")
        with open(os.path.join(self.defaults, "datasets.js"), "w") as f:
            f.write(DATASETS % {"d": self.data})
        for wid, (command, retries) in sorted(workflows.items()):
            self.write_workflow(wid + ".js", WORKFLOW % {
                "id": wid, "retries": retries, "command": json.dumps(command),
                "outputs": "OUT" if wid in ("ok", "w00") else ""})  # one producer of OUT

    def step(self, t, ids=None):
        reply = self.post("/scheduler?time=" + stamp(t) + ("&ids=" + ids if ids else ""),
                          timeout=60)
        assert reply.status == 200, reply
        return reply

    def metric(self, line_start):
        for line in self.get("/metrics").body.splitlines():
            if line.startswith(line_start + " "):
                return float(line.split()[-1])
        return None

    def spool_empty(self):
        return self.metric("celos_openlineage_spool_events") == 0


class LineageCase(unittest.TestCase):
    schema = EventSchema()

    def setUp(self):
        self.server = None
        self.collector = None

    def tearDown(self):
        if self.server:
            self.server.close()
        if self.collector:
            self.collector.stop()

    def start(self, args):
        """celos-server with the class's WORKFLOWS; "{root}" in args is its directory."""
        self.server = LineageServer(self.WORKFLOWS, args)
        with open(os.path.join(self.server.root, "token"), "w") as f:
            f.write("s3cret\n")
        self.server.args = [a.replace("{root}", self.server.root) for a in args]
        self.server.start()
        return self.server

    def check_events(self, events):
        for e in events:
            try:
                self.schema.check(e)
            except Exception as error:  # noqa: BLE001: the event and why, in the failure
                self.fail("event not valid against the OpenLineage schema: %s\n%s"
                          % (error, json.dumps(e, indent=1)))
        return runs_of(events, self)

    def finals(self, runs):
        return sorted(next(k for k in run if k != "START") for run in runs.values())

    def run_to_the_end(self, server, t, done):
        """Steps at `t` until done() (jobs are processes: polled with a bound)."""
        def stepped():
            server.step(t)
            return done()
        poll(stepped, "the slots to end", timeout=120, interval=0.2)


class FileAndCollector(LineageCase):
    WORKFLOWS = {"ok": ("exit 0", 0), "bad": ("exit 3", 1), "slow": ("sleep 600", 0)}

    def story(self, server):
        """ok succeeds, bad fails twice (a retry: two runs), slow is killed: 4 runs."""
        t = START + datetime.timedelta(minutes=30)  # one slot each: 00:00
        server.step(t)
        poll(lambda: server.step(t) and server.get(
            "/slot-state?id=slow&time=" + stamp(START)).json["status"] == "RUNNING",
            "slow to run")
        self.assertEqual(server.post("/kill?id=slow&time=" + stamp(START)).status, 200)

        def ended():
            return all(server.get("/slot-state?id=%s&time=%s" % (w, stamp(START))).json["status"]
                       in ("SUCCESS", "FAILURE") for w in ("ok", "bad"))
        self.run_to_the_end(server, t, ended)

    def check_story(self, events, namespace):
        runs = self.check_events(events)
        self.assertEqual(len(runs), 4, json.dumps(events, indent=1))
        self.assertEqual(self.finals(runs), ["ABORT", "COMPLETE", "FAIL", "FAIL"])
        for run in runs.values():
            start = run["START"]
            self.assertEqual(start["job"]["namespace"], namespace)
            facets = start["run"]["facets"]
            self.assertEqual(facets["nominalTime"]["nominalStartTime"], stamp(START))
            self.assertEqual(facets["nominalTime"]["nominalEndTime"],
                             stamp(START + datetime.timedelta(hours=1)))
            self.assertEqual(start["inputs"][0]["name"],
                             os.path.join(self.server.data, "raw/20150913/00"))
            self.assertTrue(start["inputs"][0]["namespace"].startswith("file://"))
            final = next(e for k, e in run.items() if k != "START")
            self.assertEqual(final["eventType"] == "FAIL", "errorMessage" in final["run"]["facets"])
        outputs = [e["outputs"] for e in events if e["job"]["name"] == "bad"]
        self.assertTrue(all(o == [] for o in outputs))
        self.assertTrue(all(e["outputs"][0]["name"].endswith("out/20150913/00")
                            for e in events if e["job"]["name"] == "ok"))

    def test_file_transport_writes_one_valid_event_per_line(self):
        server = self.start(["--openlineage-file", "{root}/lineage.jsonl", "--cluster-name", "etl"])
        path = os.path.join(server.root, "lineage.jsonl")
        self.story(server)
        poll(lambda: len(read_lines(path)) == 8, "8 events in the file", timeout=60)
        self.check_story(read_lines(path), "etl")

    def test_collector_outage_loses_nothing_and_sends_nothing_twice_differently(self):
        self.collector = Collector()
        self.collector.fail_next(3)  # failing: 503, retried after 1, 2 and 4 s
        server = self.start(["--openlineage-url", self.collector.url,
                             "--openlineage-namespace", "celos-prod",
                             "--openlineage-token-file", "{root}/token"])
        self.story(server)
        self.collector.stop()  # down: connection refused, while more events come
        later = START + datetime.timedelta(hours=1, minutes=30)
        for _ in range(3):  # ok and bad at 01:00: READY, RUNNING, and maybe their ends
            server.step(later, ids="ok,bad")
            time.sleep(1)
        self.collector.start()
        poll(server.spool_empty, "the spool to empty", timeout=120, interval=0.2)
        events = self.collector.accepted()
        runs = self.check_events(events)
        self.assertGreater(self.collector.posts, len(events))  # it did retry
        starts = [e for e in events if e["eventType"] == "START"]
        self.assertEqual(len({e["run"]["runId"] for e in starts}), len(runs))
        first = [e for e in events if e["run"]["facets"]["nominalTime"]["nominalStartTime"]
                 == stamp(START)]
        self.check_story(first, "celos-prod")
        self.assertEqual(self.collector.headers[0]["Content-Type"], "application/json")
        self.assertEqual(self.collector.headers[0]["Authorization"], "Bearer s3cret")

    def test_a_rejected_event_is_dropped_after_three_tries_and_counted(self):
        self.collector = Collector()
        server = self.start(["--openlineage-url", self.collector.url])
        t = START + datetime.timedelta(minutes=30)
        server.step(t)
        server.step(t)
        record = poll(lambda: server.get("/slot-state?id=ok&time=" + stamp(START)).json,
                      "ok's record")
        run_id = record.get("runId") or self.fail("no runId: %s" % record)
        self.collector.reject = lambda e: e["run"]["runId"] == run_id and e["eventType"] != "START"
        self.story(server)
        poll(server.spool_empty, "the spool to empty", timeout=60, interval=0.2)
        self.assertEqual(server.metric('celos_openlineage_events_dropped_total{reason="rejected"}'),
                         1)
        refused = [h for h in self.collector.rejected if h == run_id]
        self.assertEqual(len(refused), 3)  # tried three times, then dropped
        runs = self.check_events(self.collector.accepted())
        self.assertEqual(list(runs[run_id]), ["START"])


class Backfill(LineageCase):
    WORKFLOWS = {"ok": ("exit 0", 0)}

    def test_the_runs_of_a_backfill_plan_name_the_plan_as_their_parent(self):
        server = self.start(["--openlineage-file", "{root}/lineage.jsonl", "--cluster-name", "etl"])
        path = os.path.join(server.root, "lineage.jsonl")
        reply = server.post("/api/v1/backfills?workflows=ok&start=%s&end=%s" % (
            stamp(START), stamp(START + datetime.timedelta(hours=1))))
        self.assertEqual(reply.status, 200, reply)
        plan = reply.json["id"]
        slot = "/slot-state?id=ok&time=" + stamp(START)
        self.run_to_the_end(server, START + datetime.timedelta(minutes=30),
                            lambda: server.get(slot).json["status"] == "SUCCESS")
        self.assertEqual(server.get(slot).json.get("backfill"), plan)  # the plan ran it
        poll(lambda: len(read_lines(path)) == 2, "2 events in the file", timeout=60)
        events = read_lines(path)
        runs = self.check_events(events)  # the parent facet against its schema too
        self.assertEqual(self.finals(runs), ["COMPLETE"])
        parents = [e["run"]["facets"]["parent"] for e in events]
        for parent in parents:
            self.assertEqual(parent["job"], {"namespace": "etl", "name": "backfill/" + plan})
            self.assertEqual(parent["run"]["runId"], parents[0]["run"]["runId"])
        self.assertNotIn(parents[0]["run"]["runId"], runs)


class Crash(LineageCase):
    """kill -9 at random moments of steps; then every attempt that started has exactly one START
    and one final event at the collector, and no event names an attempt that never started."""

    def test_every_attempt_that_started_has_one_start_and_one_end_across_kill_9(self):
        self.collector = Collector()
        workflows = {"w%02d" % n: ("sleep 0.05; exit %d" % (3 if n % 4 == 3 else 0), 1)
                     for n in range(12)}
        self.server = LineageServer(workflows, ["--openlineage-url", self.collector.url])
        rnd = random.Random(SEED)
        clock = [START + datetime.timedelta(minutes=30)]
        for _ in range(KILLS):
            self.crash_once(rnd, clock)
        self.server.start()
        self.settle(clock[0])
        with self.subTest(seed=SEED):
            runs = self.check_events(self.collector.accepted())
            self.check_runs_match_jobs(runs)
            for run_id, run in runs.items():
                self.assertEqual(len(run), 2, "run %s has no end: %s" % (run_id, list(run)))
        self.assertEqual(self.server.terminate(), 0)

    def crash_once(self, rnd, clock):
        self.server.start()
        stop, stepped = threading.Event(), threading.Event()

        def stepper():
            while not stop.is_set():
                clock[0] += datetime.timedelta(minutes=20)
                try:
                    self.server.post("/scheduler?time=" + stamp(clock[0]), timeout=60)
                except OSError:
                    return
                stepped.set()
        thread = threading.Thread(target=stepper)
        thread.start()
        self.assertTrue(stepped.wait(60), "no step finished")
        time.sleep(rnd.uniform(0.0, 0.6))
        self.server.process.send_signal(signal.SIGKILL)
        self.server.process.wait()
        stop.set()
        thread.join(60)
        self.server.stderr.close()

    def settle(self, t):
        wait_for_command_jobs(self.server.db)
        for _ in range(3):  # the ends, and retries' ends
            self.server.step(t)
            wait_for_command_jobs(self.server.db)
        self.server.step(t)

        def quiet():
            running = 0
            for wid in ["w%02d" % n for n in range(12)]:
                for s in self.server.get("/workflow-slots?id=%s&end=%s" % (
                        wid, stamp(t))).json["slots"]:
                    running += s["status"] == "RUNNING"
            return running == 0 and self.server.spool_empty()
        poll(lambda: self.server.step(t) and quiet(), "no RUNNING slot and an empty spool",
             timeout=120, interval=0.5)

    def check_runs_match_jobs(self, runs):
        """Per slot: as many runs as attempts that started (job directories with "started")."""
        started = {}
        root = os.path.join(self.server.db, "jobs")
        for dirpath, _, files in os.walk(root):
            if "started" in files:
                workflow, day, slot_time, _ = os.path.relpath(dirpath, root).split(os.sep)
                key = (workflow, day + "T" + slot_time)
                started[key] = started.get(key, 0) + 1
        by_slot = {}
        for run in runs.values():
            e = run["START"]
            key = (e["job"]["name"], e["run"]["facets"]["nominalTime"]["nominalStartTime"])
            by_slot[key] = by_slot.get(key, 0) + 1
        self.assertTrue(started, "no job started: the kills came too early")
        self.assertEqual(by_slot, started)


class BadUrl(unittest.TestCase):
    def test_a_malformed_url_is_a_start_up_error_naming_the_flag(self):
        server = CelosServer(start=False, args=["--openlineage-url", "marquez:5000/api"])
        self.addCleanup(server.close)
        result = subprocess.run(server.command(), capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("--openlineage-url", result.stderr)


if __name__ == "__main__":
    unittest.main()
