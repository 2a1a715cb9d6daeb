"""End-to-end tests of celos-server (SPEC §6, §8): the real binary on 127.0.0.1, temporary
directories, HTTP. Slots are stepped with explicit ?time= so that nothing depends on the clock,
except the --autoSchedule test, which polls with a bound."""

import glob
import os
import socket
import subprocess
import sys
import threading
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import SERVER, CelosServer, GatedWebHdfs, ServerPerTest, poll  # noqa: E402


def workflow_js(wid, command="echo hi > out-${hour}", start="2015-09-13T00:00Z",
                trigger="celos.alwaysTrigger()", extra=""):
    return """
celos.defineWorkflow({
    "id": "%s",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": %s,
    "externalService": celos.commandExternalService(%s),
    "startTime": "%s"%s
});
""" % (wid, trigger, json_str(command), start, extra)


def json_str(text):
    import json
    return json.dumps(text)


STORY_TIME = "2015-09-13T01:30Z"


def read_logs(server):
    """The text of the server's log files (celos.log and any rolled celos.log.<yyyy-mm-dd>)."""
    text = ""
    for path in sorted(glob.glob(os.path.join(server.logs, "celos.log*"))):
        with open(path) as f:
            text += f.read()
    return text


class ApiTest(unittest.TestCase):
    """Endpoints and their errors on one server with a few workflows."""

    @classmethod
    def setUpClass(cls):
        cls.server = CelosServer(workflows={
            "hello.js": workflow_js("hello", extra=""",
    "url": "http://example.com/hello",
    "contacts": [{"name": "Ann", "email": "ann@example.com"}]"""),
            "zeta.js": workflow_js("zeta", start="2015-01-01T00:00Z"),
            "alpha.js": workflow_js("alpha"),
            "broken.js": "this is not javascript (",
        })

    @classmethod
    def tearDownClass(cls):
        status = cls.server.terminate()
        cls.server.close()
        assert status == 0, status

    def assert_error(self, reply, status, *words):
        self.assertEqual(reply.status, status, reply)
        self.assertEqual(reply.headers["Content-Type"], "application/json")
        message = reply.json["error"]
        for word in words:
            self.assertIn(word, message)

    def test_version_answers_the_version_string(self):
        reply = self.server.get("/version")
        self.assertEqual(reply.status, 200)
        self.assertRegex(reply.json["version"], r"^\d+\.\d+\.\d+")

    def test_workflow_list_is_sorted_and_skips_the_broken_file(self):
        reply = self.server.get("/workflow-list")
        self.assertEqual(reply.status, 200)
        self.assertEqual(reply.headers["Content-Type"], "application/json")
        self.assertEqual(reply.json, {"ids": ["alpha", "hello", "zeta"]})

    def test_workflow_slots_shows_info_paused_and_slots_newest_first(self):
        reply = self.server.get("/workflow-slots?id=hello&end=2015-09-13T03:00Z")
        self.assertEqual(reply.status, 200, reply)
        body = reply.json
        self.assertEqual(body["info"], {"url": "http://example.com/hello",
                                        "contacts": [{"name": "Ann", "email": "ann@example.com"}]})
        self.assertIs(body["paused"], False)
        # startTime is 2015-09-13T00:00Z: nothing before it.
        self.assertEqual([s["time"] for s in body["slots"]],
                         ["2015-09-13T02:00:00.000Z", "2015-09-13T01:00:00.000Z",
                          "2015-09-13T00:00:00.000Z"])
        self.assertEqual(body["slots"][0], {"time": "2015-09-13T02:00:00.000Z",
                                            "status": "WAITING", "externalID": None,
                                            "retryCount": 0})

    def test_workflow_slots_defaults_to_the_week_before_end(self):
        reply = self.server.get("/workflow-slots?id=zeta&end=2015-09-13T00:00Z")
        self.assertEqual(len(reply.json["slots"]), 168)
        self.assertEqual(reply.json["slots"][-1]["time"], "2015-09-06T00:00:00.000Z")

    def test_workflow_slots_refuses_more_than_seven_days(self):
        reply = self.server.get(
            "/workflow-slots?id=zeta&start=2015-09-01T00:00Z&end=2015-09-13T00:00Z")
        self.assert_error(reply, 400, "7 days")

    def test_missing_id_is_400_naming_the_parameter(self):
        for method, target in [("GET", "/workflow-slots"),
                               ("GET", "/slot-state?time=2015-09-13T00:00Z"),
                               ("GET", "/trigger-status?time=2015-09-13T00:00Z"),
                               ("POST", "/rerun?time=2015-09-13T00:00Z"),
                               ("POST", "/kill?time=2015-09-13T00:00Z"),
                               ("POST", "/pause?paused=true")]:
            with self.subTest(target=target):
                self.assert_error(self.server.request(method, target, body=b""), 400, "id")

    def test_missing_time_is_400_naming_the_parameter(self):
        for method, target in [("GET", "/slot-state?id=hello"), ("POST", "/rerun?id=hello"),
                               ("POST", "/kill?id=hello"), ("GET", "/trigger-status?id=hello")]:
            with self.subTest(target=target):
                self.assert_error(self.server.request(method, target, body=b""), 400, "time")

    def test_unknown_workflow_is_404(self):
        for method, target in [("GET", "/workflow-slots?id=nope"),
                               ("GET", "/trigger-status?id=nope&time=2015-09-13T00:00Z"),
                               ("GET", "/slot-state?id=nope&time=2015-09-13T00:00Z"),
                               ("POST", "/rerun?id=nope&time=2015-09-13T00:00Z"),
                               ("POST", "/kill?id=nope&time=2015-09-13T00:00Z"),
                               ("POST", "/pause?id=nope&paused=true")]:
            with self.subTest(target=target):
                self.assert_error(self.server.request(method, target, body=b""), 404)

    def test_wrong_method_is_405_with_allow(self):
        reply = self.server.get("/scheduler")
        self.assert_error(reply, 405)
        self.assertEqual(reply.headers["Allow"], "POST")
        reply = self.server.post("/workflow-list")
        self.assert_error(reply, 405)
        self.assertEqual(reply.headers["Allow"], "GET")
        self.assertEqual(self.server.request("DELETE", "/rerun?id=hello").status, 405)

    def test_unknown_path_is_404(self):
        self.assert_error(self.server.get("/nothing-here"), 404, "/nothing-here")

    def test_bad_times_are_400_naming_the_parameter(self):
        self.assert_error(self.server.get("/slot-state?id=hello&time=yesterday"), 400, "time")
        self.assert_error(self.server.post("/scheduler?time=2015-09-13T12:00"), 400, "time")
        self.assert_error(self.server.post("/rerun?id=hello&time=2015-09-13T00:00%2B02:00"),
                          400, "time")
        self.assert_error(self.server.get("/workflow-slots?id=hello&start=soon"), 400, "start")
        self.assert_error(self.server.get("/workflow-slots?id=hello&end=later"), 400, "end")

    def test_url_encoded_and_offset_times_are_accepted(self):
        for time in ["2015-09-13T01%3A00Z", "2015-09-13T01:00:00.000Z",
                     urllib.parse.quote("2015-09-13T01:00:00+00:00"), "2015-09-13T01:00:00+00:00"]:
            with self.subTest(time=time):
                reply = self.server.get("/trigger-status?id=alpha&time=" + time)
                self.assertEqual(reply.status, 200, reply)

    def test_trigger_status_is_a_status_tree(self):
        reply = self.server.get("/trigger-status?id=hello&time=2015-09-13T01:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["type"], "AlwaysTrigger")
        self.assertIs(reply.json["ready"], True)
        self.assertEqual(reply.json["subStatuses"], [])
        self.assertIn("description", reply.json)

    def test_slot_state_of_a_slot_with_nothing_stored_is_404(self):
        self.assert_error(self.server.get("/slot-state?id=alpha&time=2015-09-13T05:00Z"), 404)

    def test_rerun_or_kill_of_a_time_that_is_not_a_slot_is_404(self):
        self.assert_error(self.server.post("/rerun?id=alpha&time=2015-09-13T05:30Z"), 404)
        self.assert_error(self.server.post("/kill?id=alpha&time=2015-09-13T05:30Z"), 404)
        self.assertEqual(self.server.get("/slot-state?id=alpha&time=2015-09-13T05:30Z").status,
                         404)

    def test_pause_with_a_bad_value_is_400(self):
        self.assert_error(self.server.post("/pause?id=alpha&paused=maybe"), 400, "paused")
        self.assert_error(self.server.post("/pause?id=alpha"), 400, "paused")

    def test_clear_cache_reloads_the_workflow_files(self):
        self.server.write_workflow("late.js", workflow_js("late"))
        try:
            reply = self.server.post("/clear-cache")
            self.assertEqual(reply.status, 200, reply)
            self.assertIn("late", self.server.get("/workflow-list").json["ids"])
        finally:
            os.remove(os.path.join(self.server.workflows, "late.js"))
            self.server.post("/clear-cache")
        self.assertNotIn("late", self.server.get("/workflow-list").json["ids"])

    def test_oversized_header_is_refused_and_the_server_goes_on(self):
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=30) as s:
            s.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\nX-Big: " + b"x" * 40000 + b"\r\n\r\n")
            head = s.recv(100)
        self.assertTrue(head.startswith(b"HTTP/1.1 431"), head)
        self.assertEqual(self.server.get("/version").status, 200)

    def test_a_slow_sending_client_does_not_block_others(self):
        slow = []
        try:
            for _ in range(16):  # more than the server's threads
                s = socket.create_connection(("127.0.0.1", self.server.port), timeout=30)
                s.sendall(b"GET /workflow-list HTTP/1.1\r\nHost: loc")
                slow.append(s)
            for _ in range(5):
                self.assertEqual(self.server.get("/workflow-list", timeout=10).status, 200)
        finally:
            for s in slow:
                s.close()

    def test_requests_are_logged_with_status_and_duration(self):
        self.server.get("/workflow-list")
        logs = poll(lambda: read_logs(self.server), "a log file")
        self.assertRegex(logs, r"GET /workflow-list 200 [0-9.]+ms")


