#!/usr/bin/env python3
"""Failover when the leader is cut off from PostgreSQL in the middle of a state write
(bench/README.md, "Hardening II", row 1; issue 33 point 1).

Two celos-server nodes (--lease-seconds 10 by default) on a private PostgreSQL; the leader, a,
reaches the database through test/tcp_proxy.py. Each run: a step of a is started, the proxy lets
its first slot write reach PostgreSQL and then holds every packet both ways (a partition; with
--freeze a is also SIGSTOPped and the network released, a frozen VM). Measured: seconds from
the hold until b answers as leader and one of b's steps went through (it writes the very slots
a's stuck transaction was writing). The partition lasts --hold seconds (default 40) or until b
stepped, whichever is longer; then a is released and the next run starts with a leading again
(b steps down). Prints each run, then the median and the worst."""

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "server"))
os.environ.setdefault("CELOS_SERVER", os.path.join(HERE, "..", "..", "build", "dev",
                                                   "celos-server", "celos-server"))
import pg_util  # noqa: E402
from server_process import CelosServer  # noqa: E402
from tcp_proxy import TcpProxy  # noqa: E402

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


def view(server):
    try:
        r = server.get("/api/v1/cluster", timeout=2)
        return r.json if r.status == 200 else None
    except OSError:
        return None


def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    raise SystemExit("timed out")


def one_run(a, b, proxy, run, args):
    wait_for(lambda: ((view(a) or {}).get("self") or {}).get("role") == "leader", 120)
    day = 14 + run  # a fresh day each run: every step has slots to write
    proxy.hold_after(b"INSERT INTO celos_slots")

    def step_a():
        try:
            a.post("/scheduler?time=2015-09-%dT03:00Z" % day, timeout=600)
        except OSError:
            pass  # a is cut off: its answer may never come
    threading.Thread(target=step_a, daemon=True).start()
    if not proxy.held.wait(60):
        raise SystemExit("a never wrote a slot")
    held = time.monotonic()
    if args.freeze:
        a.process.send_signal(signal.SIGSTOP)
        proxy.release()

    def stepped():
        if ((view(b) or {}).get("self") or {}).get("role") != "leader":
            return False
        r = b.post("/scheduler?time=2015-09-%dT03:00Z" % day, timeout=600)
        return r.status == 200 and r.json["workflows"] == 1 and not r.json["errors"]
    wait_for(stepped, 600)
    took = time.monotonic() - held
    time.sleep(max(0.0, args.hold - (time.monotonic() - held)))
    if args.freeze:
        a.process.send_signal(signal.SIGCONT)
    proxy.release()
    wait_for(lambda: ((view(a) or {}).get("self") or {}).get("role") == "standby", 120)
    # a leads again: b gives the lease up and stays out for one lease; the next run starts when
    # that is over, so that b can campaign at once when a's lease runs out.
    b.post("/api/v1/cluster/step-down?seconds=%d" % args.lease_seconds)
    stepped_down = time.monotonic()
    wait_for(lambda: ((view(a) or {}).get("self") or {}).get("role") == "leader", 120)
    time.sleep(max(0.0, args.lease_seconds + 1 - (time.monotonic() - stepped_down)))
    return took


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lease-seconds", type=int, default=10)
    parser.add_argument("--hold", type=float, default=40.0)
    parser.add_argument("--freeze", action="store_true", help="SIGSTOP instead of a partition")
    args = parser.parse_args()
    pg = pg_util.PrivatePostgres(fsync=True)
    uri = pg.create_database("failover")
    proxy = TcpProxy(("127.0.0.1", pg.port))
    jobs = tempfile.mkdtemp(prefix="celos-failover-bench-")
    nodes = []
    try:
        for name, port in (("a", proxy.port), ("b", pg.port)):
            server = CelosServer(workflows={"wf.js": WORKFLOW}, start=False,
                                 args=["--state-db", uri.replace(":%d/" % pg.port, ":%d/" % port),
                                       "--node-id", name, "--lease-seconds",
                                       str(args.lease_seconds)])
            server.db_flag = jobs
            server.start()
            nodes.append(server)
            if name == "a":
                wait_for(lambda: ((view(server) or {}).get("self") or {}).get("role") == "leader",
                         120)
        times = []
        for run in range(args.runs):
            took = one_run(nodes[0], nodes[1], proxy, run, args)
            times.append(took)
            print("run %d: b led and stepped %.2f s after the %s (lease %d s)"
                  % (run + 1, took, "freeze" if args.freeze else "hold", args.lease_seconds),
                  flush=True)
        print("median %.2f s, worst %.2f s over %d runs (target: lease + 5 = %d s)"
              % (statistics.median(times), max(times), len(times), args.lease_seconds + 5))
    finally:
        proxy.release()
        for server in nodes:
            if server.process and server.process.poll() is None:
                server.process.send_signal(signal.SIGCONT)
            server.close()
        proxy.close()
        pg.close()


if __name__ == "__main__":
    main()
