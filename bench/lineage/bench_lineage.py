#!/usr/bin/env python3
"""The OpenLineage step cost through celos-server's HTTP API (issue 32).

    bench/lineage/bench_lineage.py [--server build/dev/celos-server/celos-server] [-n 1000]
        [--latency-ms 20] [--pairs 3] [--runs 3]

N hourly workflows, each reading one dataset and writing another (celos.dataset on the local
file system), run on the fake Oozie of test/hadoop; the OpenLineage collector is the fake of
test/openlineage (collector.py) in a process of its own, as a real collector is not in the
benchmark's, answering every POST after --latency-ms, as the fake Oozie does.
celos-server runs on a fresh --db without a collector ("off") and with --openlineage-url
("on"), alternating, --pairs times each. In each server's life, after a first step that writes
the 24 slots of the window, --runs cycles of three steps are measured through
POST /scheduler?time=...:

  submit    one slot per workflow is submitted and started: N RUNNING records, N START events
  status    only the N RUNNING jobs' status is asked: nothing changes, no event
  success   every job has succeeded (scripted at the fake): N SUCCESS records, N COMPLETE events

The events are sent by the server's sender thread, not by the step: what the step pays is the
spool (a line per event, synced before the slot records it describes). Printed per step kind:
the median and the worst of off and on, and the difference of the medians (target for submit
and success at N = 1,000: within 5 %); and, for "on", the events the collector received and how
long after the last step it took to have them all (the sender's throughput at that latency).
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "scale"))
sys.path.insert(0, os.path.join(ROOT, "test", "openlineage"))
import bench_scale  # noqa: E402
from bench_scale import Bench  # noqa: E402
COLLECTOR = os.path.join(ROOT, "test", "openlineage", "collector.py")

START = "2015-09-19T01:00Z"  # the 24 slots before bench_scale's NOW (2015-09-20T00:30Z)
KINDS = ("submit", "status", "success")

WORKFLOW = """celos.dataset("in-%(n)05d", {"path": "%(data)s/in/%(n)05d/${year}${month}${day}${hour}"});
celos.dataset("out-%(n)05d", {"path": "%(data)s/out/%(n)05d/${year}${month}${day}${hour}"});
celos.defineWorkflow({
  "id": "wf-%(n)05d",
  "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(1),
  "trigger": celos.alwaysTrigger(),
  "inputs": ["in-%(n)05d"],
  "outputs": ["out-%(n)05d"],
  "externalService": celos.oozieExternalService(
      {"oozie.wf.application.path": "/app/%(n)05d", "user.name": "celos"}, "%(oozie)s"),
  "startTime": "%(start)s"
});
"""


class LineageBench(Bench):
    """One celos-server life: with a collector when `collector` is given."""

    def __init__(self, args, collector):
        super().__init__(bench_scale.paired_bench_args(args, "on" if collector else "off"))
        self.collector = collector
        # Removing a life's 30,000 files just before the next life starts makes ext4's inode
        # allocation (recently_deleted) the next life's main cost: all are removed at the end.
        self.keep_dir = True
        if collector:
            self.server_args = ["--openlineage-url", collector.url]
            self.extra_pids = {"collector": collector.process.pid}

    def write_workflows(self):
        wdir = os.path.join(self.dir, "workflows")
        os.makedirs(wdir)
        os.makedirs(os.path.join(self.dir, "defaults"))
        for n in range(self.args.n):
            with open(os.path.join(wdir, "wf-%05d.js" % n), "w") as f:
                f.write(WORKFLOW % {"n": n, "data": os.path.join(self.dir, "data"),
                                    "oozie": self.oozie.url("/oozie"), "start": START})

    def measure(self):
        """{kind: [seconds, ...]} of --runs cycles after the first step."""
        self.write_workflows()
        self.start_server()
        return self.measure_cycles()

    def drained(self, expected, timeout=600):
        """Seconds from now until the collector has `expected` events (or the timeout)."""
        started = time.monotonic()
        while self.collector.accepted() < expected and time.monotonic() - started < timeout:
            time.sleep(0.1)
        return time.monotonic() - started


class CollectorProcess:
    """test/openlineage/collector.py in a process of its own (its CPU counted apart)."""

    def __init__(self, latency_ms):
        self.process = subprocess.Popen(
            [sys.executable, COLLECTOR, "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE)
        port = int(self.process.stdout.readline())
        self.base = "http://127.0.0.1:%d" % port
        self.url = self.base + "/api/v1/lineage"

    def accepted(self):
        with urllib.request.urlopen(self.base + "/_accepted", timeout=10) as answer:
            return json.loads(answer.read())["accepted"]

    def stop(self):
        self.process.terminate()
        self.process.wait()


def run_pairs(args):
    """The steps' seconds by mode and kind, and what the collector received in each "on" life."""
    steps = {"off": {k: [] for k in KINDS}, "on": {k: [] for k in KINDS}}
    delivery, dirs = [], []
    try:
        for pair in range(args.pairs):
            for mode in ("off", "on"):
                collector = CollectorProcess(args.latency_ms) if mode == "on" else None
                bench = LineageBench(args, collector)
                try:
                    for kind, values in bench.measure().items():
                        steps[mode][kind] += values
                    if collector:
                        # first step: nothing runs yet; each cycle: N STARTs and N COMPLETEs
                        expected = 2 * args.n * args.runs
                        wait = bench.drained(expected)
                        delivery.append({"events": collector.accepted(), "expected": expected,
                                         "after_last_step_s": round(wait, 1)})
                finally:
                    bench.close()
                    dirs.append(bench.dir)
                    if collector:
                        collector.stop()
                print("pair %d %s: %s" % (pair + 1, mode, json.dumps(
                    {k: [round(v, 3) for v in vs[-args.runs:]] for k, vs in steps[mode].items()})),
                    file=sys.stderr)
                for kind in KINDS:  # CPU seconds of each process and the server's phase timings
                    print("  %s: %s" % (kind, json.dumps(bench.cpu.get(kind))), file=sys.stderr)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    return steps, delivery


def main():
    args = bench_scale.paired_arguments(__doc__.split("\n\n")[0])
    steps, delivery = run_pairs(args)
    report = bench_scale.paired_report(args, steps, KINDS, "off", "on")
    report["delivery"] = delivery
    print(json.dumps(report, indent=1))
    if any(d["events"] < d["expected"] for d in delivery):
        sys.exit("the collector did not receive every event")


if __name__ == "__main__":
    main()
