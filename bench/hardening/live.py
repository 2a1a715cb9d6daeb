#!/usr/bin/env python3
"""Issue 33, point 2: is celos-server live under backend faults? Measured through real servers
on a private PostgreSQL (test/pg_util.py), standard library only.

outage   3 nodes (lease 10 s, --autoSchedule 1), 3 clients posting steps round-robin over the
         nodes, /health/live polled on every node every 20 ms; PostgreSQL stopped for
         --outage seconds (pg_ctl). Reports /health/live p50/p99/max per node during the
         outage, and the time from PostgreSQL accepting connections again to the first step
         answered 200 with the workflow stepped.
restart  2 nodes (lease 10 s); the leader is kill -9'd and restarted at once (same id and port:
         the lease still names it) and 3 mutations are posted to it concurrently. Reports the
         slowest answer, the statuses, and how many POST /scheduler the node logged (a node that
         forwards to itself logs each twice).

Usage: bench/hardening/live.py [--runs 3] [--outage 20] [--io-timeout 30] [outage|restart|all]
CELOS_SERVER (default build/dev/celos-server/celos-server) names the binary."""

import argparse
import os
import signal
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
os.environ.setdefault("CELOS_SERVER", os.path.join(ROOT, "build/dev/celos-server/celos-server"))
sys.path.insert(0, os.path.join(ROOT, "test"))
sys.path.insert(0, os.path.join(ROOT, "test/server"))
import pg_util  # noqa: E402
from e2e_util import poll  # noqa: E402
from server_process import CelosServer  # noqa: E402

WORKFLOW = """
celos.defineWorkflow({
    "id": "hourly",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(100),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true"),
    "startTime": "2015-09-14T00:00Z"
});
"""
LEASE = 10


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))]


def start_nodes(pg, names, extra):
    uri = pg.create_database("live")
    nodes = {}
    for name in names:
        nodes[name] = CelosServer(workflows={"wf.js": WORKFLOW},
                                  args=["--state-db", uri, "--node-id", name, "--lease-seconds",
                                        str(LEASE), "--cluster-name", "bench"] + extra)
    return nodes


def leader_of(nodes):
    def agreed():
        views = []
        for server in nodes.values():
            r = server.get("/api/v1/cluster", timeout=5)
            views.append(r.json if r.status == 200 else None)
        if any(v is None or v["leader"] is None for v in views):
            return None
        ids = {v["leader"]["id"] for v in views}
        return views[0]["leader"] if len(ids) == 1 else None
    return poll(agreed, "a leader", timeout=LEASE + 30)


class Live(threading.Thread):
    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.samples, self.stop = server, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                ok = self.server.get("/health/live", timeout=60).status == 200
            except OSError:
                ok = False
            self.samples.append((t0, time.monotonic() - t0, ok))
            time.sleep(0.02)


class Client(threading.Thread):
    def __init__(self, nodes, offset):
        super().__init__(daemon=True)
        self.nodes, self.offset = list(nodes.values()), offset
        self.stepped, self.stop = [], threading.Event()

    def run(self):
        i = self.offset
        while not self.stop.is_set():
            server = self.nodes[i % len(self.nodes)]
            i += 1
            try:
                r = server.post("/scheduler?time=2015-09-14T03:00Z", timeout=120)
                if r.status == 200 and r.json["workflows"] == 1 and not r.json["errors"]:
                    self.stepped.append(time.monotonic())
            except OSError:
                pass
            time.sleep(0.05)


