#!/usr/bin/env python3
"""End-to-end timing of celos-ui: N generated hourly workflows in a real celos-server, celos-ui in
front of it, and GET /ui timed from outside (HTTP request to the last byte, as a browser waits).

    bench/ui/bench_e2e.py --server build/x/celos-server/celos-server \
        --ui build/x/celos-ui/celos-ui --workflows 100 500 [--runs 10] [--step]

--step runs one scheduler step first so that every slot has a stored state (slow: it writes a
file per slot); without it the slots are WAITING from the schedule, which costs celos-server the
same directory reads."""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=5).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("no answer from " + url)


def run(args, count):
    root = tempfile.mkdtemp(prefix="celos-ui-bench-")
    procs = []
    try:
        dirs = {d: os.path.join(root, d) for d in ("workflows", "defaults", "db", "logs")}
        for d in dirs.values():
            os.makedirs(d)
        start = time.strftime("%Y-%m-%dT%H:00Z", time.gmtime(time.time() - 7 * 86400))
        for i in range(count):
            with open(os.path.join(dirs["workflows"], "wf%04d.js" % i), "w") as f:
                f.write('celos.defineWorkflow({id: "workflow-%04d-some-descriptive-name", '
                        'startTime: "%s", schedule: celos.hourlySchedule(), '
                        'schedulingStrategy: celos.serialSchedulingStrategy(), '
                        'trigger: celos.alwaysTrigger(), '
                        'externalService: celos.commandExternalService("true")});' % (i, start))
        server_port, ui_port = free_port(), free_port()
        procs.append(subprocess.Popen(
            [args.server, "--port", str(server_port), *sum(([f"--{k}", v] for k, v in dirs.items()), [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        celos = "http://127.0.0.1:%d" % server_port
        wait_http(celos + "/workflow-list")
        if args.step:
            urllib.request.urlopen(urllib.request.Request(celos + "/scheduler", data=b"", method="POST"),
                                   timeout=600).read()
        procs.append(subprocess.Popen([args.ui, "--port", str(ui_port), "--celos", celos],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        ui = "http://127.0.0.1:%d/ui" % ui_port
        wait_http(ui)
        for zoom in (60, 1440):
            times, size = [], 0
            for _ in range(args.runs):
                t0 = time.perf_counter()
                body = urllib.request.urlopen("%s?zoom=%d" % (ui, zoom), timeout=60).read()
                times.append((time.perf_counter() - t0) * 1000)
                size = len(body)
            print("e2e GET /ui zoom %4d  %4d workflows  median %7.1f ms  worst %7.1f ms  page %5d KiB"
                  % (zoom, count, statistics.median(times), max(times), size // 1024))
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--ui", required=True)
    parser.add_argument("--workflows", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--step", action="store_true")
    args = parser.parse_args()
    for count in args.workflows:
        run(args, count)


if __name__ == "__main__":
    main()
