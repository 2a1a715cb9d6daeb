#!/usr/bin/env python3
"""Takeover time after kill -9 of the leader (bench/README.md): two celos-server nodes with
--lease-seconds 10 on a private PostgreSQL; prints seconds from SIGKILL until the other node
answers GET /api/v1/cluster with itself as leader. Repeats `--runs` times."""

import argparse
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "server"))
os.environ.setdefault("CELOS_SERVER", os.path.join(HERE, "..", "..", "build", "dev",
                                                   "celos-server", "celos-server"))
import pg_util  # noqa: E402
from server_process import CelosServer  # noqa: E402


def leader_of(server):
    try:
        r = server.get("/api/v1/cluster", timeout=2)
        return r.json["leader"]["id"] if r.status == 200 and r.json["leader"] else None
    except OSError:
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lease-seconds", type=int, default=10)
    args = parser.parse_args()
    pg = pg_util.PrivatePostgres(fsync=True)
    uri = pg.create_database("takeover")
    nodes = {}
    try:
        for name in ("a", "b"):
            nodes[name] = CelosServer(args=["--state-db", uri, "--node-id", name,
                                            "--lease-seconds", str(args.lease_seconds)])
        for run in range(args.runs):
            while not leader_of(nodes["a"]):
                time.sleep(0.05)
            leader = leader_of(nodes["a"])
            other = "b" if leader == "a" else "a"
            victim = nodes[leader]
            port = victim.port
            killed = time.monotonic()
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait()
            while leader_of(nodes[other]) != other:
                time.sleep(0.05)
            print("run %d: takeover after %.2f s (lease %d s)"
                  % (run + 1, time.monotonic() - killed, args.lease_seconds), flush=True)
            victim.close()
            nodes[leader] = CelosServer(start=False, args=victim.args)
            nodes[leader].port = port
            nodes[leader].start()
    finally:
        for server in nodes.values():
            server.close()
        pg.close()


if __name__ == "__main__":
    main()
