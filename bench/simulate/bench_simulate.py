#!/usr/bin/env python3
"""Benchmarks of `celos simulate` and `celos plan` (issue 25); figures in bench/README.md.

  bench_simulate.py [--celos build/dev/celos-cli/celos] [-n 1000] [--days 30] [--step 10m]
                    [--runs 2] [--plan-runs 3]

simulate: N hourly workflows (always ready, one slot at a time) over DAYS simulated days with
jobs of 10 minutes, stepped every STEP: N x 24 x DAYS slots. Each run's wall time, CPU time and
peak RSS (from wait4), and whether the timelines of all runs are byte-identical.
plan: two versions of N hourly workflows, the second with a tenth of them moved by 30 minutes,
one removed and one added, compared over 7 days.
"""
import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tempfile
import time

FLEET = """for (var i = 0; i < %(n)d; i++) {
  celos.defineWorkflow({
    "id": "wf-" + ("0000" + i).slice(-5),
    "schedule": %(schedule)s,
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true"),
    "startTime": "2015-09-01T00:00Z",
  });
}
"""


def run(cmd):
    """Runs cmd; returns (exit code, wall seconds, CPU seconds, peak RSS MiB)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(err)
    return code, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def bench_simulate(args, tmp):
    os.makedirs(os.path.join(tmp, "fleet/workflows"))
    with open(os.path.join(tmp, "fleet/workflows/fleet.js"), "w") as f:
        f.write(FLEET % {"n": args.n, "schedule": "celos.hourlySchedule()"})
    end_day = 1 + args.days
    scenario = os.path.join(tmp, "fleet/scenario.json")
    with open(scenario, "w") as f:
        f.write('{"workflows": "workflows", "start": "2015-09-01T00:00Z", '
                '"end": "2015-%02d-%02dT00:00Z", "step": "%s", "jobs": [{"duration": "10m"}], '
                '"expect": [{"count": "*", "state": "SUCCESS", "atLeast": %d}]}'
                % (9 + (end_day - 1) // 30, (end_day - 1) % 30 + 1, args.step,
                   args.n * 24 * (args.days - 1)))
    digests = []
    for r in range(args.runs):
        timeline = os.path.join(tmp, "timeline-%d.jsonl" % r)
        code, wall, cpu, rss = run([args.celos, "simulate", scenario, "--timeline", timeline])
        with open(timeline, "rb") as f:
            digest = hashlib.sha256()
            lines = 0
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
                lines += chunk.count(b"\n")
        digests.append(digest.hexdigest())
        os.unlink(timeline)
        print("simulate n=%d days=%d step=%s: exit %d, wall %.1f s, cpu %.1f s, peak RSS %.0f MiB, "
              "%d timeline lines, sha256 %s" % (args.n, args.days, args.step, code, wall, cpu, rss,
                                                 lines, digests[-1][:16]))
    print("timelines identical: %s" % (len(set(digests)) == 1))


def bench_plan(args, tmp):
    for name, moved in (("old", False), ("new", True)):
        d = os.path.join(tmp, name, "workflows")
        os.makedirs(d)
        with open(os.path.join(d, "fleet.js"), "w") as f:
            schedule = ('(i %% 10 == 0 ? celos.cronSchedule("0 30 * * * ?") : '
                        'celos.hourlySchedule())' if moved else "celos.hourlySchedule()")
            f.write(FLEET % {"n": args.n, "schedule": schedule.replace("%%", "%")})
            if moved:  # one removed (the last), one added
                f.write('celos.defineWorkflow({"id": "added", "schedule": celos.hourlySchedule(), '
                        '"schedulingStrategy": celos.serialSchedulingStrategy(), '
                        '"trigger": celos.alwaysTrigger(), '
                        '"externalService": celos.commandExternalService("true")});\n')
        if moved:
            with open(os.path.join(d, "fleet.js")) as f:
                text = f.read()
            with open(os.path.join(d, "fleet.js"), "w") as f:
                f.write(text.replace("i < %d;" % args.n, "i < %d;" % (args.n - 1), 1))
    for _ in range(args.plan_runs):
        code, wall, cpu, rss = run([args.celos, "plan", "--from", os.path.join(tmp, "old"),
                                    "--to", os.path.join(tmp, "new"), "--at",
                                    "2015-09-13T00:00Z", "-o", "json"])
        print("plan n=%d days=7: exit %d, wall %.2f s, cpu %.2f s, peak RSS %.0f MiB"
              % (args.n, code, wall, cpu, rss))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--celos", default="build/dev/celos-cli/celos")
    p.add_argument("-n", type=int, default=1000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--step", default="10m")
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--plan-runs", type=int, default=3)
    p.add_argument("--skip-simulate", action="store_true")
    p.add_argument("--skip-plan", action="store_true")
    args = p.parse_args()
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="celos-bench-simulate-") as tmp:
        if not args.skip_simulate:
            bench_simulate(args, tmp)
        if not args.skip_plan:
            bench_plan(args, tmp)
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