class StoryTest(ServerPerTest):
    """A server per test: state changes."""

    def step(self, time=STORY_TIME, ids=None):
        target = "/scheduler?time=" + time + ("&ids=" + ids if ids else "")
        reply = self.server.post(target)
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def status(self, wid, time):
        reply = self.server.get("/slot-state?id=%s&time=%s" % (wid, time))
        if reply.status == 404:
            return None
        self.assertEqual(reply.status, 200, reply)
        return reply.json["status"]

    def test_a_command_workflow_runs_to_success(self):
        self.start({"hello.js": workflow_js("hello")})
        report = self.step()
        self.assertEqual(report["time"], "2015-09-13T01:30:00.000Z")
        self.assertEqual(report["workflows"], 1)
        self.assertEqual(report["errors"], [])
        self.assertEqual(self.status("hello", "2015-09-13T00:00Z"), "READY")
        self.step()
        self.assertEqual(self.status("hello", "2015-09-13T00:00Z"), "RUNNING")

        def done():
            self.step()
            return self.status("hello", "2015-09-13T00:00Z") == "SUCCESS"
        poll(done, "slot 00:00 to succeed", interval=0.2)
        slots = self.server.get("/workflow-slots?id=hello&end=2015-09-13T02:00Z").json["slots"]
        self.assertEqual(slots[-1]["time"], "2015-09-13T00:00:00.000Z")
        self.assertEqual(slots[-1]["status"], "SUCCESS")
        self.assertTrue(slots[-1]["externalID"])
        outputs = glob.glob(os.path.join(self.server.db, "jobs", "hello", "**", "out-00"),
                            recursive=True)
        self.assertEqual(len(outputs), 1, outputs)
        with open(outputs[0]) as f:
            self.assertEqual(f.read(), "hi\n")

    def test_illegal_rerun_and_kill_are_400_and_change_nothing(self):
        self.start({"hello.js": workflow_js("hello")})
        self.step()
        self.assertEqual(self.status("hello", "2015-09-13T01:00Z"), "READY")
        reply = self.server.post("/rerun?id=hello&time=2015-09-13T01:00Z")
        self.assertEqual(reply.status, 400, reply)
        self.assertEqual(self.status("hello", "2015-09-13T01:00Z"), "READY")
        self.assertEqual(self.server.post("/kill?id=hello&time=2015-09-13T01:00Z").status, 200)
        self.assertEqual(self.status("hello", "2015-09-13T01:00Z"), "KILLED")
        reply = self.server.post("/kill?id=hello&time=2015-09-13T01:00Z")
        self.assertEqual(reply.status, 400, reply)
        self.assertEqual(self.status("hello", "2015-09-13T01:00Z"), "KILLED")
        self.assertEqual(self.server.post("/rerun?id=hello&time=2015-09-13T01:00Z").json["status"],
                         "WAITING")

    def test_a_paused_workflow_is_not_stepped(self):
        self.start({"hello.js": workflow_js("hello")})
        reply = self.server.post("/pause?id=hello&paused=true")
        self.assertEqual(reply.status, 200, reply)
        self.assertIs(self.server.get("/workflow-slots?id=hello").json["paused"], True)
        self.assertTrue(os.path.exists(os.path.join(self.server.db, "paused", "hello")))
        self.step()
        self.assertIsNone(self.status("hello", "2015-09-13T00:00Z"))
        self.server.post("/pause?id=hello&paused=false")
        self.assertIs(self.server.get("/workflow-slots?id=hello").json["paused"], False)
        self.step()
        self.assertEqual(self.status("hello", "2015-09-13T00:00Z"), "READY")

    def test_rerun_outside_the_window_is_stepped(self):
        self.start({"old.js": workflow_js("old", start="2015-01-01T00:00Z")})
        reply = self.server.post("/rerun?id=old&time=2015-08-01T05:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["status"], "WAITING")
        self.assertEqual(self.status("old", "2015-08-01T05:00Z"), "WAITING")
        self.assertTrue(glob.glob(os.path.join(self.server.db, "rerun", "old", "2015-08-01", "*")))
        self.step(time="2015-09-13T01:30Z", ids="old")
        self.assertEqual(self.status("old", "2015-08-01T05:00Z"), "READY")
        # A slot of the same age without a rerun marker is left alone.
        self.assertIsNone(self.status("old", "2015-08-01T06:00Z"))

    def test_kill_of_a_running_command_ends_it(self):
        marker = "celos-e2e-kill-%d" % os.getpid()
        self.start({"sleeper.js": workflow_js(
            "sleeper", command="exec sleep 600 # " + marker)})
        self.step(time="2015-09-13T00:30Z")
        self.step(time="2015-09-13T00:30Z")
        reply = self.server.get("/slot-state?id=sleeper&time=2015-09-13T00:00Z")
        self.assertEqual(reply.json["status"], "RUNNING")
        self.assertTrue(reply.json["externalID"])

        def running():
            return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0
        poll(running, "the command to start")
        reply = self.server.post("/kill?id=sleeper&time=2015-09-13T00:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["status"], "KILLED")
        poll(lambda: not running(), "the command to end")
        self.step(time="2015-09-13T00:30Z")
        self.assertEqual(self.status("sleeper", "2015-09-13T00:00Z"), "KILLED")

    def test_steps_by_ids_leave_other_workflows_alone(self):
        self.start({"a.js": workflow_js("a"), "b.js": workflow_js("b")})
        report = self.step(ids="b")
        self.assertEqual(report["workflows"], 1)
        self.assertIsNone(self.status("a", "2015-09-13T00:00Z"))
        self.assertEqual(self.status("b", "2015-09-13T00:00Z"), "READY")

    def test_auto_schedule_steps_on_its_own(self):
        self.start({"now.js": workflow_js("now", start="2000-01-01T00:00Z")},
                   args=["--autoSchedule", "1"])

        def stepped():
            slots = self.server.get("/workflow-slots?id=now").json["slots"]
            return any(s["status"] != "WAITING" for s in slots)
        poll(stepped, "an automatic step")
        logs = read_logs(self.server)
        self.assertIn("step at", logs)
        self.assertEqual(self.server.terminate(), 0)


class SlowStepTest(unittest.TestCase):
    """A step held up by a WebHDFS name node that answers only when the test says so."""

    def setUp(self):
        self.hdfs = GatedWebHdfs()
        trigger = 'celos.hdfsCheckTrigger("/ready/${hour}", "webhdfs://127.0.0.1:%d")' % self.hdfs.port
        self.server = CelosServer(workflows={
            "slow.js": workflow_js("slow", trigger=trigger),
            "other.js": workflow_js("other"),
        })
        self.step_reply = None

        def step():
            self.step_reply = self.server.post("/scheduler?time=" + STORY_TIME, timeout=120)
        self.stepper = threading.Thread(target=step)
        self.stepper.start()
        self.assertTrue(self.hdfs.asked.wait(60), "the step never asked WebHDFS")

    def tearDown(self):
        self.hdfs.gate.set()
        self.stepper.join(120)
        self.server.close()
        self.hdfs.close()

    def test_reads_are_answered_while_a_step_runs(self):
        self.assertEqual(self.server.get("/workflow-list", timeout=10).json["ids"],
                         ["other", "slow"])
        self.assertEqual(self.server.get("/workflow-slots?id=other", timeout=10).status, 200)
        self.assertEqual(self.server.get("/version", timeout=10).status, 200)
        self.assertIn(
            self.server.get("/slot-state?id=other&time=2015-09-13T00:00Z", timeout=10).status,
            (200, 404))
        self.assertTrue(self.stepper.is_alive(), "the step should still be waiting for WebHDFS")
        self.hdfs.gate.set()
        self.stepper.join(120)
        self.assertEqual(self.step_reply.status, 200, self.step_reply)
        self.assertEqual(self.server.get("/slot-state?id=other&time=2015-09-13T00:00Z").json["status"],
                         "READY")

    def test_sigterm_during_a_step_lets_it_finish_and_exits_zero(self):
        self.server.process.send_signal(15)
        # The server waits for the step; it is still there and the step still runs.
        self.assertIsNone(self.server.process.poll())
        self.hdfs.gate.set()
        self.assertEqual(self.server.terminate(timeout=60), 0)
        self.stepper.join(120)
        self.assertIsNotNone(self.step_reply)
        self.assertEqual(self.step_reply.status, 200, self.step_reply)
        state = glob.glob(os.path.join(self.server.db, "state", "other", "2015-09-13", "*"))
        self.assertTrue(state, "the step's changes were written before the exit")


class CommandLineTest(unittest.TestCase):
    def run_server(self, *args):
        return subprocess.run([SERVER] + list(args), capture_output=True, text=True, timeout=60)

    def setUp(self):
        self.server = CelosServer(start=False)

    def tearDown(self):
        self.server.close()

    def test_help_and_version_exit_zero(self):
        self.assertIn("--autoSchedule", self.run_server("--help").stdout)
        result = self.run_server("--version")
        self.assertEqual(result.returncode, 0)
        self.assertIn("celos-server", result.stdout)

    def test_missing_port_is_one_clear_line_and_nonzero(self):
        command = [a for a in self.server.command()]
        i = command.index("--port")
        del command[i:i + 2]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("--port", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    def test_missing_directories_and_bad_values_are_refused(self):
        base = self.server.command()
        cases = [
            ("--workflows", os.path.join(self.server.root, "missing"), "workflows"),
            ("--defaults", os.path.join(self.server.root, "missing"), "defaults"),
            ("--db", os.path.join(self.server.root, "no", "such", "db"), "db"),
            ("--port", "seventy", "port"),
            ("--port", "70000", "port"),
            ("--autoSchedule", "0", "autoSchedule"),
            ("--autoSchedule", "often", "autoSchedule"),
            ("--hadoop-conf", os.path.join(self.server.root, "missing"), "Hadoop"),
        ]
        for flag, value, word in cases:
            with self.subTest(flag=flag, value=value):
                command = list(base)
                if flag in command:
                    command[command.index(flag) + 1] = value
                else:
                    command += [flag, value]
                result = subprocess.run(command, capture_output=True, text=True, timeout=60)
                self.assertNotEqual(result.returncode, 0)
                self.assertIn(word, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    def test_a_missing_db_is_refused_unless_create_db_and_logs_are_created(self):
        os.rmdir(self.server.db)
        result = subprocess.run(self.server.command(), capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn(self.server.db, result.stderr)
        self.assertIn("--create-db", result.stderr)
        self.assertFalse(os.path.exists(self.server.db))
        self.server.args.append("--create-db")
        self.server.start()
        self.assertTrue(os.path.isdir(self.server.db))
        self.assertTrue(os.path.isdir(self.server.logs))
        self.assertEqual(self.server.terminate(), 0)

    def test_a_busy_port_is_a_clear_error(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            command = list(self.server.command())
            command[command.index("--port") + 1] = str(s.getsockname()[1])
            result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("cannot listen", result.stderr)


if __name__ == "__main__":
    unittest.main()
