#!/usr/bin/env python3
"""Status of N RUNNING Kubernetes slots in one step, measured through celos-server's HTTP API
(issue 30: N = 10,000 with the fake API server at 20 ms: <= 1 s and <= 2 list calls).

    bench/kubernetes/bench_kube.py [--server build/dev/celos-server/celos-server]
        [-n 10000] [--workflows 100] [--latency-ms 20] [--runs 5]

Starts test/kubernetes/fake_kube_apiserver.py (HTTPS, a token, --latency-ms on every answer)
with unschedulable pods (the Jobs stay active with Pending pods: no local processes, and the
status step also has to ask for the pods), writes --workflows hourly workflow files whose
N/--workflows slots each are READY at once (serialSchedulingStrategy(N/--workflows)), starts
celos-server on a fresh --db and steps through POST /scheduler?time=...:

  ready step    every slot WAITING -> READY
  submit step   N Jobs created suspended, recorded RUNNING, resumed
  status step   only the N RUNNING slots are asked about (nothing else changes): the
                first starts celos's watches (and lists meanwhile); then timed --runs
                times; the fake's ledger counts the API requests of each (watch requests
                apart: a watch stays open across steps)

Prints the median and the worst status step, and the list calls per status step.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test"))
sys.path.insert(0, os.path.join(ROOT, "test", "kubernetes"))
from e2e_util import free_port  # noqa: E402
from kube_util import FakeKube  # noqa: E402

START = "2015-09-13T00:00Z"


def http(method, url, timeout=900):
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read().decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=os.path.join(ROOT, "build/dev/celos-server/celos-server"))
    parser.add_argument("-n", type=int, default=10000)
    parser.add_argument("--workflows", type=int, default=100)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--settle", type=float, default=0,
                        help="seconds to wait after the first status step (celos's watches list "
                        "and open their streams meanwhile)")
    args = parser.parse_args()
    per = args.n // args.workflows
    now = "2015-09-13T%02d:%02d:30Z" % ((per - 1) // 60, (per - 1) % 60)
    root = tempfile.mkdtemp(prefix="celos-kube-bench-")
    fake = FakeKube(root, "--latency-ms", str(args.latency_ms))
    fake.control("unschedulable?on=1")
    config = fake.kubeconfig("bench")
    for d in ("workflows", "defaults", "db", "logs"):
        os.makedirs(os.path.join(root, d))
    for w in range(args.workflows):
        with open(os.path.join(root, "workflows", "wf-%03d.js" % w), "w") as f:
            f.write("""celos.defineWorkflow({id: "wf-%03d", schedule: celos.minutelySchedule(),
  schedulingStrategy: celos.serialSchedulingStrategy(%d), trigger: celos.alwaysTrigger(),
  externalService: celos.kubernetesExternalService({kubeconfig: %s, image: "debian:12",
                                                    command: ["true"]}),
  startTime: "%s"});
""" % (w, per, json.dumps(config), START))
    port = free_port()
    log = open(os.path.join(root, "server.log"), "w")
    server = subprocess.Popen([args.server, "--port", str(port), "--workflows",
                               os.path.join(root, "workflows"), "--defaults",
                               os.path.join(root, "defaults"), "--db", os.path.join(root, "db"),
                               "--logs", os.path.join(root, "logs")],
                              stdout=subprocess.DEVNULL, stderr=log)
    base = "http://127.0.0.1:%d" % port
    try:
        for _ in range(600):
            try:
                if http("GET", base + "/workflow-list")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)

        def step(name):
            fake.request("POST", "/_control/reset", token=False)
            started = time.monotonic()
            status, body = http("POST", base + "/scheduler?time=" + now)
            took = time.monotonic() - started
            requests = fake.request("GET", "/_control/requests", token=False)[2]
            watches = [r for r in requests if r["query"].get("watch")]
            requests = [r for r in requests if not r["query"].get("watch")]
            lists = [r for r in requests if r["method"] == "GET" and
                     (r["path"].endswith("/jobs") or r["path"].endswith("/pods"))]
            log.flush()
            with open(os.path.join(root, "server.log")) as f:
                summary = [line for line in f if "finished in" in line][-1:]
            print("%-12s %6.2f s  %5d API requests, %d list calls, %d watches started  %s" % (
                name, took, len(requests), len(lists), len(watches),
                "".join(summary).strip()[-260:]), flush=True)
            return took, len(lists), len(requests)

        step("ready")
        step("submit")
        running = sum(1 for k in fake.objects()["jobs"])
        print("Jobs at the fake: %d" % running, flush=True)
        first = step("status")  # celos's watches start here; this step still lists
        print("first status step: %.2f s" % first[0], flush=True)
        if args.settle:
            time.sleep(args.settle)  # the watches' lists and streams
        times, lists, requests = zip(*[step("status") for _ in range(args.runs)])
        print("status step of %d RUNNING slots at %d ms: median %.2f s, worst %.2f s; list calls "
              "per step: %s; API requests per step: %s" % (
                  running, args.latency_ms, statistics.median(times), max(times),
                  sorted(set(lists)), sorted(set(requests))))
    finally:
        server.kill()
        server.wait()
        fake.stop()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
