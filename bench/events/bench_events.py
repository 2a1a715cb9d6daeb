#!/usr/bin/env python3
"""Issue 28's latencies through celos-server's HTTP API: event -> consumer submitted.

    CELOS_SERVER=build/dev/celos-server/celos-server python3 bench/events/bench_events.py [--runs 3]
        [--workflows 1000] [--slots 10] [--samples 20] [--only NAME,...] [--storm-connections 256]
        [--state-db file|postgresql]

Each measure starts a real celos-server with --autoSchedule 60 (the periodic step, which the
events must beat) and the fakes of test/ at 20 ms latency (fake_oozie.py --latency-ms 20):
  announcement  N workflows, each consuming a dataset of its own, `--slots` waiting hourly slots
                each: announce one instance, poll /slot-state until the consumer's slot is
                RUNNING (samples announcements one after another)
  chain         5 command workflows, each a successTrigger of the one before: rerun the first,
                wait for the last's SUCCESS (no manual step)
  oozie         an Oozie workflow and its successTrigger follower: the fake Oozie sets the job
                SUCCEEDED and calls the notification URL; wait for the follower's RUNNING
  file          a workflow waiting for a local _READY file: one step by hand, then the file is
                written; wait for RUNNING
  storm         10,000 announcements (10 hours of 1,000 datasets) as fast as 256 kept-alive
                connections take them (asyncio) while one thread reads /workflow-list and
                another reads every consumer's slots as celos-ui does (/multi-workflow-slots
                every 0.1 s): read latency p99, the time until every announcement was accepted,
                until every consumer's first slot was RUNNING, and until every announced slot
                had left WAITING (its consumer stepped after the announcement), all from the
                first announcement (the consumers are command jobs: they start on this machine)
  storm-oozie   the same with the consumers' jobs on the fake Oozie (they run elsewhere)
  client        the storm's client alone: 10,000 POSTs to a path answered 404 at once (how fast
                the storm is sent)
With `--state-db postgresql` every server keeps its state in a database of its own on a private
PostgreSQL 15 (test/pg_util.py, fsync on); the default is the file state database.
Prints median and worst over the runs of each measure (client-side wall clock; polling every
5 ms adds up to 5 ms). The servers' directories are removed after the last run: on a file
system that is slow to create files after many were removed (ext4 without a journal), start
the benchmark a few minutes after anything removed thousands of files (bench/README.md)."""

import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "server"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "hadoop"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test"))
from server_process import CelosServer  # noqa: E402
from fake_process import FakeServer  # noqa: E402
from e2e_util import post_all  # noqa: E402

HOUR = datetime.datetime.now(datetime.timezone.utc).replace(minute=0, second=0, microsecond=0)


def iso(t, millis=True):
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z" if millis else "%Y-%m-%dT%H:%MZ")


def command_wf(wid, start, trigger="celos.alwaysTrigger()", fields="", command="true"):
    return """celos.defineWorkflow({"id": %s, "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(), "trigger": %s,
  "externalService": celos.commandExternalService(%s), "startTime": "%s", %s});
""" % (json.dumps(wid), trigger, json.dumps(command), iso(start, False), fields)


def status(s, wid, t):
    r = s.get("/slot-state?id=%s&time=%s" % (wid, iso(t)))
    return r.json["status"] if r.status == 200 else "WAITING"


def wait(s, wid, t, statuses, timeout=120):
    deadline = time.monotonic() + timeout
    while status(s, wid, t) not in statuses:
        if time.monotonic() > deadline:
            raise RuntimeError("%s@%s never reached %s" % (wid, iso(t), statuses))
        time.sleep(0.005)
    return time.monotonic()


# --state-db postgresql: the private PostgreSQL, and how many databases it was asked for.
POSTGRES = {"server": None, "databases": 0}


def state_db_args():
    if POSTGRES["server"] is None:
        return []
    POSTGRES["databases"] += 1
    return ["--state-db", POSTGRES["server"].create_database("bench%d" % POSTGRES["databases"])]


def server(workflows, defaults=None, args=()):
    s = CelosServer(workflows=workflows, defaults=defaults,
                    args=["--autoSchedule", "60", "--io-concurrency", "32"] + list(args)
                    + state_db_args())
    s.get("/workflow-list", timeout=120)  # loaded
    return s


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def bench_announcement(n, slots, samples):
    start = HOUR - datetime.timedelta(hours=slots)
    defaults = {"ds.js": "".join('celos.dataset("d%d", {"path": "/tmp/celos-bench/d%d/${hour}"});\n'
                                 % (i, i) for i in range(n))}
    files = {"w%d.js" % i: 'importDefaults("ds");\n' + command_wf(
        "w%d" % i, start, trigger="undefined", fields='"inputs": ["d%d"],' % i) for i in range(n)}
    s = server(files, defaults)
    try:
        out = []
        for k in range(samples):
            i = (k * 37) % n
            t0 = time.monotonic()
            r = s.post("/api/v1/datasets/d%d/instances?time=%s" % (i, iso(start)))
            assert r.status == 200, r
            out.append(wait(s, "w%d" % i, start, ("RUNNING", "SUCCESS")) - t0)
        return out
    finally:
        close(s)


