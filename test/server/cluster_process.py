"""A celos cluster for the end-to-end tests: several celos-server nodes on one private
PostgreSQL (SPEC §11). Start N nodes, wait until they agree on a leader, kill one, stop them all.

Standard library only. A test that builds a Cluster is skipped where PostgreSQL cannot run."""

import json
import os
import shutil
import signal
import sys
import tempfile
import unittest

from server_process import CelosServer
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pg_util  # noqa: E402 (test/pg_util.py)
from e2e_util import poll  # noqa: E402


def hourly_workflow(command="true"):
    """The cluster tests' workflow file: "hourly" from 2015-09-14T00:00Z, always ready, up to 100
    slots at once, each running the shell `command` on the node that leads."""
    return """
celos.defineWorkflow({
    "id": "hourly",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(100),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService(%s),
    "startTime": "2015-09-14T00:00Z"
});
""" % json.dumps(command)


def cluster_of(server, timeout=5):
    """The node's answer to GET /api/v1/cluster, or None (no answer, or not 200)."""
    try:
        r = server.get("/api/v1/cluster", timeout=timeout)
    except OSError:
        return None
    return r.json if r.status == 200 else None


def leader_of(server):
    """The id of the leader as `server` sees it, or None."""
    view = cluster_of(server)
    return view["leader"]["id"] if view and view["leader"] else None


class Cluster:
    """Nodes of one cluster, by name: celos-server processes with --state-db on one database of
    a private PostgreSQL (`pg`, `uri`), --node-id and --lease-seconds. With shared_jobs (the
    default) every node's --db is the one directory `shared` (shared storage for the jobs of
    command services); without, each node keeps its jobs in its own directory.

    `workflows` and `defaults` ({file name: text}) are read when a node starts: a test may set
    them after making a Cluster of no nodes (to name `shared` in them), then call start()."""

    def __init__(self, names=(), lease=3, database="cluster", workflows=None, defaults=None,
                 cluster_name=None, args=(), shared_jobs=True):
        why_not = pg_util.available()
        if why_not:
            raise unittest.SkipTest(why_not)
        self.lease = lease
        self.workflows = dict(workflows or {})
        self.defaults = dict(defaults or {})
        self.nodes = {}
        self.shared = tempfile.mkdtemp(prefix="celos-cluster-") if shared_jobs else None
        self.pg = pg_util.PrivatePostgres()
        try:
            self.uri = self.pg.create_database(database)
            self.args = ["--lease-seconds", str(lease)] + list(args)
            if cluster_name:
                self.args += ["--cluster-name", cluster_name]
            self.start(names)
        except BaseException:
            self.close()
            raise

    def start(self, names):
        for name in names:
            self.start_node(name)

    def start_node(self, name, uri=None, port=None):
        """Starts node `name` (on `port`, to come back where it was) and waits until it answers;
        `uri` replaces the database's (a proxy in front of PostgreSQL)."""
        server = CelosServer(workflows=self.workflows, defaults=self.defaults, start=False,
                             args=["--state-db", uri or self.uri, "--node-id", name] + self.args)
        if self.shared:
            server.db_flag = self.shared
        if port:
            server.port = port
        self.nodes[name] = server
        server.start()
        return server

    def kill(self, name):
        """kill -9 of node `name`, which leaves the cluster; returns its CelosServer (the test
        closes it, and may start the node again on its port)."""
        server = self.nodes.pop(name)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        return server

    def leader(self, among=None, other_than=None, timeout=None):
        """The leader (as /api/v1/cluster shows it) that every node of `among` (default: all)
        agrees on, that is not `other_than` and that says itself that it leads: the lease can
        still name a node that does not lead yet (after an outage of the database it must
        renew it first, and answers 503 until then). A bounded poll: lease + 15 s unless told."""
        among = list(among or self.nodes)

        def agreed():
            views = [cluster_of(self.nodes[n]) for n in among]
            if any(v is None or v["leader"] is None for v in views):
                return None
            ids = {v["leader"]["id"] for v in views}
            if len(ids) != 1 or ids == {other_than}:
                return None
            (leader,) = ids
            if leader in self.nodes:
                own = cluster_of(self.nodes[leader])
                if own is None or own["self"]["role"] != "leader":
                    return None
            return views[0]["leader"]
        return poll(agreed, "the nodes to agree on a leader",
                    timeout=timeout if timeout is not None else self.lease + 15)

    def leader_id(self):
        """The leader's id as the first node that answers sees it, or None (no poll)."""
        for server in self.nodes.values():
            found = leader_of(server)
            if found:
                return found
        return None

    def standby(self, leader_id):
        """The name of a node other than `leader_id`."""
        return next(n for n in self.nodes if n != leader_id)

    def close(self):
        """Stops every node (kill -9: the tests check nothing after), then PostgreSQL; removes
        the directories."""
        for server in self.nodes.values():
            server.close()
        self.pg.close()
        if self.shared:
            shutil.rmtree(self.shared, ignore_errors=True)
