#!/usr/bin/env python3
"""Issue 33, datasets (bench/README.md "Hardening II"): latency of the instance listing and of
lineage with 10,000 announced instances, and of /health/live while two listings run, through
the real celos-server on the file database and (when PostgreSQL is installed) on a private
PostgreSQL (fsync on).

    bench/hardening/datasets.py [--build build/dev] [--runs 7] [--count 10000]
                                [--backend file|postgres|both]

The 10,000 instances are announced through the API (POST /api/v1/datasets/ext/instances, one
kept-alive connection); the time that takes is printed too."""

import argparse
import http.client
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "test"))
sys.path.insert(0, os.path.join(ROOT, "test", "server"))

FIRST_DAY = 6  # instances from 2015-09-06T00:00Z, one a minute
SLOT = "2015-09-12T23:00Z"
LISTING = "/api/v1/datasets/ext/instances?start=2015-09-06T00:00Z&end=2015-09-13T00:00Z"
WORKFLOW = """
celos.defineWorkflow({
    "id": "bulk", "schedule": celos.cronSchedule("0 0 23 * * ?"),
    "schedulingStrategy": celos.serialSchedulingStrategy(1),
    "inputs": [{"dataset": celos.dataset("ext", {"path": "/data/ext/${year}${month}${day}/${hour}${minute}"}),
                "mode": "new", "minInstances": %d}],
    "externalService": celos.commandExternalService("true"), "startTime": "2015-09-06T00:00Z"
});
"""


def minute(i):
    day, rest = divmod(i, 24 * 60)
    return "2015-09-%02dT%02d:%02dZ" % (FIRST_DAY + day, rest // 60, rest % 60)


def timed_get(port, target, timeout=600):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        started = time.monotonic()
        conn.request("GET", target)
        reply = conn.getresponse()
        body = reply.read()
        took = time.monotonic() - started
        assert reply.status == 200, (target, reply.status, body[:300])
        return took, len(body)
    finally:
        conn.close()


def announce(port, count):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    started = time.monotonic()
    for i in range(count):
        conn.request("POST", "/api/v1/datasets/ext/instances?time=" + minute(i), body=b"")
        reply = conn.getresponse()
        body = reply.read()
        assert reply.status == 200, (i, reply.status, body)
    conn.close()
    return time.monotonic() - started


def summary(name, seconds):
    ms = sorted(s * 1000 for s in seconds)
    print("  %-44s median %8.1f ms  worst %8.1f ms  (%d runs)"
          % (name, statistics.median(ms), ms[-1], len(ms)), flush=True)


def live_during_listings(port, runs):
    """/health/live latencies while two clients list all 10,000 instances back to back."""
    stop = threading.Event()

    def lister():
        while not stop.is_set():
            timed_get(port, LISTING + "&limit=10000")

    threads = [threading.Thread(target=lister) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    lives = []
    for _ in range(runs * 20):
        lives.append(timed_get(port, "/health/live")[0])
        time.sleep(0.02)
    stop.set()
    for t in threads:
        t.join()
    return lives


def bench(server, runs, count):
    from server_process import CelosServer  # noqa: F401 (CELOS_SERVER is set by main)
    print("  announcing %d instances through the API: %.1f s" % (count, announce(server.port, count)),
          flush=True)
    timed_get(server.port, LISTING)  # warm up (page cache, first connection)
    summary("GET .../instances (default limit 1000)",
            [timed_get(server.port, LISTING)[0] for _ in range(runs)])
    summary("GET .../instances?limit=10000",
            [timed_get(server.port, LISTING + "&limit=10000")[0] for _ in range(runs)])
    summary("GET /api/v1/lineage (%d inputs)" % count,
            [timed_get(server.port, "/api/v1/lineage?id=bulk&time=" + SLOT)[0] for _ in range(runs)])
    lives = live_during_listings(server.port, runs)
    summary("GET /health/live during 2 listings", lives)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "dev"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--backend", choices=["file", "postgres", "both"], default="both")
    args = parser.parse_args()
    os.environ["CELOS_SERVER"] = os.path.abspath(os.path.join(args.build, "celos-server",
                                                              "celos-server"))
    import pg_util
    from server_process import CelosServer

    backends = ["file", "postgres"] if args.backend == "both" else [args.backend]
    for backend in backends:
        pg = None
        extra = []
        if backend == "postgres":
            why_not = pg_util.available()
            if why_not:
                print("postgres: skipped:", why_not)
                continue
            pg = pg_util.PrivatePostgres(fsync=True)
            extra = ["--state-db", pg.create_database("bench_datasets")]
        server = CelosServer(workflows={"bulk.js": WORKFLOW % args.count}, args=extra)
        try:
            print("%s database:" % backend, flush=True)
            bench(server, args.runs, args.count)
        finally:
            server.close()
            if pg:
                pg.close()


if __name__ == "__main__":
    main()
