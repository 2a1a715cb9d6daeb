"""Issue 33 point 4: a leader that lost its lease changes no file (SPEC §11).

Two celos-server nodes on one private PostgreSQL. The leader's step is frozen with SIGSTOP at a
known point: it has picked a READY slot whose input is read in mode new, and waits for the
announcements table, which the test holds locked (ACCESS EXCLUSIVE) until the leader is stopped.
The other node takes over and runs the slot's job, which writes half its output and waits. Then
the old leader continues: before the fence it went on to remove that "incomplete" output (and the
slot ended SUCCESS with half of it lost); now it confirms its lease first, finds it lost and
stops. The output must be whole at the end and the job must have run once."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also run by bench/hardening
from cluster_process import Cluster, leader_of  # noqa: E402
from server_process import SERVER  # noqa: E402
import pg_util  # noqa: E402 (put on the path by cluster_process)
from e2e_util import poll  # noqa: E402

LEASE = 3
NOW = "2015-09-14T00:30Z"  # one slot: 00:00
SLOT = "2015-09-14T00:00Z"

DATASETS = """
var IN = celos.dataset("in", {"path": "%(d)s/in/${year}${month}${day}/${hour}"});
var OUT = celos.dataset("out", {"path": "%(d)s/out/${year}${month}${day}/${hour}"});
"""

# Writes half its output, waits for the test's go, writes the rest (mkdir -p again: a removed
# directory comes back, as a real job's next part file would).
JOB = ("echo run >> %(d)s/runs; mkdir -p %(out)s && echo a > %(out)s/part-0 && "
       "while [ ! -e %(d)s/go ]; do sleep 0.1; done; mkdir -p %(out)s && echo b > %(out)s/part-1")

WORKFLOW = """
importDefaults("datasets");
celos.defineWorkflow({
    "id": "fenced", "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "externalService": celos.commandExternalService(%s),
    "startTime": "2015-09-14T00:00Z",
    "inputs": [{"dataset": IN, "mode": "new"}], "outputs": [OUT]
});
"""


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class FrozenLeaderTest(unittest.TestCase):
    def setUp(self):
        self.cluster = Cluster(lease=LEASE, database="fence")  # one jobs directory: shared
        self.nodes = self.cluster.nodes
        self.pg = self.cluster.pg
        self.data = os.path.join(self.cluster.shared, "data")
        os.makedirs(self.data)
        self.out = os.path.join(self.data, "out", "20150914", "00")
        command = JOB % {"d": self.data, "out": self.out}
        self.cluster.workflows = {"wf.js": WORKFLOW % json.dumps(command)}
        self.cluster.defaults = {"datasets.js": DATASETS % {"d": self.data}}
        self.cluster.start(("a", "b"))
        self.locker = None

    def tearDown(self):
        if self.locker and self.locker.poll() is None:
            self.locker.kill()
        for server in self.nodes.values():
            if server.process and server.process.poll() is None:
                server.process.send_signal(signal.SIGCONT)
        with open(os.path.join(self.data, "go"), "w"):
            pass
        self.cluster.close()

    def sql(self, statement):
        return self.pg.psql("fence", statement)

    def lock_announcements(self):
        """A psql session holding celos_announced locked until release_announcements()."""
        self.locker = subprocess.Popen(
            [os.path.join(pg_util.BIN, "psql"), "-qAt", "-h", self.pg.dir, "-p",
             str(self.pg.port), "-U", "celos", "-d", "fence"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            text=True)
        self.locker.stdin.write("BEGIN; LOCK TABLE celos_announced IN ACCESS EXCLUSIVE MODE;\n")
        self.locker.stdin.flush()
        poll(lambda: self.sql(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE c.relname = 'celos_announced' AND l.mode = 'AccessExclusiveLock' "
            "AND l.granted") == "1", "the test's lock on celos_announced")

    def release_announcements(self):
        self.locker.stdin.write("COMMIT;\n")
        self.locker.stdin.close()
        self.locker.wait(timeout=30)

    def test_a_frozen_leader_that_wakes_removes_no_output_of_the_new_leader(self):
        self.scenario({})

    def scenario(self, times):
        """The whole story; `times` gets the monotonic times of its moments (bench/hardening)."""
        def mark(name):
            times[name] = time.monotonic()
        first = poll(lambda: leader_of(self.nodes["a"]), "a leader", timeout=LEASE + 10)
        second = "b" if first == "a" else "a"
        old, new = self.nodes[first], self.nodes[second]
        r = old.post("/api/v1/datasets/in/instances?time=" + SLOT)
        self.assertEqual(r.status, 200, r)
        r = old.post("/scheduler?time=" + NOW)  # WAITING -> READY
        self.assertEqual(r.status, 200, r)
        self.assertEqual(old.get("/slot-state?id=fenced&time=" + SLOT).json["status"], "READY")

        # The old leader's step picks the slot and waits for the locked announcements.
        self.lock_announcements()
        replies = []
        stepping = threading.Thread(
            target=lambda: replies.append(old.post("/scheduler?time=" + NOW, timeout=300)))
        stepping.start()
        poll(lambda: int(self.sql(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE '%celos_announced%' AND pid <> pg_backend_pid()")) >= 1,
            "the leader's step to wait for the announcements")
        old.process.send_signal(signal.SIGSTOP)
        mark("frozen")
        self.release_announcements()

        # The other node takes over and runs the slot's job, which writes half its output.
        poll(lambda: leader_of(new) == second, "the other node to take over", timeout=LEASE + 15)
        mark("taken over")
        r = new.post("/scheduler?time=" + NOW)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["submitted"], 1, r)
        poll(lambda: os.path.exists(os.path.join(self.out, "part-0")), "the job's first part")

        # The old leader wakes up and finishes its step.
        old.process.send_signal(signal.SIGCONT)
        mark("woken")
        stepping.join(timeout=120)
        mark("stopped")
        self.assertFalse(stepping.is_alive(), "the old leader's step never finished")
        self.assertTrue(os.path.exists(os.path.join(self.out, "part-0")),
                        "the woken ex-leader removed the new leader's output")
        self.assertEqual(replies[0].status, 200, replies[0])
        self.assertNotEqual(replies[0].json["errors"], [], replies[0])  # it did not lead

        # The job finishes: SUCCESS with its whole output and its done flag, run once.
        with open(os.path.join(self.data, "go"), "w"):
            pass

        def success():
            r = new.post("/scheduler?time=" + NOW)
            self.assertEqual(r.status, 200, r)
            return new.get("/slot-state?id=fenced&time=" + SLOT).json["status"] == "SUCCESS"
        poll(success, "the slot to succeed", timeout=60, interval=0.3)
        self.assertEqual(sorted(os.listdir(self.out)), ["_SUCCESS", "part-0", "part-1"])
        with open(os.path.join(self.data, "runs")) as f:
            self.assertEqual(f.read().split(), ["run"])
        history = new.get("/api/v1/slot-history?id=fenced&time=" + SLOT)
        self.assertEqual(history.status, 200, history)
        self.assertEqual([h["to"] for h in history.json], ["READY", "RUNNING", "SUCCESS"])


if __name__ == "__main__":
    unittest.main()
