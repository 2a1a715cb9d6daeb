#!/usr/bin/env python3
"""Backfill plans through celos-server's HTTP API (issue 29).

    bench/backfill/bench_backfill.py [--server build/dev/celos-server/celos-server]
        [-n 1000] [--dry-runs 7] [--live 20] [--latency-ms 20] [--phases 4] [--steps 25]

1. Dry run: N hourly workflows on the fake Oozie of test/hadoop; POST /api/v1/backfills
   ?dryRun=true over the 30 days before the window (N x 720 slots), --dry-runs times. Printed: the
   median and the worst answer time (target for N = 1,000: <= 2 s).
2. Live submit delay: --live hourly workflows, serialSchedulingStrategy(3) (the live slot
   just submitted, the one submitted next, and room for one of the backfill's), on the fake
   Oozie answering after --latency-ms. Each step (POST /scheduler?time=...) moves an hour, so
   every workflow has one new live slot (a step makes it READY, the next submits it); before each
   step every job at the fake is scripted SUCCEEDED. A slot's delay is the time from the step's
   request to its submission's arrival at the fake (the fake stamps it). --phases alternate
   without and with a running backfill of every workflow (reprocess=all over the 30 days before
   the window, maxRunning=--live, created through the API before the phase and cancelled after
   it), --steps steps each, after steps that submit the window's own slots (not measured).
   Printed: p50, p99 and worst of the live delays without and with, and the backfill's
   submissions (target: p99 with within +10 % of without).
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "scale"))
from bench_scale import WORKFLOW, Bench, http  # noqa: E402

FIRST = datetime.datetime(2015, 9, 20, 0, 30)  # bench_scale's NOW: the window ends 2015-09-20T00:00
WINDOW = "2015-09-13T00:00Z"  # where the live slots begin (celosWorkflowName: wf-00000@<slot>)
BACKFILL = "start=2015-08-14T00:00Z&end=%s&reprocess=all" % WINDOW  # the 30 days before


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%MZ")


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class BackfillBench(Bench):
    def __init__(self, args, n, concurrency):
        super().__init__(argparse.Namespace(
            server=args.server, n=n, latency_ms=args.latency_ms, io_concurrency=32, hdfs=False,
            late_hours=1, runs=1, backoff=0, profile=None))
        self.concurrency = concurrency
        self.keep_dir = True  # removed at the end (see bench/lineage/bench_lineage.py)

    def write_workflows(self):
        super().write_workflows()
        wdir = os.path.join(self.dir, "workflows")
        for name in os.listdir(wdir):  # bench_scale's workflows, with this run's concurrency
            path = os.path.join(wdir, name)
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace("serialSchedulingStrategy(1)",
                                     "serialSchedulingStrategy(%d)" % self.concurrency))

    def start_time(self):
        return "2015-08-14T00:00Z"  # the backfill's range is before the window

    def start(self):
        self.write_workflows()
        self.start_server()

    def drain_window(self, limit=400):
        """Steps at bench_scale's NOW, every job succeeding, until the window's live slots are
        submitted and ended (a step changes nothing): then each measured step has exactly one
        new live slot per workflow."""
        for _ in range(limit):
            self.oozie.control("/_control/status?status=SUCCEEDED")
            answer = self.step()[1]
            if answer["changed"] == 0 and answer["submitted"] == 0:
                return
        raise SystemExit("the window's slots were not all submitted in %d steps" % limit)

    def api(self, method, path):
        status, body = http(method, self.url(path))
        if status // 100 != 2:
            raise SystemExit("%s %s: %d %s" % (method, path, status, body))
        return json.loads(body)

    def dry_runs(self, count):
        took = []
        for _ in range(count):
            started = time.monotonic()
            answer = self.api("POST", "/api/v1/backfills?workflows=wf-*&dryRun=true&" + BACKFILL)
            took.append(time.monotonic() - started)
        return answer["slots"], took

    def live_phase(self, first_step, steps, backfill):
        """Delays (s) of the live slots' submissions in `steps` steps from `first_step`, and the
        backfill's submissions meanwhile."""
        plan = None
        if backfill:
            plan = self.api("POST", "/api/v1/backfills?workflows=wf-*&maxRunning=%d&%s"
                            % (self.args.n, BACKFILL))["id"]
        delays, backfill_submits = [], 0
        for k in range(first_step, first_step + steps):
            at = FIRST + datetime.timedelta(hours=k)
            self.oozie.control("/_control/status?status=SUCCEEDED")
            known = set(self.oozie.control("/_control/jobs", "GET"))
            started = time.time()
            self.step(at=iso(at))
            for job_id, job in self.oozie.control("/_control/jobs", "GET").items():
                if job_id in known:
                    continue
                slot = job["properties"].get("celosWorkflowName", "@").split("@", 1)[1]
                if slot >= WINDOW:
                    delays.append(job["submittedAt"] - started)
                else:
                    backfill_submits += 1
        if plan:
            self.api("POST", "/api/v1/backfills/%s/cancel" % urllib.parse.quote(plan))
        return delays, backfill_submits


def summary_ms(values):
    return {"p50_ms": round(1000 * percentile(values, 0.5), 1),
            "p99_ms": round(1000 * percentile(values, 0.99), 1),
            "worst_ms": round(1000 * max(values), 1), "count": len(values)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default=os.path.join(ROOT, "build/dev/celos-server/celos-server"))
    p.add_argument("-n", type=int, default=1000)
    p.add_argument("--dry-runs", type=int, default=7)
    p.add_argument("--live", type=int, default=20)
    p.add_argument("--latency-ms", type=int, default=20)
    p.add_argument("--phases", type=int, default=4)
    p.add_argument("--steps", type=int, default=25)
    args = p.parse_args()
    report = {"n": args.n, "live": args.live, "latency_ms": args.latency_ms}

    dry = BackfillBench(args, args.n, 1)
    try:
        dry.start()
        slots, took = dry.dry_runs(args.dry_runs)
        report["dry_run"] = {"slots": slots, "median_s": round(statistics.median(took), 3),
                             "worst_s": round(max(took), 3), "runs": len(took)}
    finally:
        dry.close()

    bench = BackfillBench(argparse.Namespace(**dict(vars(args), n=args.live)), args.live, 3)
    delays = {"without": [], "with": []}
    submits = {"without": 0, "with": 0}
    try:
        bench.start()
        bench.drain_window()  # the window's 168 slots a workflow: not measured
        for phase in range(args.phases):
            mode = "with" if phase % 2 else "without"
            d, b = bench.live_phase(1 + phase * args.steps, args.steps, mode == "with")
            delays[mode] += d
            submits[mode] += b
            print("phase %d %s: %s, %d backfill submissions" % (
                phase + 1, mode, json.dumps(summary_ms(d)), b), file=sys.stderr)
    finally:
        bench.close()
        for d in (dry.dir, bench.dir):
            shutil.rmtree(d, ignore_errors=True)
    report["live"] = {mode: dict(summary_ms(delays[mode]), backfill_submissions=submits[mode])
                      for mode in delays}
    without, with_ = report["live"]["without"]["p99_ms"], report["live"]["with"]["p99_ms"]
    report["live"]["p99_difference_pct"] = round(100.0 * (with_ - without) / without, 1)
    print(json.dumps(report, indent=1))
    if submits["with"] == 0:
        sys.exit("the backfill submitted nothing: the comparison says nothing")


if __name__ == "__main__":
    main()
