#!/usr/bin/env python3
"""Issue 33 point 4, measured: a leader frozen mid-step (SIGSTOP) while the other node takes over
and runs the job, then woken (SIGCONT). Runs the scenario of test/server/test_hardening2_fence.py
--runs times against the real celos-server and a private PostgreSQL (lease 3 s) and prints, per
run and as median/worst: the takeover (SIGSTOP to the other node leading) and how long the woken
ex-leader took to stop its step (SIGCONT to its reply); every run also checks the invariant
(output whole, job run once, slot history READY, RUNNING, SUCCESS).

  CELOS_SERVER=build/dev/celos-server/celos-server bench/hardening/fence_bench.py --runs 10
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "server"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test"))
from test_hardening2_fence import FrozenLeaderTest  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    takeovers, stops = [], []
    for i in range(args.runs):
        case = FrozenLeaderTest("test_a_frozen_leader_that_wakes_removes_no_output_of_the_new_leader")
        case.setUp()
        times = {}
        try:
            case.scenario(times)  # raises when the invariant breaks
        finally:
            case.tearDown()
        takeovers.append(times["taken over"] - times["frozen"])
        stops.append(times["stopped"] - times["woken"])
        print("run %d: takeover %.2f s, woken ex-leader stopped after %.0f ms, output whole, "
              "ran once" % (i + 1, takeovers[-1], stops[-1] * 1000), flush=True)
    print("%d runs, all whole and run once" % args.runs)
    print("takeover after SIGSTOP: median %.2f s, worst %.2f s" %
          (statistics.median(takeovers), max(takeovers)))
    print("woken ex-leader's step stopped: median %.0f ms, worst %.0f ms" %
          (statistics.median(stops) * 1000, max(stops) * 1000))


if __name__ == "__main__":
    main()
