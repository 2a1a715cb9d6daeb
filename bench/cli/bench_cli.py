"""How long `celos` commands take against a local celos-server with 1,000 hourly workflows
(issue 31: <= 100 ms, `celos status` included). Each command runs as a new process, as an
operator runs it: the wall time includes exec, the request and the formatting.

  CELOS_SERVER=build/release/celos-server/celos-server \
  CELOS_CLI=build/release/celos-cli/celos python3 bench/cli/bench_cli.py [N]"""

import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "server"))
from server_process import CelosServer  # noqa: E402

CLI = os.environ.get("CELOS_CLI", "celos")
NOW = "2015-09-14T00:30Z"  # a day of hourly slots behind it
RUNS = 20


def workflow(i):
    return """celos.defineWorkflow({"id": "wf-%04d", "schedule": celos.hourlySchedule(),
 "schedulingStrategy": celos.serialSchedulingStrategy(24), "trigger": celos.alwaysTrigger(),
 "externalService": celos.commandExternalService("true"), "startTime": "2015-09-13T00:00Z"});
""" % i


def timed(args):
    """Median and max wall milliseconds of RUNS runs of `celos args`."""
    env = {k: v for k, v in os.environ.items() if k != "CELOS_SERVER"}
    walls = []
    for _ in range(RUNS):
        start = time.monotonic()
        result = subprocess.run([CLI] + args, stdout=subprocess.DEVNULL, env=env)
        walls.append((time.monotonic() - start) * 1000)
        assert result.returncode == 0, args
    return statistics.median(walls), max(walls)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    server = CelosServer(workflows={"wf-%04d.js" % i: workflow(i) for i in range(n)})
    try:
        for _ in range(3):  # slots READY, then RUNNING, then SUCCESS
            assert server.post("/scheduler?time=" + NOW, timeout=600).status == 200
        url = server.url("")
        commands = [
            ["status", "--from", "2015-09-13T00:30Z", "--to", NOW],
            ["status", "--from", "2015-09-13T00:30Z", "--to", NOW, "-o", "json"],
            ["status", "--failed", "--from", "2015-09-13T00:30Z", "--to", NOW],
            ["slots", "wf-0500", "--from", "2015-09-13T00:00Z", "--to", NOW],
            ["why", "wf-0500", "2015-09-13T12:00Z"],
            ["history", "wf-0500", "2015-09-13T12:00Z"],
            ["workflows"],
        ]
        print("%d workflows, %d runs each: median / max wall ms" % (n, RUNS))
        for args in commands:
            median, worst = timed(args + ["--server", url])
            print("  celos %-60s %6.1f / %6.1f" % (" ".join(args), median, worst))
    finally:
        server.close()


if __name__ == "__main__":
    main()
