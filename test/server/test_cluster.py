"""A celos cluster (SPEC §11, §16): three celos-server processes on one private PostgreSQL.
One leader steps; standbys serve reads and forward mutations; kill -9 of the leader and
step-down hand the lease to another node with a higher epoch. Also the file backend's cluster
of one. Polls are bounded; the scheduler is stepped with explicit times."""

import os
import time
import unittest

from cluster_process import Cluster, cluster_of, hourly_workflow
from server_process import SERVER, CelosServer
from e2e_util import poll  # noqa: E402 (put on the path by cluster_process)

LEASE = 3  # seconds: takeover must come within LEASE + 5

WORKFLOW = hourly_workflow()


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class SingleFileServerTest(unittest.TestCase):
    def test_a_file_backend_server_is_its_own_leader_and_cannot_step_down(self):
        server = CelosServer(workflows={"wf.js": WORKFLOW}, args=["--node-id", "solo"])
        try:
            c = cluster_of(server)
            self.assertEqual(c["name"], "celos")
            self.assertEqual(c["self"]["id"], "solo")
            self.assertEqual(c["self"]["role"], "leader")
            self.assertEqual(c["self"]["url"], "http://127.0.0.1:%d" % server.port)
            self.assertEqual(c["leader"]["epoch"], 1)
            self.assertEqual(c["leader"]["id"], "solo")
            self.assertEqual([n["id"] for n in c["nodes"]], ["solo"])
            self.assertEqual(server.post("/api/v1/cluster/step-down").status, 409)
            self.assertEqual(server.post("/api/v1/cluster/step-down?seconds=86401").status, 400)
            self.assertEqual(server.post("/api/v1/cluster/step-down?seconds=x").status, 400)
        finally:
            server.close()


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class ThreeNodeClusterTest(unittest.TestCase):
    def setUp(self):
        self.cluster = Cluster(("a", "b", "c"), LEASE, "cluster", workflows={"wf.js": WORKFLOW},
                               cluster_name="test")
        self.nodes = self.cluster.nodes
        self.pg = self.cluster.pg
        self.leader = self.cluster.leader
        self.standby = self.cluster.standby

    def tearDown(self):
        self.cluster.close()

    def test_one_leader_standbys_forward_and_serve_reads(self):
        leader = self.leader()
        view = cluster_of(self.nodes["a"])
        self.assertEqual(view["name"], "test")
        self.assertEqual(sorted(n["id"] for n in view["nodes"]), ["a", "b", "c"])
        self.assertEqual([n["id"] for n in view["nodes"] if n["role"] == "leader"], [leader["id"]])
        self.assertEqual(leader["url"], self.nodes[leader["id"]].url(""))
        standby = self.nodes[self.standby(leader["id"])]
        self.assertEqual(cluster_of(standby)["self"]["role"], "standby")
        # A step asked of a standby is the leader's step, answered with the leader's answer.
        r = standby.post("/scheduler?time=2015-09-14T03:00Z")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["workflows"], 1)
        self.assertEqual(r.json["errors"], [])
        for server in self.nodes.values():
            s = server.get("/slot-state?id=hourly&time=2015-09-14T00:00Z")
            self.assertEqual(s.status, 200, s)
            self.assertIn(s.json["status"], ("READY", "RUNNING", "SUCCESS"))
        # Only the node that answers the client audits: the standby, with the client's address.
        # Every node writes and reads the celos_audit table (written by a thread of its own).
        def records(server):
            r = server.get("/api/v1/audit?limit=1000")
            self.assertEqual(r.status, 200, r)
            return [a for a in r.json["records"] if a["path"] == "/scheduler"]
        mine = poll(lambda: records(standby), "the standby's audit record in the table")
        self.assertEqual(len(mine), 1, mine)
        self.assertEqual(mine[0]["status"], 200)
        self.assertEqual(mine[0]["client"], "127.0.0.1")
        self.assertEqual(mine[0]["method"], "POST")
        self.assertEqual(mine[0]["node"], self.standby(leader["id"]))
        self.assertEqual(records(self.nodes[leader["id"]]), mine)  # the leader wrote none
        # X-Celos-Forwarded without the cluster's secret is forged: refused, never forwarded.
        r = standby.request("POST", "/scheduler?time=2015-09-14T03:00Z", body=b"",
                            headers={"X-Celos-Forwarded": "elsewhere"})
        self.assertEqual(r.status, 403)
        self.assertIn("error", r.json)

    def test_kill_9_of_the_leader_hands_over_with_a_higher_epoch(self):
        first = self.leader()
        started = time.monotonic()
        self.cluster.kill(first["id"]).close()
        second = self.leader(other_than=first["id"])
        took = time.monotonic() - started
        self.assertNotEqual(second["id"], first["id"])
        self.assertGreater(second["epoch"], first["epoch"])
        self.assertLessEqual(took, LEASE + 5 + 2)
        survivor = self.nodes[self.standby(second["id"])]
        r = survivor.post("/scheduler?time=2015-09-14T05:00Z")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["errors"], [])

    def test_step_down_hands_the_lease_to_another_node(self):
        first = self.leader()
        r = self.nodes[first["id"]].post("/api/v1/cluster/step-down?seconds=60")
        self.assertEqual(r.status, 200, r)
        self.assertIn("until", r.json)
        second = self.leader(other_than=first["id"])
        self.assertGreater(second["epoch"], first["epoch"])
        self.assertEqual(cluster_of(self.nodes[first["id"]])["self"]["role"], "standby")
        # Asked of a standby, step-down is forwarded to the leader.
        r = self.nodes[first["id"]].post("/api/v1/cluster/step-down?seconds=60")
        self.assertEqual(r.status, 200, r)
        third = self.leader(other_than=second["id"])
        self.assertNotIn(third["id"], (first["id"], second["id"]))

    def test_postgres_down_and_back(self):
        leader = self.leader()
        self.pg.stop()
        # Nodes stay up; after the lease, nobody leads and mutations are 503 JSON.
        def no_leader():
            r = self.nodes[leader["id"]].post("/scheduler?time=2015-09-14T03:00Z")
            return r.status == 503 or (r.status == 200 and r.json["workflows"] == 0)
        poll(no_leader, "the leader to stop stepping", timeout=LEASE + 10)
        for server in self.nodes.values():
            self.assertIsNone(server.process.poll())
        self.pg.start()
        self.leader()
        r = self.nodes["a"].post("/scheduler?time=2015-09-14T03:00Z")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["workflows"], 1)

    def test_standbys_pick_up_changed_workflow_files_on_their_own(self):
        leader = self.leader()
        standby = self.nodes[self.standby(leader["id"])]
        for server in self.nodes.values():  # as celos-ci deploys to each node
            server.write_workflow("more.js", WORKFLOW.replace('"hourly"', '"more"'))
        poll(lambda: "more" in standby.get("/workflow-list").json["ids"],
             "the standby to load the new workflow file", timeout=15)


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class UnsharedJobsDirectoryTest(unittest.TestCase):
    """SPEC §11: a RUNNING command slot whose job directory the new leader cannot see (each
    node with its own --jobs-dir) becomes FAILURE with a message naming the host it ran on."""

    def setUp(self):
        workflow = hourly_workflow("sleep 20")
        # each node keeps jobs under its own --db
        self.cluster = Cluster(("a", "b"), LEASE, "unshared", workflows={"wf.js": workflow},
                               shared_jobs=False)
        self.nodes = self.cluster.nodes

    def tearDown(self):
        self.cluster.close()

    def leader_id(self, other_than=None):
        return self.cluster.leader(other_than=other_than)["id"]

    def test_a_job_the_new_leader_cannot_see_fails_naming_its_host(self):
        first = self.leader_id()
        for _ in range(2):  # WAITING -> READY, then submitted and started
            r = self.nodes[first].post("/scheduler?time=2015-09-14T00:30Z")
            self.assertEqual(r.status, 200, r)
        slot = self.nodes[first].get("/slot-state?id=hourly&time=2015-09-14T00:00Z").json
        self.assertEqual(slot["status"], "RUNNING", slot)
        host = slot["externalID"].rsplit("@", 1)[1]
        killed = self.cluster.kill(first)
        second = self.leader_id(other_than=first)
        r = self.nodes[second].post("/scheduler?time=2015-09-14T00:31Z")
        self.assertEqual(r.status, 200, r)
        slot = self.nodes[second].get("/slot-state?id=hourly&time=2015-09-14T00:00Z").json
        self.assertEqual(slot["status"], "FAILURE", slot)
        self.assertIn("ran on host %s" % host, slot["message"])
        self.assertIn("cannot be seen", slot["message"])
        killed.close()
