#!/usr/bin/env python3
"""The deadlines' step cost through celos-server's HTTP API (issue 27).

    bench/deadlines/bench_deadlines.py [--server build/dev/celos-server/celos-server] [-n 1000]
        [--latency-ms 20] [--pairs 3] [--runs 3]

N hourly workflows (168 slots each in the 7-day window of bench/scale, serial strategy) run on
the fake Oozie of test/hadoop, answering after --latency-ms. celos-server runs on a fresh --db
with the workflows as they are ("without") and with `deadline: {after: "PT3H"}` on each
("with"), alternating, --pairs times each. In each server's life, after a first step that
stores the 168,000 slots (and, "with", their deadlines), --runs cycles of three steps are
measured through POST /scheduler?time=...:

  submit    one slot per workflow is submitted and started: N RUNNING records
  status    only the N RUNNING jobs' status is asked: nothing changes
  success   every job has succeeded (scripted at the fake): N SUCCESS records

"With", every step also evaluates the deadline state of every open slot (PENDING, AT_RISK,
MISSED; the slots older than three hours are MISSED by the first step) and predicts the
finish of those not yet final from the workflow's history. Printed per step kind: the median
and the worst of "without" and "with" and the difference of the medians (target: within 10 %).
"""

import json
import os
import shutil
import sys
import urllib.error

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "scale"))
import bench_scale  # noqa: E402

KINDS = ("submit", "status", "success")


class DeadlineBench(bench_scale.Bench):
    """One celos-server life, its workflows with a deadline when `with_deadlines`."""

    def __init__(self, args, with_deadlines):
        super().__init__(bench_scale.paired_bench_args(args, "with" if with_deadlines else "without"))
        # A life's 168,000 files removed just before the next life starts make ext4's inode
        # allocation (recently_deleted) that life's main cost: all are removed at the end.
        self.keep_dir = True
        if with_deadlines:
            self.workflow = bench_scale.WORKFLOW.replace(
                '  "startTime"', '  "deadline": {"after": "PT3H"},\n  "startTime"', 1)
            assert self.workflow != bench_scale.WORKFLOW

    def measure(self):
        """({kind: [seconds, ...]} of --runs cycles after the first step, deadlines_seen())."""
        self.write_workflows()
        self.start_server()
        return self.measure_cycles(), self.deadlines_seen()

    def deadlines_seen(self):
        """wf-00000's slots in the window, and how many of them carry a deadline."""
        try:
            _, body = bench_scale.http("GET", self.url(
                "/workflow-slots?id=wf-00000&start=2015-09-13T01:00Z&end=2015-09-20T01:00Z"))
        except urllib.error.HTTPError as e:
            sys.exit("GET /workflow-slots: %d %s" % (e.code, e.read().decode()))
        slots = json.loads(body)["slots"]
        return len(slots), sum(1 for slot in slots if "deadline" in slot)


def run_pairs(args):
    steps = {"without": {k: [] for k in KINDS}, "with": {k: [] for k in KINDS}}
    dirs = []
    try:
        for pair in range(args.pairs):
            for mode in ("without", "with"):
                run_life(args, pair, mode, steps, dirs)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    return steps


def run_life(args, pair, mode, steps, dirs):
    """One celos-server life of `mode`: its steps' seconds added to `steps`, its --db to `dirs`."""
    bench = DeadlineBench(args, mode == "with")
    try:
        took, (slots, with_deadline) = bench.measure()
    finally:
        bench.close()
        dirs.append(bench.dir)
    if slots != 168 or with_deadline != (slots if mode == "with" else 0):
        sys.exit("%s: %d of wf-00000's %d slots have a deadline" % (mode, with_deadline, slots))
    for kind, values in took.items():
        steps[mode][kind] += values
    print("pair %d %s: %s" % (pair + 1, mode, json.dumps(
        {k: [round(v, 3) for v in vs] for k, vs in took.items()})), file=sys.stderr)
    for kind in KINDS:  # CPU seconds of each process and the server's phase timings
        print("  %s: %s" % (kind, json.dumps(bench.cpu.get(kind))), file=sys.stderr)


def main():
    args = bench_scale.paired_arguments(__doc__.split("\n\n")[0])
    report = bench_scale.paired_report(args, run_pairs(args), KINDS, "without", "with")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
