"""Issue 33, point 1: a leader cut off from PostgreSQL in the middle of a state write (a network
partition, a frozen VM) must not hold up the next leader (SPEC §11: a new leader within the
lease + 5 s), and must never write again once it lost the lease (no slot run twice).

Two celos-server nodes on one private PostgreSQL; node a, the first leader, reaches the
database through a TCP proxy the test controls (test/tcp_proxy.py). The proxy lets a's first
slot write reach the server and then holds every packet both ways: a's session is left in the
middle of its transaction. Before issue 33 that transaction held a FOR SHARE lock on the lease
row and b's takeover waited for it as long as PostgreSQL kept the session (the whole partition).
Polls are bounded; steps use explicit times."""

import os
import signal
import sys
import threading
import time
import unittest

from cluster_process import Cluster, cluster_of, hourly_workflow
from server_process import SERVER
from e2e_util import poll  # noqa: E402 (put on the path by cluster_process)
from tcp_proxy import TcpProxy  # noqa: E402

LEASE = 4  # seconds
# Far more than lease + 5 s (what SPEC §11 promises) and far less than the partition would last
# before issue 33 (for ever here: the proxy keeps the session open).
BOUND = LEASE + 25

@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class LeaderCutOffMidWriteTest(unittest.TestCase):
    def setUp(self):
        self.cluster = Cluster(lease=LEASE, database="failover", cluster_name="test")
        self.nodes = self.cluster.nodes
        self.pg = self.cluster.pg
        self.proxy = TcpProxy(("127.0.0.1", self.pg.port))
        self.runs = os.path.join(self.cluster.shared, "runs.txt")  # one jobs directory for both
        self.cluster.workflows = {
            "wf.js": hourly_workflow("echo $CELOS_SLOT_TIME >> " + self.runs)}
        self.stopped = None
        # a first, alone: it becomes the leader; then b, a standby.
        self.cluster.start_node("a", self.cluster.uri.replace(":%d/" % self.pg.port,
                                                              ":%d/" % self.proxy.port))
        poll(lambda: (cluster_of(self.nodes["a"]) or {}).get("self", {}).get("role") == "leader",
             "node a to lead", timeout=LEASE + 15)
        self.cluster.start_node("b")
        poll(lambda: ((cluster_of(self.nodes["b"]) or {}).get("leader") or {}).get("id") == "a",
             "node b to see a lead", timeout=LEASE + 15)

    def tearDown(self):
        if self.stopped is not None and self.stopped.poll() is None:
            self.stopped.send_signal(signal.SIGCONT)
        self.proxy.release()
        self.cluster.close()
        self.proxy.close()

    def step_in_background(self, server, time_text):
        """A step of `server` that will hang (its database is cut off): the client gives up."""
        def run():
            try:
                server.post("/scheduler?time=" + time_text, timeout=BOUND + 30)
            except OSError:
                pass
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def cut_off_mid_write(self):
        """Steps a and holds its database traffic right after its first slot write reached
        PostgreSQL (before COMMIT). Returns when the hold began."""
        self.proxy.hold_after(b"INSERT INTO celos_slots")
        self.step_in_background(self.nodes["a"], "2015-09-14T03:00Z")
        self.assertTrue(self.proxy.held.wait(30), "a's step never wrote a slot")
        return time.monotonic()

    def b_leads_and_steps(self):
        """b becomes the leader and a step of b writes the slots a's stuck write was writing."""
        b = self.nodes["b"]

        def stepped():
            view = cluster_of(b)
            if not view or view["self"]["role"] != "leader":
                return None
            r = b.post("/scheduler?time=2015-09-14T03:00Z", timeout=BOUND)
            if r.status != 200 or r.json["workflows"] != 1 or r.json["errors"]:
                return None
            s = b.get("/slot-state?id=hourly&time=2015-09-14T02:00Z")
            return s.status == 200 and s.json["status"] in ("READY", "RUNNING", "SUCCESS")
        poll(stepped, "b to lead and step while a is cut off", timeout=BOUND, interval=0.2)
        view = cluster_of(b)
        self.assertEqual(view["leader"]["id"], "b")
        self.assertGreater(view["leader"]["epoch"], 1)
        return view["leader"]["epoch"]

    def finish_and_check_once(self, epoch):
        """a is back: it stands by, writes nothing, and every slot ran exactly once."""
        a, b = self.nodes["a"], self.nodes["b"]
        poll(lambda: (cluster_of(a) or {}).get("self", {}).get("role") == "standby",
             "a to stand by once back", timeout=BOUND)
        poll(lambda: ((cluster_of(a) or {}).get("leader") or {}).get("id") == "b",
             "a to see b lead", timeout=BOUND)

        def all_done():
            r = b.post("/scheduler?time=2015-09-14T03:00Z", timeout=30)
            if r.status != 200:
                return False
            states = [b.get("/slot-state?id=hourly&time=2015-09-14T0%d:00Z" % h).json["status"]
                      for h in range(3)]
            return all(s == "SUCCESS" for s in states)
        poll(all_done, "the slots to succeed under b", timeout=60, interval=0.5)
        time.sleep(LEASE)  # give a stale write of a the chance to show up, if it could
        with open(self.runs) as f:
            runs = sorted(f.read().split())
        self.assertEqual(runs, ["2015-09-14T0%d:00:00.000Z" % h for h in range(3)],
                         "every slot must run exactly once")
        self.assertEqual(cluster_of(b)["leader"]["epoch"], epoch)

    def test_the_clock_skew_from_the_database_is_measured(self):
        # Same machine, same clock: measured (by the lease renewals) and within bounds.
        for server in self.nodes.values():
            def measured():
                r = server.get("/health/ready")
                return r.status == 200 and r.json["checks"].get("clock") == "ok"
            poll(measured, "the clock check", timeout=LEASE + 10)
            lines = [l for l in server.get("/metrics").body.splitlines()
                     if l.startswith("celos_clock_skew_seconds ")]
            self.assertEqual(len(lines), 1)
            self.assertLess(abs(float(lines[0].split()[1])), 1.0)

    def test_a_partition_mid_write_does_not_hold_up_the_takeover(self):
        held = self.cut_off_mid_write()
        epoch = self.b_leads_and_steps()
        took = time.monotonic() - held
        sys.stderr.write("\n  partition: b led and stepped %.1f s after the hold (lease %d s)\n"
                         % (took, LEASE))
        self.proxy.release()
        self.finish_and_check_once(epoch)

    def test_a_frozen_leader_mid_write_does_not_hold_up_the_takeover(self):
        held = self.cut_off_mid_write()
        a = self.nodes["a"]
        self.stopped = a.process
        a.process.send_signal(signal.SIGSTOP)  # frozen with its transaction open
        self.proxy.release()                   # the network is fine: a just does not answer
        epoch = self.b_leads_and_steps()
        took = time.monotonic() - held
        sys.stderr.write("\n  freeze: b led and stepped %.1f s after the freeze (lease %d s)\n"
                         % (took, LEASE))
        a.process.send_signal(signal.SIGCONT)
        self.finish_and_check_once(epoch)


if __name__ == "__main__":
    unittest.main()
