"""End-to-end tests of the automation API (SPEC §13, §16) against the real celos-server: the
/api/v1/ aliases of the §6 endpoints, every row of the §13 table, the check order, the auth
matrix, the audit log, drain and pause against the Oozie fake, and /metrics and /health while a
step is slow."""

import glob
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hadoop"))
from server_process import SERVER, CelosServer, GatedWebHdfs, poll  # noqa: E402
from test_server import workflow_js  # noqa: E402
from fake_process import FakeServer  # noqa: E402 (test/hadoop)

TOKENS = {"viewer": "v-secret-1", "operator": "o-secret-2", "admin": "a-secret-3"}


def write_tokens(path, tokens=None):
    entries = [{"name": role + "-bot", "role": role,
                "sha256": hashlib.sha256(token.encode()).hexdigest()}
               for role, token in (tokens or TOKENS).items()]
    with open(path + ".tmp", "w") as f:
        json.dump({"tokens": entries}, f)
    os.replace(path + ".tmp", path)


def bearer(role):
    return {"Authorization": "Bearer " + TOKENS[role]} if role else {}


def metric(text, name):
    """The value of one sample line, e.g. metric(text, 'celos_slots{status="READY"}')."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split(" ")[1])
    raise AssertionError("no %s in /metrics" % name)

T = "2015-09-13T01:00:00.000Z"


class HelloServerTest(unittest.TestCase):
    """One server with the workflow "hello" for the class's tests; it must stop cleanly."""

    @classmethod
    def setUpClass(cls):
        cls.server = CelosServer(workflows={"hello.js": workflow_js("hello")})

    @classmethod
    def tearDownClass(cls):
        status = cls.server.terminate()
        cls.server.close()
        assert status == 0, status


