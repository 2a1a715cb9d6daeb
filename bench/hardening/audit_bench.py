#!/usr/bin/env python3
"""Issue 33 point 8, measured through the real celos-server (standard library only):

  1. a flood of refused anonymous POSTs with 15 KB queries over one keep-alive connection for
     --seconds: how fast audit.log grows (bytes/s), and how many refusals were suppressed;
  2. GET /api/v1/audit?limit=1 on a generated 200 MB audit.log: latency (median, worst of
     --reads) and the growth of the server's peak RSS (VmHWM).

Usage: CELOS_SERVER=build/dev/celos-server/celos-server python3 bench/hardening/audit_bench.py
       [--runs 3] [--seconds 5] [--reads 20] [--mb 200]
Point CELOS_SERVER at an older binary to measure the code before issue 33."""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "server"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test"))
from server_process import CelosServer  # noqa: E402
from test_hardening2_audit import (ADMIN_HEADER, flood_refused, rss_peak_kb,  # noqa: E402
                                   write_tokens)
import datetime  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402

WORKFLOW = """celos.defineWorkflow({"id": "wf", "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(), "trigger": celos.alwaysTrigger(),
  "externalService": celos.commandExternalService("true"), "startTime": "2015-09-13T00:00Z"});"""


def server_with_tokens(prepare=None):
    server = CelosServer(workflows={"wf.js": WORKFLOW}, start=False)
    tokens = os.path.join(server.root, "tokens.json")
    write_tokens(tokens)
    server.args = ["--auth-tokens", tokens]
    if prepare:
        prepare(server)
    server.start()
    return server


def flood_run(seconds):
    server = server_with_tokens()
    try:
        target = "/api/v1/pause?id=wf&paused=true&junk=" + "x" * 15000
        log = os.path.join(server.logs, "audit.log")
        sent = 0
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            sent += len(flood_refused(server.port, target, 50))
        elapsed = time.monotonic() - started
        size = os.path.getsize(log) if os.path.exists(log) else 0
        metrics = server.get("/metrics").body
        suppressed = next((float(l.split()[1]) for l in metrics.splitlines()
                           if l.startswith("celos_audit_suppressed_total ")), None)
        return size / elapsed, sent / elapsed, suppressed
    finally:
        server.close()


def big_log(mb):
    def prepare(server):
        os.makedirs(server.logs)
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        line = json.dumps({"time": today + "T00:00:00.000Z", "node": "old:1",
                           "client": "10.0.0.1", "token": None, "method": "POST",
                           "path": "/api/v1/pause", "query": "id=wf&junk=" + "y" * 1900,
                           "status": 401}) + "\n"
        block = line * 1000
        with open(os.path.join(server.logs, "audit.log"), "w") as f:
            for _ in range(int(mb * 1e6 / len(block)) + 1):
                f.write(block)
    return server_with_tokens(prepare)


def read_run(mb, reads):
    server = big_log(mb)
    try:
        server.get("/api/v1/maintenance", headers=ADMIN_HEADER)
        before = rss_peak_kb(server.process.pid)
        times = []
        for _ in range(reads):
            t = time.monotonic()
            reply = server.get("/api/v1/audit?limit=1", headers=ADMIN_HEADER, timeout=300)
            times.append(time.monotonic() - t)
            assert reply.status == 200, reply
        return times, (rss_peak_kb(server.process.pid) - before) / 1024
    finally:
        server.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--reads", type=int, default=20)
    p.add_argument("--mb", type=float, default=200)
    a = p.parse_args()
    growth = []
    for i in range(a.runs):
        rate, sent, suppressed = flood_run(a.seconds)
        growth.append(rate)
        print("flood run %d: audit.log +%.1f KB/s, %.0f refused requests/s, suppressed %s"
              % (i + 1, rate / 1024, sent, suppressed), flush=True)
    print("audit.log growth under the flood: median %.1f KB/s, worst %.1f KB/s"
          % (statistics.median(growth) / 1024, max(growth) / 1024))
    times, rss = read_run(a.mb, a.reads)
    print("GET /api/v1/audit?limit=1 on a %.0f MB log: median %.1f ms, worst %.1f ms, "
          "peak RSS +%.1f MB" % (a.mb, statistics.median(times) * 1000, max(times) * 1000, rss))


if __name__ == "__main__":
    main()
