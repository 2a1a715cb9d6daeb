"""Issue 33, points 8 and 9 against the real celos-server: the audit trail under abuse (a flood
of refused requests with 15 KB queries is rate-limited and counted; GET /api/v1/audit on a
200 MB log reads from the end with bounded memory; with PostgreSQL every node writes one
table), webhooks to loopback and to celos itself are refused, and a tokens file others may
write stops start-up. Polls are bounded; nothing asserts on machine speed."""

import datetime
import hashlib
import http.client
import json
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
from server_process import SERVER, CelosServer, WebhookReceiver, poll  # noqa: E402
from test_server import workflow_js  # noqa: E402
from cluster_process import Cluster  # noqa: E402

ADMIN = "a-secret-admin"
ADMIN_HEADER = {"Authorization": "Bearer " + ADMIN}
RECORD_MAX = 4096  # a bounded record's line (docs/operations.md)
CLIENT_BURST, CLIENT_PER_SECOND = 20, 1


def write_tokens(path, mode=0o600):
    entry = {"name": "root-bot", "role": "admin", "sha256": hashlib.sha256(ADMIN.encode()).hexdigest()}
    with open(path, "w") as f:
        json.dump({"tokens": [entry]}, f)
    os.chmod(path, mode)


def metric(server, name):
    for line in server.get("/metrics").body.splitlines():
        if line.startswith(name + " "):
            return float(line.split(" ")[1])
    return None