class AliasTest(HelloServerTest):
    """Every §6 endpoint answers the same under /api/v1/ as at its legacy path."""

    def both(self, method, target):
        legacy = self.server.request(method, target, body=b"" if method == "POST" else None)
        v1 = self.server.request(method, "/api/v1" + target,
                                 body=b"" if method == "POST" else None)
        self.assertEqual(legacy.status, v1.status, (legacy, v1))
        return legacy, v1

    def test_reads_answer_the_same_under_api_v1(self):
        for target in ["/workflow-list", "/workflow-slots?id=hello&end=" + T,
                       "/multi-workflow-slots?end=" + T, "/slot-state?id=hello&time=" + T,
                       "/trigger-status?id=hello&time=" + T, "/version",
                       "/workflow-slots?id=nope", "/workflow-slots"]:
            legacy, v1 = self.both("GET", target)
            self.assertEqual(legacy.body, v1.body, target)

    def test_mutations_work_under_api_v1(self):
        _, v1 = self.both("POST", "/scheduler?time=2015-09-13T01:30Z&ids=hello")
        self.assertEqual(v1.json["workflows"], 1)
        reply = self.server.post("/api/v1/pause?id=hello&paused=false")
        self.assertEqual(reply.json, {"id": "hello", "paused": False})
        reply = self.server.post("/api/v1/kill?id=hello&time=2015-09-13T05:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["status"], "KILLED")
        reply = self.server.post("/api/v1/rerun?id=hello&time=2015-09-13T05:00Z")
        self.assertEqual(reply.json["status"], "WAITING")
        self.assertEqual(self.server.post("/api/v1/clear-cache").json["workflows"], 1)

    def test_errors_keep_their_shapes_under_api_v1(self):
        reply = self.server.get("/api/v1/rerun?id=hello&time=" + T)
        self.assertEqual(reply.status, 405)
        self.assertEqual(reply.headers["Allow"], "POST")
        self.assertEqual(self.server.get("/api/v1/nothing").status, 404)
        self.assertEqual(self.server.get("/api/v1").status, 404)


class OpsTest(HelloServerTest):
    """The new rows of the §13 table, Host/Origin checks, maintenance and the audit log on a
    server without tokens."""

    def test_health_live_and_ready(self):
        live = self.server.get("/health/live")
        self.assertEqual((live.status, live.json["status"]), (200, "ok"))
        ready = self.server.get("/health/ready")
        self.assertEqual(ready.status, 200)
        # The database as the background check last saw it, and how long ago (issue 33).
        body = ready.json
        self.assertGreaterEqual(body.pop("checkedMsAgo"), 0)
        self.assertEqual(body, {"status": "ok", "role": "leader",
                                "checks": {"workflows": "ok", "stateDatabase": "ok"}})

    def test_metrics_are_prometheus_text_with_every_metric_of_the_spec(self):
        self.server.post("/scheduler?time=2015-09-13T01:30Z")
        reply = self.server.get("/metrics")
        self.assertEqual(reply.status, 200)
        self.assertEqual(reply.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        for name in ("celos_steps_total", "celos_step_duration_seconds", "celos_workflows",
                     "celos_workflow_load_errors", "celos_slots", "celos_submissions_total",
                     "celos_external_call_errors_total", "celos_external_call_duration_seconds",
                     "celos_http_requests_total", "celos_leader", "celos_maintenance",
                     "celos_notifications_dropped_total"):
            self.assertIn("# TYPE %s " % name, reply.body)
        for line in reply.body.splitlines():
            if not line.startswith("#"):
                self.assertRegex(line, r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9.e+-]+$')
        text = reply.body
        self.assertGreaterEqual(metric(text, "celos_steps_total"), 1)
        self.assertEqual(metric(text, "celos_workflows"), 1)
        self.assertEqual(metric(text, "celos_leader"), 1)
        for status in ("WAITING", "READY", "RUNNING", "SUCCESS", "FAILURE", "WAIT_TIMEOUT",
                       "KILLED"):
            metric(text, 'celos_slots{status="%s"}' % status)
        for mode in ("off", "drain", "pause"):
            metric(text, 'celos_maintenance{mode="%s"}' % mode)
        for service in ("oozie", "command", "slurm", "webhdfs", "file"):
            metric(text, 'celos_submissions_total{service="%s"}' % service)
        self.assertGreaterEqual(metric(text, 'celos_http_requests_total{code="200"}'), 1)

    def test_a_foreign_host_is_403_and_a_foreign_origin_may_not_mutate(self):
        reply = self.server.get("/workflow-list", headers={"Host": "evil.example:80"})
        self.assertEqual(reply.status, 403)
        self.assertIn("evil.example", reply.json["error"])
        reply = self.server.request("POST", "/pause?id=hello&paused=true", body=b"",
                                    headers={"Origin": "http://evil.example"})
        self.assertEqual(reply.status, 403)
        self.assertFalse(self.server.get("/workflow-slots?id=hello").json["paused"])
        self.assertEqual(self.server.get("/workflow-list",
                                         headers={"Origin": "http://evil.example"}).status, 200)
        self.assertEqual(self.server.get("/workflow-list", headers={"Host": "LOCALHOST:1"}).status,
                         200)

    def test_maintenance_is_set_kept_and_shown_in_metrics(self):
        try:
            reply = self.server.post("/api/v1/maintenance?mode=drain&reason=os%20patching")
            self.assertEqual(reply.status, 200, reply)
            first = reply.json
            self.assertEqual((first["mode"], first["reason"]), ("drain", "os patching"))
            again = self.server.post("/api/v1/maintenance?mode=drain").json
            self.assertEqual(again["since"], first["since"])
            self.assertIsNone(again["reason"])
            self.assertEqual(self.server.get("/api/v1/maintenance").json["mode"], "drain")
            text = self.server.get("/metrics").body
            self.assertEqual(metric(text, 'celos_maintenance{mode="drain"}'), 1)
            self.assertEqual(metric(text, 'celos_maintenance{mode="off"}'), 0)
            bad = self.server.post("/api/v1/maintenance?mode=holiday")
            self.assertEqual(bad.status, 400)
            self.assertIn("mode", bad.json["error"])
            with open(os.path.join(self.server.db, "maintenance")) as f:
                self.assertEqual(json.load(f)["mode"], "drain")
        finally:
            self.server.post("/api/v1/maintenance?mode=off")

    def test_every_mutating_request_is_an_audit_line_without_secrets(self):
        self.server.post("/api/v1/pause?id=hello&paused=false")
        self.server.request("POST", "/pause?id=hello&paused=true", body=b"",
                            headers={"Origin": "http://evil.example"})
        with open(os.path.join(self.server.logs, "audit.log")) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual(set(lines[0]), {"time", "node", "client", "token", "method", "path",
                                         "query", "status"})
        ok = [r for r in lines if r["path"] == "/api/v1/pause" and r["query"] == "id=hello&paused=false"]
        self.assertEqual(ok[-1]["status"], 200)
        self.assertEqual(ok[-1]["client"], "127.0.0.1")
        self.assertIsNone(ok[-1]["token"])
        refused = [r for r in lines if r["path"] == "/pause" and r["status"] == 403]
        self.assertTrue(refused)
        records = self.server.get("/api/v1/audit?limit=2").json["records"]
        self.assertEqual(len(records), 2)
        self.assertGreaterEqual(records[0]["time"], records[1]["time"])
        self.assertEqual(self.server.get("/api/v1/audit?limit=5000").status, 400)

    def test_the_openapi_document_and_docs_page_are_served(self):
        doc = self.server.get("/api/v1/openapi.json").json
        self.assertIn("/api/v1/maintenance", doc["paths"])
        self.assertEqual(self.server.get("/api/v1/docs").status, 200)


class AuthTest(unittest.TestCase):
    """The auth matrix: no token, viewer, operator and admin on every mutating route."""

    @classmethod
    def setUpClass(cls):
        cls.server = CelosServer(workflows={"hello.js": workflow_js("hello")}, start=False)
        cls.tokens = os.path.join(cls.server.root, "tokens.json")
        write_tokens(cls.tokens)
        cls.server.args = ["--auth-tokens", cls.tokens]
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        status = cls.server.terminate()
        cls.server.close()
        assert status == 0, status

    def test_the_auth_matrix_of_the_mutating_routes(self):
        routes = [("/scheduler?time=2015-09-13T01:30Z&ids=hello", "operator"),
                  ("/clear-cache", "operator"),
                  ("/kill?id=hello&time=2015-09-13T05:00Z", "operator"),
                  ("/rerun?id=hello&time=2015-09-13T05:00Z", "operator"),
                  ("/pause?id=hello&paused=false", "operator"),
                  ("/api/v1/maintenance?mode=off", "admin")]
        rank = {None: 0, "viewer": 1, "operator": 2, "admin": 3}
        for target, needed in routes:
            for prefix in ("", "/api/v1"):
                if target.startswith("/api/v1") and prefix:
                    continue
                for role in (None, "viewer", "operator", "admin"):
                    with self.subTest(target=prefix + target, role=role):
                        reply = self.server.request("POST", prefix + target, body=b"",
                                                    headers=bearer(role))
                        if role is None:
                            self.assertEqual(reply.status, 401)
                            self.assertEqual(reply.headers["WWW-Authenticate"][:6], "Bearer")
                        elif rank[role] < rank[needed]:
                            self.assertEqual(reply.status, 403)
                        else:  # let through: 200, or 400 for a kill of a killed slot
                            self.assertIn(reply.status, (200, 400), reply)
                            self.assertNotIn("token", reply.body)
                        self.assertEqual(reply.headers["Content-Type"], "application/json")
        self.assertEqual(self.server.post("/kill?id=hello&time=2015-09-13T06:00Z",
                                          headers={"Authorization": "Bearer wrong"}).status, 401)

    def test_reads_and_health_need_no_token_audit_needs_admin(self):
        self.assertEqual(self.server.get("/workflow-list").status, 200)
        self.assertEqual(self.server.get("/metrics").status, 200)
        self.assertEqual(self.server.get("/health/ready").status, 200)
        self.assertEqual(self.server.get("/api/v1/openapi.json").status, 200)
        self.assertEqual(self.server.get("/api/v1/audit").status, 401)
        self.assertEqual(self.server.get("/api/v1/audit", headers=bearer("operator")).status, 403)
        reply = self.server.get("/api/v1/audit?limit=1000", headers=bearer("admin"))
        self.assertEqual(reply.status, 200)
        names = {r["token"] for r in reply.json["records"]}
        self.assertIn(None, names)

    def test_tokens_never_appear_in_logs_and_audit_names_the_token(self):
        self.server.post("/pause?id=hello&paused=false", headers=bearer("operator"))
        self.server.post("/pause?id=hello&paused=false", headers=bearer("viewer"))
        text = ""
        for path in glob.glob(os.path.join(self.server.logs, "*")):
            with open(path) as f:
                text += f.read()
        text += self.server.stderr_text()
        for token in TOKENS.values():
            self.assertNotIn(token, text)
        lines = [json.loads(l) for l in text.splitlines() if l.startswith('{"time"')]
        self.assertIn(("operator-bot", 200), [(r["token"], r["status"]) for r in lines])
        self.assertIn(("viewer-bot", 403), [(r["token"], r["status"]) for r in lines])

    def test_a_changed_tokens_file_is_re_read_and_a_broken_one_keeps_the_old(self):
        try:
            write_tokens(self.tokens, {"operator": "new-secret"})
            poll(lambda: self.server.post("/pause?id=hello&paused=false",
                                          headers={"Authorization": "Bearer new-secret"}).status == 200,
                 "the new tokens file to be read")
            self.assertEqual(self.server.post("/pause?id=hello&paused=false",
                                              headers=bearer("operator")).status, 401)
            with open(self.tokens, "w") as f:
                f.write("{not json")
            self.server.process.send_signal(signal.SIGHUP)
            poll(lambda: "keeping the previous tokens" in open(
                os.path.join(self.server.logs, "celos.log")).read(), "the error to be logged")
            self.assertEqual(self.server.post("/pause?id=hello&paused=false",
                                              headers={"Authorization": "Bearer new-secret"}).status,
                             200)
        finally:
            write_tokens(self.tokens)
            poll(lambda: self.server.post("/pause?id=hello&paused=false",
                                          headers=bearer("operator")).status == 200,
                 "the original tokens again")


class AuthReadsTest(unittest.TestCase):
    def test_auth_reads_needs_a_viewer_token_for_reads_and_metrics_but_not_health(self):
        server = CelosServer(workflows={"hello.js": workflow_js("hello")}, start=False)
        try:
            tokens = os.path.join(server.root, "tokens.json")
            write_tokens(tokens)
            server.args = ["--auth-tokens", tokens, "--auth-reads"]
            server.start()
            self.assertEqual(server.get("/workflow-list").status, 401)
            self.assertEqual(server.get("/metrics").status, 401)
            self.assertEqual(server.get("/workflow-list", headers=bearer("viewer")).status, 200)
            self.assertEqual(server.get("/metrics", headers=bearer("viewer")).status, 200)
            self.assertEqual(server.get("/health/live").status, 200)
            self.assertEqual(server.get("/api/v1/docs").status, 200)
            self.assertEqual(server.get("/api/v1/docs/swagger-ui.css").status, 200)
        finally:
            server.terminate()
            server.close()


class StartupTest(unittest.TestCase):
    def run_server(self, *args, tokens_text=None):
        server = CelosServer(start=False)
        try:
            cmd = server.command() + list(args)
            if tokens_text is not None:
                path = os.path.join(server.root, "tokens.json")
                with open(path, "w") as f:
                    f.write(tokens_text)
                cmd += ["--auth-tokens", path]
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        finally:
            server.close()

    def test_a_malformed_tokens_file_or_auth_reads_alone_exits_2_with_a_message(self):
        bad = self.run_server(tokens_text='{"tokens": [{"name": "x", "role": "god", "sha256": "00"}]}')
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("tokens[0]", bad.stderr)
        alone = self.run_server("--auth-reads")
        self.assertEqual(alone.returncode, 2)
        self.assertIn("--auth-tokens", alone.stderr)
        hosts = self.run_server("--allowed-hosts", "a,,b")
        self.assertEqual(hosts.returncode, 2)

    def test_no_tokens_on_a_public_address_is_a_warning(self):
        server = CelosServer(workflows={"hello.js": workflow_js("hello")}, start=False)
        try:
            server.args = ["--host", "0.0.0.0"]
            server.start()
            self.assertIn("without --auth-tokens", server.stderr_text())
        finally:
            server.terminate()
            server.close()

    def test_health_and_metrics_answer_while_the_workflows_load(self):
        slow = "var t = Date.now(); while (Date.now() - t < 3000) {}\n" + workflow_js("slow")
        server = CelosServer(workflows={"slow.js": slow}, start=False)
        try:
            server.start()  # waits for /version, which answers at once
            ready = server.get("/health/ready")
            self.assertEqual(ready.status, 503, ready)
            self.assertEqual(ready.json["checks"]["workflows"], "loading")
            self.assertEqual(server.get("/metrics").status, 200)
            # Other requests wait for the load and are then answered.
            self.assertEqual(server.get("/workflow-list").json, {"ids": ["slow"]})
            self.assertEqual(server.get("/health/ready").status, 200)
        finally:
            server.terminate()
            server.close()


OOZIE_WORKFLOW = """
celos.defineWorkflow({
    "id": "%(id)s",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(3),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.oozieExternalService({"oozie.wf.application.path": "/x", "user.name": "celos"},
                                                "%(oozie)s"),
    "startTime": "2015-09-13T00:00Z"
});
"""


class MaintenanceOozieTest(unittest.TestCase):
    """Drain and pause against the Oozie fake."""

    def setUp(self):
        self.oozie = FakeServer("fake_oozie.py")
        self.server = CelosServer(workflows={
            "w.js": OOZIE_WORKFLOW % {"id": "w", "oozie": self.oozie.url("/oozie")}})

    def tearDown(self):
        self.server.terminate()
        self.server.close()
        self.oozie.stop()

    def step(self, at):
        reply = self.server.post("/scheduler?time=" + at)
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def jobs(self):
        return self.oozie.control("/_control/jobs", method="GET")

    def test_drain_submits_nothing_new_and_follows_running_jobs(self):
        self.step("2015-09-13T00:30Z")
        self.step("2015-09-13T00:31Z")
        self.assertEqual(len(self.jobs()), 1)
        drain = self.server.post("/api/v1/maintenance?mode=drain&reason=restart")
        self.assertEqual(drain.json["running"], 1)
        self.assertEqual(self.step("2015-09-13T02:30Z")["maintenance"], "drain")
        self.step("2015-09-13T02:31Z")
        self.assertEqual(len(self.jobs()), 1, "nothing new may be submitted")
        slots = self.server.get("/workflow-slots?id=w&end=2015-09-13T03:00Z").json["slots"]
        self.assertEqual([s["status"] for s in slots], ["READY", "READY", "RUNNING"])
        self.oozie.control("/_control/status?status=SUCCEEDED")
        self.step("2015-09-13T02:32Z")
        self.assertEqual(self.server.get("/api/v1/maintenance").json["running"], 0)
        self.assertEqual(metric(self.server.get("/metrics").body, 'celos_slots{status="READY"}'), 2)
        self.server.post("/api/v1/maintenance?mode=off")
        self.step("2015-09-13T02:33Z")
        self.assertEqual(len(self.jobs()), 3)
        self.assertEqual(metric(self.server.get("/metrics").body,
                                'celos_submissions_total{service="oozie"}'), 3)

    def test_pause_makes_steps_do_nothing_but_rerun_kill_and_pause_work(self):
        self.step("2015-09-13T00:30Z")
        self.server.post("/api/v1/maintenance?mode=pause")
        answer = self.step("2015-09-13T00:31Z")
        self.assertEqual((answer["workflows"], answer["maintenance"]), (0, "pause"))
        self.assertEqual(len(self.jobs()), 0)
        self.assertEqual(self.server.post("/kill?id=w&time=2015-09-13T00:00Z").json["status"],
                         "KILLED")
        self.assertEqual(self.server.post("/rerun?id=w&time=2015-09-13T00:00Z").json["status"],
                         "WAITING")
        self.assertEqual(self.server.post("/pause?id=w&paused=false").status, 200)
        self.server.terminate()
        self.server.start()  # survives a restart
        self.assertEqual(self.server.get("/api/v1/maintenance").json["mode"], "pause")
        self.assertEqual(self.step("2015-09-13T00:32Z")["workflows"], 0)


class SlowStepTest(unittest.TestCase):
    """/metrics and /health answer while a step waits for a slow WebHDFS."""

    def test_metrics_and_health_answer_during_a_slow_step(self):
        hdfs = GatedWebHdfs()
        server = CelosServer(workflows={"slow.js": workflow_js(
            "slow", trigger='celos.hdfsCheckTrigger("/in/${hour}", "webhdfs://127.0.0.1:%d")'
            % hdfs.port)})
        try:
            done = {}

            def step():
                done["reply"] = server.post("/scheduler?time=2015-09-13T00:30Z", timeout=120)
            import threading
            stepping = threading.Thread(target=step)
            stepping.start()
            self.assertTrue(hdfs.asked.wait(60), "the step never asked WebHDFS")
            self.assertEqual(server.get("/health/ready", timeout=5).status, 200)
            self.assertEqual(server.get("/health/live", timeout=5).status, 200)
            self.assertEqual(server.get("/metrics", timeout=5).status, 200)
            self.assertNotIn("reply", done)
            hdfs.gate.set()
            stepping.join(120)
            self.assertEqual(done["reply"].status, 200)
            text = server.get("/metrics").body
            self.assertGreaterEqual(metric(
                text, 'celos_external_call_duration_seconds_count{service="webhdfs",operation="exists"}'), 1)
        finally:
            server.terminate()
            server.close()
            hdfs.close()


if __name__ == "__main__":
    unittest.main()