def outage_run(args):
    pg = pg_util.PrivatePostgres()
    nodes = start_nodes(pg, ("a", "b", "c"),
                        ["--autoSchedule", "1", "--io-timeout", str(args.io_timeout)])
    try:
        leader_of(nodes)
        lives = {name: Live(s) for name, s in nodes.items()}
        clients = [Client(nodes, k) for k in range(3)]
        for t in list(lives.values()) + clients:
            t.start()
        time.sleep(2)
        down = time.monotonic()
        pg.stop()
        time.sleep(args.outage)
        pg.start()  # returns once PostgreSQL accepts connections
        up = time.monotonic()
        deadline = up + 120
        while time.monotonic() < deadline and not any(s > up for c in clients for s in c.stepped):
            time.sleep(0.05)
        first = min([s for c in clients for s in c.stepped if s > up], default=None)
        time.sleep(1)
        for t in list(lives.values()) + clients:
            t.stop.set()
        result = {"step_after_up": (first - up) if first else float("inf"), "nodes": {}}
        for name, live in lives.items():
            window = [d for (t0, d, ok) in live.samples if down <= t0 <= up]
            failed = sum(1 for (t0, d, ok) in live.samples if down <= t0 <= up and not ok)
            result["nodes"][name] = {"p50": percentile(window, 50), "p99": percentile(window, 99),
                                     "max": max(window), "n": len(window), "failed": failed}
        return result
    finally:
        for s in nodes.values():
            s.close()
        pg.close()


def restart_run(args):
    pg = pg_util.PrivatePostgres()
    nodes = start_nodes(pg, ("a", "b"), ["--io-timeout", str(args.io_timeout)])
    try:
        leader = leader_of(nodes)
        node = nodes[leader["id"]]
        node.process.send_signal(signal.SIGKILL)
        node.process.wait()
        node.stderr.close()
        node.start()
        answers = [None] * 3

        def post(i):
            t0 = time.monotonic()
            try:
                r = node.post("/scheduler?time=2015-09-14T03:00Z", timeout=args.io_timeout * 4)
                answers[i] = (time.monotonic() - t0, r.status)
            except OSError as e:
                answers[i] = (time.monotonic() - t0, repr(e))
        threads = [threading.Thread(target=post, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(0.5)
        with open(os.path.join(node.logs, "celos.log")) as f:
            logged = sum(1 for line in f if " POST /scheduler" in line and line.find("http ") >= 0)
        return {"slowest": max(a[0] for a in answers), "statuses": [a[1] for a in answers],
                "logged": logged, "posted": len(answers)}
    finally:
        for s in nodes.values():
            s.close()
        pg.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", nargs="?", default="all", choices=("outage", "restart", "all"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--outage", type=float, default=20)
    parser.add_argument("--io-timeout", type=float, default=30)
    args = parser.parse_args()
    if args.what in ("outage", "all"):
        p99s, maxes, steps = [], [], []
        for run in range(args.runs):
            r = outage_run(args)
            worst_p99 = max(n["p99"] for n in r["nodes"].values())
            worst_max = max(n["max"] for n in r["nodes"].values())
            p99s.append(worst_p99)
            maxes.append(worst_max)
            steps.append(r["step_after_up"])
            for name, n in sorted(r["nodes"].items()):
                print("outage run %d node %s: /health/live p50 %.1f ms p99 %.1f ms max %.1f ms "
                      "(%d polls, %d failed)" % (run + 1, name, n["p50"] * 1000, n["p99"] * 1000,
                                                 n["max"] * 1000, n["n"], n["failed"]))
            print("outage run %d: first step %.2f s after PostgreSQL accepted connections"
                  % (run + 1, r["step_after_up"]), flush=True)
        print("outage: worst node's /health/live p99 median %.1f ms, worst %.1f ms; max worst "
              "%.1f ms; step after up median %.2f s, worst %.2f s"
              % (statistics.median(p99s) * 1000, max(p99s) * 1000, max(maxes) * 1000,
                 statistics.median(steps), max(steps)))
    if args.what in ("restart", "all"):
        slowest = []
        for run in range(args.runs):
            r = restart_run(args)
            slowest.append(r["slowest"])
            print("restart run %d: slowest answer %.3f s, statuses %s, POST /scheduler logged %d "
                  "for %d posted" % (run + 1, r["slowest"], r["statuses"], r["logged"],
                                     r["posted"]), flush=True)
        print("restart: slowest answer median %.3f s, worst %.3f s (--io-timeout %g s)"
              % (statistics.median(slowest), max(slowest), args.io_timeout))


if __name__ == "__main__":
    main()
