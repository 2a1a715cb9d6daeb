#!/usr/bin/env python3
"""Scheduler steps through celos-server's HTTP API, the way users meet them (issues 12, 18).

    bench/scale/bench_scale.py [--server build/dev/celos-server/celos-server] [-n 1000]
        [--latency-ms 20] [--io-concurrency 32] [--hdfs] [--late-hours 0] [--runs 3]
        [--backoff SECONDS] [--profile DIR]

Generates N hourly workflow files (one workflow each, 168 slots in the 7-day window) running
on the fake Oozie of test/hadoop (with --latency-ms on every answer), optionally with an
hdfsCheckTrigger on the fake WebHDFS (same latency), starts celos-server on a fresh --db and
measures, through POST /scheduler?time=...:

  start-up      until GET /workflow-list answers with N ids
  first step    every slot of the window goes WAITING -> READY and is written
  submit step   one slot per workflow is submitted and started (serial strategy, 1 at a time)
  status step   only the status of the N RUNNING slots is asked (Oozie's job list): nothing
                to submit, nothing changes; then every job succeeds and a step records it,
                and the next run's submit step submits the next slot
  per step      CPU seconds of celos-server and of each fake during each measured step (they
                share the machine's cores, where a real Oozie runs on its own hosts), and the
                step's phase timings from celos-server's summary log line
  RSS           of celos-server after the steps (VmRSS)
  reads         GET /workflow-list and /workflow-slots with wrk (when installed), 5 s each

With --hdfs every workflow has an hdfsCheckTrigger whose path never appears, and only its
--late-hours newest slots are in the window (startTime): the "check" step makes N x late-hours
distinct checks (1 = the current hour's slot; 24 = a day of late data), answered by one
LISTSTATUS per directory of waiting paths (issue 28: /in/NNNNN/<day>, two a workflow at 24).
With --hdfs --backoff S the server backs off data checks in steps of S seconds
(--data-check-backoff S) and 30 steps S seconds apart are measured instead: the WebHDFS
requests of each, as slots back off 1, 2, 4, ... steps, at most 10 minutes (issue 28).
Each measured step runs --runs times; the median and the worst are printed. With --profile DIR
each measured step of celos-server is recorded by `perf record -g` into DIR/<step>-<run>.data.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "hadoop"))
sys.path.insert(0, os.path.join(ROOT, "test"))
from fake_process import FakeServer  # noqa: E402
from e2e_util import free_port  # noqa: E402

NOW = "2015-09-20T00:30Z"      # the window: 2015-09-13T01:00 .. 2015-09-20T00:00
START = "2015-09-13T00:00Z"

WORKFLOW = """celos.defineWorkflow({
  "id": "wf-%(n)05d",
  "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(1),
  "trigger": %(trigger)s,
  "externalService": celos.oozieExternalService(
      {"oozie.wf.application.path": "/app/%(n)05d", "user.name": "celos"}, "%(oozie)s"),
  "startTime": "%(start)s"
});
"""


def http(method, url, timeout=600):
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read().decode()


def cpu_s(pid):
    """User + system CPU seconds of process pid and its threads so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