def bench_chain():
    start = HOUR - datetime.timedelta(hours=1)
    files = {"c0.js": command_wf("c0", start)}
    for i in range(1, 5):
        files["c%d.js" % i] = command_wf("c%d" % i, start,
                                         trigger='celos.successTrigger("c%d")' % (i - 1))
    s = server(files)
    try:
        t0 = time.monotonic()
        assert s.post("/api/v1/rerun?id=c0&time=" + iso(start)).status == 200
        return [wait(s, "c4", start, ("SUCCESS",)) - t0]
    finally:
        close(s)


def bench_oozie(oozie):
    start = HOUR - datetime.timedelta(hours=1)
    wf = """celos.defineWorkflow({"id": %s, "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(), "trigger": %s,
  "externalService": celos.oozieExternalService({"oozie.wf.application.path": "/a",
      "user.name": "celos"}, "%s"), "startTime": "%s"});
"""
    files = {"job.js": wf % ('"job"', "celos.alwaysTrigger()", oozie.url("/oozie"), iso(start, False)),
             "after.js": wf % ('"after"', 'celos.successTrigger("job")', oozie.url("/oozie"),
                               iso(start, False))}
    s = server(files)
    try:
        assert s.post("/api/v1/rerun?id=job&time=" + iso(start)).status == 200
        wait(s, "job", start, ("RUNNING",))
        job = s.get("/slot-state?id=job&time=" + iso(start)).json["externalID"]
        t0 = time.monotonic()
        req = urllib.request.Request(oozie.url("/_control/status?id=%s&status=SUCCEEDED" % job),
                                     method="POST", data=b"")
        urllib.request.urlopen(req, timeout=30).read()
        return [wait(s, "after", start, ("RUNNING", "SUCCESS")) - t0]
    finally:
        close(s)


def bench_file():
    start = HOUR - datetime.timedelta(hours=1)
    s = CelosServer(start=False, args=["--autoSchedule", "60"] + state_db_args())
    data = os.path.join(s.root, "data")
    s.write_workflow("f.js", command_wf("f", start, trigger=(
        'celos.hdfsCheckTrigger("%s/${year}${month}${day}${hour}/_READY", "file:///")' % data)))
    s.start()
    try:
        assert s.post("/scheduler?ids=f").status == 200
        d = os.path.join(data, start.strftime("%Y%m%d%H"))
        t0 = time.monotonic()
        os.makedirs(d)
        open(os.path.join(d, "_READY"), "w").close()
        return [wait(s, "f", start, ("RUNNING", "SUCCESS")) - t0]
    finally:
        close(s)


def oozie_wf(wid, start, oozie, fields=""):
    return """celos.defineWorkflow({"id": %s, "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(), "trigger": undefined,
  "externalService": celos.oozieExternalService({"oozie.wf.application.path": "/a",
      "user.name": "celos"}, "%s"), "startTime": "%s", %s});
""" % (json.dumps(wid), oozie.url("/oozie"), iso(start, False), fields)


def watch_storm(s, start, hours, n, t0, stop, seen):
    """Reads the consumers' slots of the announced hours as celos-ui does (one
    /multi-workflow-slots for all of them, every 0.1 s) and notes, in seconds after t0, when
    every consumer's first slot was RUNNING and when every announced slot had left WAITING (its
    consumer stepped after the announcement)."""
    # Up to half an hour past the last announced hour: the same slots whether `end` counts.
    target = "/multi-workflow-slots?start=%s&end=%s" % (
        iso(start), iso(start + datetime.timedelta(hours=hours - 1, minutes=30)))
    while not stop.is_set() and len(seen) < 2:
        r = s.get(target, timeout=60)
        at = time.monotonic() - t0
        slots = [slot for w in r.json["workflows"] for slot in w["slots"]]
        first = [slot for slot in slots if slot["time"] == iso(start)]
        if len(first) == n and all(x["status"] in ("RUNNING", "SUCCESS") for x in first):
            seen.setdefault("running", at)
        if len(slots) == n * hours and all(x["status"] != "WAITING" for x in slots):
            seen.setdefault("stepped", at)
        time.sleep(0.1)


# The servers' directories, removed after the last run. Removing one storm's 10,000 slot files
# right before the next storm slowed that storm's file creation by up to half: ext4 without a
# journal (this machine kind's disk) skips inodes freed in the last minutes one by one when it
# allocates a new one (bench/README.md, issue 28).
LEFT = []


def close(s):
    s.close(remove=False)
    LEFT.append(s.root)


