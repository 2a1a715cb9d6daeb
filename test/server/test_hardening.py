"""End-to-end tests of the hostile cases of issue 11 (SPEC §8, §11, §15, §16): the real
celos-server on 127.0.0.1 in temporary directories. Each test failed before its fix."""

import glob
import json
import os
import signal
import threading
import urllib.error
import urllib.parse
import urllib.request
import resource
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import CelosServer, GatedWebHdfs, poll  # noqa: E402
from e2e_util import free_port  # noqa: E402

UI = os.environ.get("CELOS_UI", "")
EMOJI = "\U0001F600"
EMOJI_WORKFLOW = """celos.defineWorkflow({id: "smile-\\uD83D\\uDE00", startTime: "2015-09-13T00:00Z",
    schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
    trigger: celos.alwaysTrigger(), externalService: celos.commandExternalService("true"),
    url: "http://wiki/\\uD83D\\uDE00", contacts: [{name: "Ann %s", email: "a@x"}]});
""" % EMOJI
from test_server import workflow_js, read_logs, STORY_TIME  # noqa: E402


class HardeningTest(unittest.TestCase):
    def setUp(self):
        self.servers = []

    def tearDown(self):
        for server in self.servers:
            server.close()

    def server(self, workflows=None, start=True, **kw):
        server = CelosServer(workflows=workflows or {}, start=False, **kw)
        self.servers.append(server)
        if start:
            server.start()
        return server

    def step(self, server, time=STORY_TIME):
        reply = server.post("/scheduler?time=" + time)
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def status(self, server, wid, time):
        reply = server.get("/slot-state?id=%s&time=%s" % (wid, time))
        return reply.json.get("status") if reply.status == 200 else None

    def test_a_relative_db_runs_command_jobs_to_success(self):
        server = self.server({"hello.js": workflow_js("hello", command="cd / && echo hi")},
                             start=False)
        server.cwd = server.root
        server.db_flag = "db"
        server.start()

        def done():
            self.step(server)
            return self.status(server, "hello", "2015-09-13T00:00Z") in ("SUCCESS", "FAILURE")
        poll(done, "slot 00:00 to end", interval=0.2)
        self.assertEqual(self.status(server, "hello", "2015-09-13T00:00Z"), "SUCCESS")
        exits = glob.glob(os.path.join(server.db, "jobs", "hello", "**", "exit"), recursive=True)
        self.assertEqual(len(exits), 1, exits)

    def test_a_second_server_on_the_same_db_exits_naming_the_directory_and_pid(self):
        first = self.server()
        second = self.server(start=False)
        second.db = first.db
        result = subprocess.run(second.command(), capture_output=True, text=True, timeout=60)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(first.db, result.stderr)
        self.assertIn("pid %d" % first.process.pid, result.stderr)
        self.assertEqual(first.get("/version").status, 200)
        self.assertEqual(first.terminate(), 0)
        second.start()  # the lock goes with the first server
        self.assertEqual(second.get("/version").status, 200)

    def test_running_out_of_file_descriptors_does_not_stop_the_accept_loop(self):
        limit = 64
        server = self.server(start=False)
        server.preexec = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
        server.start()
        clients = []
        try:
            for _ in range(limit + 36):  # more connections than descriptors
                clients.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
            poll(lambda: "accepting a connection failed" in read_logs(server),
                 "the server to log the failed accept")
        finally:
            for client in clients:
                client.close()

        def answers():
            try:
                return server.get("/version", timeout=2).status == 200
            except OSError:
                return False
        poll(answers, "the server to answer again once the connections closed")
        self.assertIsNone(server.process.poll())

    def test_an_emoji_in_ids_urls_and_contacts_is_utf8_in_the_api_and_the_ui(self):
        server = self.server({"smile.js": EMOJI_WORKFLOW})
        wid = "smile-" + EMOJI
        self.assertEqual(server.get("/workflow-list").json["ids"], [wid])  # strict UTF-8
        self.step(server)
        reply = server.get("/workflow-slots?id=" + urllib.parse.quote(wid))
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["info"]["url"], "http://wiki/" + EMOJI)
        self.assertEqual(reply.json["info"]["contacts"][0]["name"], "Ann " + EMOJI)
        if not UI:
            self.skipTest("CELOS_UI not set")
        port = free_port()
        ui = subprocess.Popen([UI, "--port", str(port), "--celos", server.url("")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            def page():
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/ui?time=%s" % (
                            port, STORY_TIME), timeout=5) as res:
                        return res.status, res.read().decode()
                except urllib.error.HTTPError as e:
                    return e.code, e.read().decode()
                except OSError:
                    return None
            poll(lambda: page() is not None, "celos-ui to answer")
            status, text = page()
            self.assertEqual(status, 200, text[:500])
            self.assertIn(wid, text)
        finally:
            ui.terminate()
            ui.wait(timeout=30)

    def test_query_parameters_that_are_not_utf8_are_400_json(self):
        server = self.server({"smile.js": EMOJI_WORKFLOW})
        for target in ("/workflow-slots?id=a%FF", "/slot-state?id=%ED%A0%BD&time=x"):
            with self.subTest(target=target):
                reply = server.get(target)  # decodes strictly: raw bytes would raise
                self.assertEqual(reply.status, 400, reply)
                self.assertIn("UTF-8", reply.json["error"])

    def test_sighup_reopens_the_log_file_while_a_step_runs_on(self):
        hdfs = GatedWebHdfs()
        self.addCleanup(hdfs.close)
        self.addCleanup(hdfs.gate.set)
        trigger = 'celos.hdfsCheckTrigger("/ready/${hour}", "webhdfs://127.0.0.1:%d")' % hdfs.port
        server = self.server({"slow.js": workflow_js("slow", trigger=trigger),
                              "other.js": workflow_js("other")})
        replies = []
        stepper = threading.Thread(target=lambda: replies.append(
            server.post("/scheduler?time=" + STORY_TIME, timeout=120)))
        stepper.start()
        self.assertTrue(hdfs.asked.wait(60), "the step never asked WebHDFS")
        log = os.path.join(server.logs, "celos.log")
        os.rename(log, log + ".moved")  # as logrotate would
        server.process.send_signal(signal.SIGHUP)

        def reopened():
            if not os.path.exists(log):
                return False
            with open(log) as f:
                return "reloaded the log files" in f.read()
        poll(reopened, "a new celos.log after SIGHUP")
        self.assertIsNone(server.process.poll())
        self.assertEqual(server.get("/version").status, 200)
        self.assertTrue(stepper.is_alive(), "the step should still be waiting for WebHDFS")
        hdfs.gate.set()
        stepper.join(120)
        self.assertEqual(replies[0].status, 200, replies[0])
        self.assertEqual(self.status(server, "other", "2015-09-13T00:00Z"), "READY")
        self.assertEqual(server.terminate(), 0)


if __name__ == "__main__":
    unittest.main()