class Bench:
    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="celos-scale-")
        self.hdfs_root = os.path.join(self.dir, "hdfs")
        os.makedirs(self.hdfs_root)
        lat = ["--latency-ms", str(args.latency_ms)]
        self.oozie = FakeServer("fake_oozie.py", *lat)
        self.hdfs = FakeServer("fake_webhdfs.py", "--root", self.hdfs_root, *lat) if args.hdfs else None
        self.port = free_port()
        self.server = None
        self.server_args = []  # more celos-server options (the benchmarks built on this one)
        self.keep_dir = False  # close() leaves the directory (the caller removes it later)
        self.extra_pids = {}  # more processes whose CPU a step counts: {name: pid}
        self.workflow = WORKFLOW  # the file written per workflow (a benchmark may add fields)
        self.cpu = {}

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def write_workflows(self):
        wdir = os.path.join(self.dir, "workflows")
        os.makedirs(wdir)
        os.makedirs(os.path.join(self.dir, "defaults"))
        for n in range(self.args.n):
            if self.hdfs:
                trigger = ('celos.hdfsCheckTrigger("/in/%05d/${year}-${month}-${day}/${hour}00", '
                           '"webhdfs://127.0.0.1:%d")' % (n, self.hdfs.port))
            else:
                trigger = "celos.alwaysTrigger()"
            with open(os.path.join(wdir, "wf-%05d.js" % n), "w") as f:
                f.write(self.workflow % {"n": n, "trigger": trigger, "oozie": self.oozie.url("/oozie"),
                                    "start": self.start_time()})

    def start_time(self):
        """With --hdfs only the newest --late-hours slots are in the window (the slot of
        2015-09-20T00:00 and the late-hours - 1 before it); otherwise all 168."""
        if not self.hdfs:
            return START
        first = 24 * 7 - self.args.late_hours + 1  # hours after 2015-09-13T00:00
        return "2015-09-%02dT%02d:00Z" % (13 + first // 24, first % 24)

    def start_server(self):
        backoff = ["--data-check-backoff", str(self.args.backoff)] if self.args.backoff else []
        cmd = [self.args.server, "--port", str(self.port), *backoff, "--workflows",
               os.path.join(self.dir, "workflows"), "--defaults", os.path.join(self.dir, "defaults"),
               "--db", os.path.join(self.dir, "db"), "--create-db", "--logs",
               os.path.join(self.dir, "logs"), "--io-concurrency", str(self.args.io_concurrency),
               *self.server_args]
        self.log = open(os.path.join(self.dir, "server.err"), "w")
        started = time.monotonic()
        self.server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log)
        while True:
            try:
                status, body = http("GET", self.url("/workflow-list"), timeout=5)
                if status == 200 and len(json.loads(body)["ids"]) == self.args.n:
                    return time.monotonic() - started
            except OSError:
                pass
            if self.server.poll() is not None:
                raise SystemExit("celos-server exited; see " + self.log.name)
            time.sleep(0.02)

    def step(self, at=NOW, name=None):
        """One step; with a name, the CPU seconds celos-server and the fakes spent in it are
        kept in self.cpu[name] (2 cores are shared by all of them), and with --profile DIR
        celos-server is recorded by `perf record -g` during the step."""
        pids = {"celos": self.server.pid, "oozie": self.oozie.process.pid}
        pids.update(self.extra_pids)
        if self.hdfs:
            pids["webhdfs"] = self.hdfs.process.pid
        before = {k: cpu_s(p) for k, p in pids.items()}
        perf = self.start_perf(name)
        started = time.monotonic()
        status, body = http("POST", self.url("/scheduler?time=" + urllib.parse.quote(at)))
        took = time.monotonic() - started
        if perf:
            perf.send_signal(2)
            perf.wait()
        if status != 200:
            raise SystemExit("step failed: %s" % body)
        if name:
            spent = {k: round(cpu_s(p) - before[k], 2) for k, p in pids.items()}
            spent["phases_ms"], spent["data_checks"] = self.last_summary()
            self.cpu.setdefault(name, []).append(spent)
        return took, json.loads(body)

    def last_summary(self):
        """The phase timings and the data checks of the step's summary log line ("... 24000 data
        checks (2000 calls, ...); ms by phase: load+submit 812, ...")."""
        found, checks = "", ""
        logs = os.path.join(self.dir, "logs")
        for name in sorted(os.listdir(logs)):
            with open(os.path.join(logs, name), "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 65536))
                for line in f.read().decode(errors="replace").splitlines():
                    if "ms by phase: " in line:
                        found = line.rsplit("ms by phase: ", 1)[1].strip()
                        m = re.search(r"(\d+ data checks \([^)]*\))", line)
                        checks = m.group(1) if m else ""
        return found, checks

    def start_perf(self, name):
        if not (name and self.args.profile):
            return None
        os.makedirs(self.args.profile, exist_ok=True)
        out = os.path.join(self.args.profile, "%s-%d.data" % (name, len(self.cpu.get(name, []))))
        perf = subprocess.Popen(["perf", "record", "-g", "-F", "999", "-o", out, "-p",
                                 str(self.server.pid)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches
        return perf

    def wrk(self, path):
        if not shutil.which("wrk"):
            return "wrk not installed"
        out = subprocess.run(["wrk", "-t2", "-c32", "-d5s", "--latency", self.url(path)],
                             capture_output=True, text=True).stdout
        rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
        p99 = re.search(r"\s99%\s+(\S+)", out)
        return "%s req/s, p99 %s" % (rps.group(1) if rps else "?", p99.group(1) if p99 else "?")

    def run(self):
        a = self.args
        self.write_workflows()
        report = {"n": a.n, "latency_ms": a.latency_ms, "io_concurrency": a.io_concurrency}
        report["startup_s"] = self.start_server()
        if self.hdfs and self.args.backoff:
            self.run_backoff(report)
        elif self.hdfs:
            self.run_checks(report)
        else:
            self.run_submits(report)
        report["per_step"] = self.cpu
        report["rss_mib"] = rss_mib(self.server.pid)
        report["workflow_list"] = self.wrk("/workflow-list")
        report["workflow_slots"] = self.wrk("/workflow-slots?id=wf-00000")
        return report

    def run_submits(self, report):
        """Per run: a step that submits and starts one slot per workflow, a step that only asks
        the status of the N RUNNING slots (nothing to submit, nothing changes), then every job
        succeeds and a step records it (the next run submits the next slot)."""
        a = self.args
        report["first_step_s"] = self.step()[0]
        submits, statuses, requests = [], [], []
        for _ in range(a.runs):
            submits.append(self.step(name="submit")[0])
            self.oozie.control("/_control/reset")
            statuses.append(self.step(name="status")[0])
            requests.append(self.oozie.control("/_control/stats", "GET")["requests"])
            self.oozie.control("/_control/status?status=SUCCEEDED")
            self.step()
        report["submit_steps_s"] = submits
        report["status_steps_s"] = statuses
        report["oozie_requests_per_status_step"] = requests

    def measure_cycles(self):
        """A first step, then --runs cycles of the three steps of run_submits (submit, status,
        success), each measured: {"submit": [seconds, ...], "status": [...], "success": [...]}."""
        self.step()
        took = {"submit": [], "status": [], "success": []}
        for _ in range(self.args.runs):
            took["submit"].append(self.step(name="submit")[0])
            took["status"].append(self.step(name="status")[0])
            self.oozie.control("/_control/status?status=SUCCEEDED")
            took["success"].append(self.step(name="success")[0])
        return took

    def run_checks(self, report):
        """Every workflow's --late-hours newest slots wait for their (absent) input: each step
        checks N x late-hours distinct paths."""
        self.step()
        checks, requests = [], []
        for _ in range(self.args.runs):
            self.hdfs.control("/_control/reset")
            checks.append(self.step(name="check")[0])
            requests.append(self.hdfs.control("/_control/stats", "GET")["requests"])
        report["check_steps_s"] = checks
        report["webhdfs_requests_per_check_step"] = requests

    def run_backoff(self, report):
        """30 steps --backoff seconds apart from NOW (all in the hour of NOW's slot): the
        WebHDFS requests of each; the first checks every waiting slot."""
        start = datetime.datetime.strptime(NOW, "%Y-%m-%dT%H:%MZ")
        requests = []
        for k in range(30):
            at = start + datetime.timedelta(seconds=k * self.args.backoff)
            self.hdfs.control("/_control/reset")
            self.step(at=at.strftime("%Y-%m-%dT%H:%M:%SZ"), name="backoff")
            requests.append(self.hdfs.control("/_control/stats", "GET")["requests"])
        report["webhdfs_requests_per_backoff_step"] = requests
        report["webhdfs_requests_mean_per_step"] = sum(requests) / len(requests)

    def close(self):
        if self.server and self.server.poll() is None:
            self.server.terminate()
            self.server.wait(timeout=120)
        self.oozie.stop()
        if self.hdfs:
            self.hdfs.stop()
        if not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def paired_bench_args(args, mode):
    """The Bench options of one life of a paired benchmark (below) in `mode` (its name, "with" or
    "without"): submits on the fake Oozie; profiles, with --profile, into DIR/<mode>."""
    return argparse.Namespace(
        server=args.server, n=args.n, latency_ms=args.latency_ms, io_concurrency=32, hdfs=False,
        late_hours=1, runs=args.runs, backoff=0,
        profile=os.path.join(args.profile, mode) if args.profile else None)


def paired_arguments(description):
    """The options of the benchmarks that alternate celos-server lives in pairs (a feature off,
    then on): bench/lineage, bench/deadlines."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--server", default=os.path.join(ROOT, "build/dev/celos-server/celos-server"))
    p.add_argument("-n", type=int, default=1000)
    p.add_argument("--latency-ms", type=int, default=20)
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--profile", metavar="DIR",
                   help="perf record -g celos-server during each measured step into DIR/<mode>")
    return p.parse_args()


def paired_report(args, steps, kinds, off, on):
    """The report of such a benchmark: per step kind the median and the worst seconds of both
    modes and the difference of the medians. `steps` is {mode: {kind: [seconds, ...]}}."""
    report = {"n": args.n, "latency_ms": args.latency_ms, "pairs": args.pairs, "runs": args.runs}
    for kind in kinds:
        a, b = (steps[mode][kind] for mode in (off, on))
        a = {"median_s": round(statistics.median(a), 3), "worst_s": round(max(a), 3)}
        b = {"median_s": round(statistics.median(b), 3), "worst_s": round(max(b), 3)}
        report[kind] = {off: a, on: b, "difference_pct": round(
            100.0 * (b["median_s"] - a["median_s"]) / a["median_s"], 1)}
    return report


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default=os.path.join(ROOT, "build/dev/celos-server/celos-server"))
    p.add_argument("-n", type=int, default=1000)
    p.add_argument("--latency-ms", type=int, default=0)
    p.add_argument("--io-concurrency", type=int, default=32)
    p.add_argument("--hdfs", action="store_true")
    p.add_argument("--late-hours", type=int, default=1,
                   help="with --hdfs: waiting slots per workflow (1 = the current hour)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--backoff", type=int, default=0, metavar="SECONDS",
                   help="with --hdfs: --data-check-backoff SECONDS and 30 steps that far apart")
    p.add_argument("--profile", metavar="DIR",
                   help="perf record -g celos-server during each measured step into DIR")
    args = p.parse_args()
    if not 1 <= args.late_hours <= 168:
        p.error("--late-hours must be 1-168")
    bench = Bench(args)
    try:
        r = bench.run()
    finally:
        bench.close()
    for key in ("submit_steps_s", "status_steps_s", "check_steps_s"):
        if r.get(key):
            r[key.replace("steps_s", "median_s")] = statistics.median(r[key])
            r[key.replace("steps_s", "worst_s")] = max(r[key])
    print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()