def bench_storm(oozie=None, n=1000, announcements=10000, connections=256):
    """With `oozie`, the consumers' jobs go to the fake Oozie (they run elsewhere, as in
    production); without, each is a local command job (10,000 of them, on this machine).
    Returns the seconds until every announcement was accepted, until every consumer's first
    slot (its first 1,000 announcements) was RUNNING, until every announced slot had left
    WAITING, and the reads' p99."""
    start = HOUR - datetime.timedelta(hours=12)
    hours = announcements // n
    defaults = {"ds.js": "".join('celos.dataset("d%d", {"path": "/tmp/celos-bench/d%d/${hour}"});\n'
                                 % (i, i) for i in range(n))}
    def consumer(i):
        fields = '"inputs": ["d%d"],' % i
        if oozie:
            return oozie_wf("w%d" % i, start, oozie, fields=fields)
        return command_wf("w%d" % i, start, trigger="undefined", fields=fields)
    files = {"w%d.js" % i: 'importDefaults("ds");\n' + consumer(i) for i in range(n)}
    s = server(files, defaults)
    reads, stop, seen = [], threading.Event(), {}

    def reader():
        while not stop.is_set():
            t = time.monotonic()
            s.get("/workflow-list")
            reads.append(time.monotonic() - t)
            time.sleep(0.01)

    paths = ["/api/v1/datasets/d%d/instances?time=%s"
             % (j % n, iso(start + datetime.timedelta(hours=j // n))) for j in range(announcements)]
    try:
        t0 = time.monotonic()
        threads = [threading.Thread(target=reader),
                   threading.Thread(target=watch_storm, args=(s, start, hours, n, t0, stop, seen))]
        for t in threads:
            t.start()
        refused = post_all(s.port, paths, connections)
        sent = time.monotonic() - t0
        if refused:
            raise SystemExit("storm: %d announcements refused (HTTP %s)" % (len(refused), refused[0][1]))
        deadline = time.monotonic() + 300
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        stop.set()
        for t in threads:
            t.join()
        if len(seen) < 2:
            raise RuntimeError("storm: after 300 s only %s" % seen)
        return sent, seen["running"], seen["stepped"], pct(reads, 99)
    finally:
        close(s)


def bench_client(announcements=10000, connections=256):
    """The storm's client alone: the same POSTs, as fast, to a path that celos-server answers 404
    at once (no worker, no write). How long the storm takes to send, whatever the server does."""
    s = server({})
    try:
        t0 = time.monotonic()
        refused = post_all(s.port, ["/api/v1/nowhere/%d" % i for i in range(announcements)],
                           connections)
        took = time.monotonic() - t0
        if len(refused) != announcements or any(status != 404 for _, status in refused):
            raise SystemExit("client: expected %d answers 404, got %s" % (announcements, refused[:3]))
        return [took]
    finally:
        close(s)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--workflows", type=int, default=1000)
    p.add_argument("--slots", type=int, default=10)
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--only", default="")
    p.add_argument("--storm-connections", type=int, default=256)
    p.add_argument("--state-db", choices=("file", "postgresql"), default="file")
    a = p.parse_args()
    if a.state_db == "postgresql":
        import pg_util
        POSTGRES["server"] = pg_util.PrivatePostgres(fsync=True)
    oozie = FakeServer("fake_oozie.py", "--latency-ms", "20")
    results = {}
    try:
        for run in range(a.runs):
            for name, fn in [("announcement", lambda: bench_announcement(a.workflows, a.slots, a.samples)),
                             ("chain", bench_chain), ("oozie", lambda: bench_oozie(oozie)),
                             ("file", bench_file), ("storm", lambda: bench_storm(connections=a.storm_connections)),
                             ("storm-oozie", lambda: bench_storm(oozie, connections=a.storm_connections)),
                             ("client", lambda: bench_client(connections=a.storm_connections))]:
                if a.only and name not in a.only.split(","):
                    continue
                v = fn()
                results.setdefault(name, []).append(v)
                print(run, name, v if name.startswith("storm") else
                      "p50 %.3f p99 %.3f max %.3f" % (pct(v, 50), pct(v, 99), max(v)), flush=True)
    finally:
        oozie.stop()
        for root in LEFT:
            shutil.rmtree(root, ignore_errors=True)
        if POSTGRES["server"]:
            POSTGRES["server"].close()
    print("load:", os.getloadavg())
    for name, runs in results.items():
        if name.startswith("storm"):
            for k, label in enumerate(["accepted in", "first slots RUNNING in",
                                       "every announced slot stepped in", "read p99"]):
                vals = [r[k] for r in runs]
                print("%s %s: median %.3f s, worst %.3f s" % (name, label, statistics.median(vals), max(vals)))
            continue
        p50s = [pct(v, 50) for v in runs]
        p99s = [pct(v, 99) for v in runs]
        print("%s: p50 median %.3f s worst %.3f s; p99 median %.3f s worst %.3f s"
              % (name, statistics.median(p50s), max(p50s), statistics.median(p99s), max(p99s)))


if __name__ == "__main__":
    main()