def audit_lines(server):
    path = os.path.join(server.logs, "audit.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def flood_refused(port, target, count):
    """POSTs `target` `count` times over one keep-alive connection (a new one if the server
    closes it); returns the statuses."""
    statuses = []
    conn = None
    while len(statuses) < count:
        try:
            conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", target, body=b"")
            reply = conn.getresponse()
            reply.read()
            statuses.append(reply.status)
        except (http.client.HTTPException, ConnectionError):
            conn.close()
            conn = None
    conn.close()
    return statuses


def rss_peak_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class RefusedFloodTest(unittest.TestCase):
    def setUp(self):
        self.server = CelosServer(workflows={"wf.js": workflow_js("wf")}, start=False)
        self.tokens = os.path.join(self.server.root, "tokens.json")
        write_tokens(self.tokens)
        self.server.args = ["--auth-tokens", self.tokens]
        self.server.start()

    def tearDown(self):
        self.server.close()

    def test_a_flood_of_refused_requests_is_rate_limited_truncated_and_counted(self):
        query = "id=wf&paused=true&junk=" + "x" * 15000
        flood = 600
        started = time.monotonic()
        statuses = flood_refused(self.server.port, "/api/v1/pause?" + query, flood)
        elapsed = time.monotonic() - started
        self.assertEqual(statuses, [401] * flood)  # every refusal is still answered
        written = poll(lambda: audit_lines(self.server), "the refusals to be audited")
        # Records of single refusals, and records counting those left out ("suppressed": N,
        # written when the client's next refusal fits its budget again).
        plain = [r for r in written if not r.get("suppressed")]
        summaries = [r for r in written if r.get("suppressed")]
        # Within the client's budget: its burst plus its rate over the flood's duration.
        self.assertLessEqual(len(plain), CLIENT_BURST + CLIENT_PER_SECOND * (elapsed + 1) + 1)
        self.assertLessEqual(len(summaries), len(plain))
        size = os.path.getsize(os.path.join(self.server.logs, "audit.log"))
        self.assertLessEqual(size, len(written) * RECORD_MAX)
        for record in plain:
            self.assertEqual(record["status"], 401)
            self.assertEqual(record["truncated"]["query"], len(query))
            self.assertLess(len(record["query"]), 4096)
        suppressed = metric(self.server, "celos_audit_suppressed_total")
        self.assertEqual(suppressed, flood - len(plain))
        # Once the client is back under its budget, the rest of the count is written.
        time.sleep(1.5)  # refills one token of the bucket (1 per second)
        self.assertEqual(self.server.post("/api/v1/pause?id=wf&paused=true").status, 401)
        summaries = [r for r in audit_lines(self.server) if r.get("suppressed")]
        self.assertEqual(sum(r["suppressed"] for r in summaries), suppressed)
        for summary in summaries:
            self.assertEqual((summary["path"], summary["status"], summary["client"]),
                             ("/api/v1/pause", 401, "127.0.0.1"))
        records = self.server.get("/api/v1/audit?limit=1000", headers=ADMIN_HEADER).json["records"]
        self.assertEqual(records[0]["query"], "id=wf&paused=true")  # the newest
        self.assertEqual(sum(r.get("suppressed", 0) for r in records), suppressed)

    def test_accepted_mutations_are_never_suppressed(self):
        for _ in range(CLIENT_BURST + 30):
            self.assertEqual(self.server.post("/api/v1/pause?id=wf&paused=false",
                                              headers=ADMIN_HEADER).status, 200)
        accepted = [r for r in audit_lines(self.server) if r["status"] == 200]
        self.assertEqual(len(accepted), CLIENT_BURST + 30)
        self.assertEqual(metric(self.server, "celos_audit_suppressed_total"), 0)


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class LargeAuditLogTest(unittest.TestCase):
    def test_the_latest_record_of_a_200_mb_log_is_read_with_bounded_memory(self):
        server = CelosServer(workflows={"wf.js": workflow_js("wf")}, start=False)
        self.addCleanup(server.close)
        tokens = os.path.join(server.root, "tokens.json")
        write_tokens(tokens)
        server.args = ["--auth-tokens", tokens]
        os.makedirs(server.logs)
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        line = json.dumps({"time": today + "T00:00:00.000Z", "node": "old:1", "client": "10.0.0.1",
                           "token": None, "method": "POST", "path": "/api/v1/pause",
                           "query": "id=wf&junk=" + "y" * 1900, "status": 401}) + "\n"
        block = line * 1000
        with open(os.path.join(server.logs, "audit.log"), "w") as f:
            for _ in range(100):  # 100 x 1000 x ~2 KB = 200 MB
                f.write(block)
            f.write(json.dumps({"time": today + "T00:00:01.000Z", "node": "old:1",
                                "client": "10.0.0.2", "token": "root-bot", "method": "POST",
                                "path": "/api/v1/maintenance", "query": "mode=off",
                                "status": 200}) + "\n")
        self.assertGreater(os.path.getsize(os.path.join(server.logs, "audit.log")), 200e6)
        server.start()
        self.assertEqual(server.get("/api/v1/maintenance", headers=ADMIN_HEADER).status, 200)
        before = rss_peak_kb(server.process.pid)  # loaded, before any read of the audit log
        for limit in (1, 1, 1000):
            reply = server.get("/api/v1/audit?limit=%d" % limit, headers=ADMIN_HEADER)
            self.assertEqual(reply.status, 200, reply)
            self.assertEqual(len(reply.json["records"]), limit)
        growth_mb = (rss_peak_kb(server.process.pid) - before) / 1024
        self.assertLess(growth_mb, 40, "peak RSS grew by %.0f MB reading the audit log" % growth_mb)
        newest = server.get("/api/v1/audit?limit=1", headers=ADMIN_HEADER).json["records"][0]
        self.assertEqual(newest["path"], "/api/v1/maintenance")
        since = server.get("/api/v1/audit?since=%sT00:00:01.000Z" % today, headers=ADMIN_HEADER)
        self.assertEqual([r["client"] for r in since.json["records"]], ["10.0.0.2"])


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class LoopbackWebhookTest(unittest.TestCase):
    def test_webhooks_to_loopback_and_to_celos_itself_are_refused(self):
        receiver = WebhookReceiver()
        self.addCleanup(receiver.close)
        server = CelosServer(start=False)
        self.addCleanup(server.close)
        own = "http://127.0.0.1:%d/api/v1/maintenance?mode=pause" % server.port
        hooks = [{"on": ["KILLED"], "webhook": own},
                 {"on": ["KILLED"], "webhook": receiver.url + "/n"},
                 {"on": ["KILLED"], "webhook": "http://localhost:%d/n" % server.port}]
        server.write_workflow("n.js", workflow_js("n", extra=', "notify": ' + json.dumps(hooks)))
        server.start()
        self.assertEqual(server.post("/kill?id=n&time=2015-09-13T05:00Z").status, 200)
        poll(lambda: metric(server, "celos_webhooks_refused_total") == 3,
             "three refused webhooks to be counted")
        self.assertEqual(receiver.bodies(), [])
        self.assertEqual(server.get("/api/v1/maintenance").json["mode"], "off")
        with open(os.path.join(server.logs, "celos.log")) as f:
            log = f.read()
        self.assertIn("notification to %s refused: 127.0.0.1 is a loopback address" % own, log)
        self.assertIn("--allow-loopback-webhooks", log)


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class TokensFileModeTest(unittest.TestCase):
    def test_a_world_writable_tokens_file_stops_start_up(self):
        server = CelosServer(start=False)
        self.addCleanup(server.close)
        tokens = os.path.join(server.root, "tokens.json")
        write_tokens(tokens, mode=0o666)
        p = subprocess.run(server.command() + ["--auth-tokens", tokens], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(tokens, p.stderr)
        self.assertIn("mode 0666", p.stderr)
        self.assertIn("chmod go-w", p.stderr)


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class ClusterAuditTest(unittest.TestCase):
    def test_a_mutation_audited_on_one_node_is_read_through_another(self):
        cluster = Cluster(("a", "b"), 3, "audit", workflows={"wf.js": workflow_js("wf")},
                          cluster_name="audit")
        self.addCleanup(cluster.close)
        nodes = cluster.nodes
        reply = poll(lambda: (lambda r: r if r.status == 200 else None)(
            nodes["a"].post("/api/v1/pause?id=wf&paused=true")), "a mutation through node a")
        self.assertEqual(reply.status, 200)

        def through_b():
            records = nodes["b"].get("/api/v1/audit?limit=10").json["records"]
            return [r for r in records if r["node"] == "a" and r["status"] == 200]
        found = poll(through_b, "node a's audit record to be readable through node b")
        self.assertEqual(found[0]["path"], "/api/v1/pause")
        self.assertEqual(found[0]["query"], "id=wf&paused=true")
        # Node b's own file never saw it: the table answered.
        self.assertFalse([r for r in audit_lines(nodes["b"]) if r["node"] == "a"])


if __name__ == "__main__":
    unittest.main()
