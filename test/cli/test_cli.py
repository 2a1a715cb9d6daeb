"""End-to-end tests of `celos`, the operators' command line (issue 31): the real binary against a
real celos-server on a temporary database, stepped at explicit ?time= values. Every command's
human output, its -o json output (the route's answer, unchanged) and its exit codes (0; 1 when
the server answers an error; 2 on bad usage; 3 on a closed port); colours on a terminal (tmux)
and not in a pipe; log --follow. Tokens and the bash completion: test_cli_setup.py."""

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
from server_process import CelosServer, poll  # noqa: E402
from e2e_util import free_port  # noqa: E402

CLI = os.environ.get("CELOS_CLI", "celos")
SOURCE = os.environ.get("CELOS_SOURCE_DIR", os.path.join(HERE, "..", ".."))
NOW = "2015-09-13T03:30Z"  # slots 00:00, 01:00, 02:00, 03:00 of hourly workflows
FROM, TO = "2015-09-13T00:00Z", "2015-09-13T03:00Z"
T1 = "2015-09-13T01:00:00.000Z"


def workflow(wid, command, extra=""):
    return """
celos.defineWorkflow({
    "id": %s,
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(3),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService(%s),
    "startTime": "2015-09-13T00:00Z"%s
});
""" % (json.dumps(wid), json.dumps(command), extra)


def consumer(wid):
    return """
celos.defineWorkflow({
    "id": %s, "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "externalService": celos.commandExternalService("true"),
    "startTime": "2015-09-13T00:00Z", "inputs": [EXT]
});
""" % json.dumps(wid)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CELOS_SERVER", "CELOS_TOKEN", "CELOS_UI_CONFIG", "NO_COLOR")}
    env.update(extra)
    return env


class Run:
    def __init__(self, result):
        self.code = result.returncode
        self.out = result.stdout
        self.err = result.stderr

    @property
    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return "exit %d\nstdout: %s\nstderr: %s" % (self.code, self.out[:2000], self.err[:2000])


class CliCase(unittest.TestCase):
    server = None

    def celos(self, *args, server=True, env=None):
        argv = [CLI] + list(args)
        if server:
            argv += ["--server", self.server.url("")]
        return Run(subprocess.run(argv, capture_output=True, text=True, timeout=120,
                                  env=env or clean_env()))

    def ok(self, *args, **kw):
        run = self.celos(*args, **kw)
        self.assertEqual(run.code, 0, run)
        self.assertEqual(run.err, "", run)
        return run

    def route(self, method, target):
        reply = self.server.request(method, target, body=b"" if method == "POST" else None)
        self.assertLess(reply.status, 400, reply)
        return reply.json

    def assert_json_is_route(self, args, target):
        """-o json prints exactly what the route answers."""
        run = self.ok(*args, "-o", "json")
        self.assertEqual(run.json, self.route("GET", target))

    def status(self, wid, time):
        reply = self.server.get("/slot-state?id=%s&time=%s" % (wid, time))
        return None if reply.status == 404 else reply.json["status"]

    def step(self, at=NOW):
        self.assertEqual(self.server.post("/scheduler?time=" + at).status, 200)


class CliTest(CliCase):
    @classmethod
    def setUpClass(cls):
        s = CelosServer(start=False)
        with open(os.path.join(s.defaults, "datasets.js"), "w") as f:
            f.write('var EXT = celos.dataset("ext", {"path": "%s/ext/${year}${month}${day}/${hour}"});'
                    % s.root)
        s.write_workflow("ok.js", workflow("ok", "echo out-${hour}; echo err-${hour} >&2"))
        s.write_workflow("bad.js", workflow("bad", "exit 1"))
        s.write_workflow("rr.js", workflow("rr", "exit 1"))
        s.write_workflow("kk.js", workflow("kk", "sleep 60"))
        s.write_workflow("pp.js", workflow("pp", "true"))
        s.write_workflow("use.js", 'importDefaults("datasets");' + consumer("use"))
        s.start()
        cls.server = s

        def final():
            s.post("/scheduler?time=" + NOW)
            done = all(s.get("/slot-state?id=%s&time=2015-09-13T0%d:00Z" % (w, h)).status == 200
                       and s.get("/slot-state?id=%s&time=2015-09-13T0%d:00Z" % (w, h)).json["status"]
                       in ("SUCCESS", "FAILURE") for w in ("ok", "bad", "rr") for h in (0, 1, 2))
            running = s.get("/slot-state?id=kk&time=2015-09-13T00:00Z")
            return done and running.status == 200 and running.json["status"] == "RUNNING"
        poll(final, "the slots of ok, bad and rr to end, kk to run", interval=0.2)

    @classmethod
    def tearDownClass(cls):
        cls.server.post("/api/v1/kill?id=kk&start=2015-09-13T00:00Z&end=2015-09-13T04:00Z")
        cls.server.close()

    # ---- reading

    def test_status_shows_every_workflow_and_filters_failed_ones(self):
        run = self.ok("status", "--from", FROM, "--to", TO)
        lines = run.out.splitlines()
        self.assertEqual(lines[0].split()[:3], ["WORKFLOW", "LAST", "SLOT"])
        rows = {line.split()[0]: line for line in lines[1:]}
        self.assertEqual(sorted(rows), ["bad", "kk", "ok", "pp", "rr", "use"])
        self.assertIn("2015-09-13T02:00Z  SUCCESS", rows["ok"])
        self.assertTrue(rows["ok"].endswith("..."), rows["ok"])
        failed = self.ok("status", "--failed", "--from", FROM, "--to", TO)
        self.assertIn("bad", failed.out)
        self.assertNotIn("\nok ", failed.out)
        self.assert_json_is_route(
            ["status", "--from", FROM, "--to", TO],
            "/api/v1/multi-workflow-slots?start=2015-09-13T00:00Z&end=2015-09-13T03:00Z")

    def test_slots_lists_the_slots_newest_first(self):
        run = self.ok("slots", "ok", "--from", FROM, "--to", TO)
        self.assertEqual([line.split()[:2] for line in run.out.splitlines()[1:]],
                         [["2015-09-13T02:00Z", "SUCCESS"], ["2015-09-13T01:00Z", "SUCCESS"],
                          ["2015-09-13T00:00Z", "SUCCESS"]])
        in_tz = self.ok("slots", "ok", "--from", "2015-09-13T03:00+02:00", "--to", TO, "--tz",
                        "+02:00")
        self.assertEqual(in_tz.out.splitlines()[1].split()[0], "2015-09-13T04:00+02:00")
        self.assert_json_is_route(["slots", "ok", "--from", FROM, "--to", TO],
                                  "/api/v1/workflow-slots?id=ok&start=%s&end=%s" % (FROM, TO))

    def test_why_prints_the_trigger_tree(self):
        run = self.ok("why", "ok", "2015-09-13T05:00Z")
        self.assertEqual(run.out, "ready   AlwaysTrigger: Always ready\n")
        missing = self.ok("why", "use", "2015-09-13T02:00Z")  # ext 02:00 is never announced
        self.assertTrue(missing.out.startswith("missing "), missing)
        self.assert_json_is_route(["why", "use", "2015-09-13T02:00Z"],
                                  "/api/v1/trigger-status?id=use&time=2015-09-13T02:00Z")

    def test_history_lists_the_changes_of_a_slot(self):
        run = self.ok("history", "ok", "2015-09-13T01:00Z")
        rows = [line.split()[:4] for line in run.out.splitlines()[1:]]
        self.assertEqual(rows[0], ["2015-09-13T03:30Z", "-", "READY", "step"])
        self.assertEqual(rows[-1][1:3], ["RUNNING", "SUCCESS"])
        self.assert_json_is_route(["history", "ok", "2015-09-13T01:00Z"],
                                  "/api/v1/slot-history?id=ok&time=2015-09-13T01:00Z")

    def test_log_and_state_of_a_slot(self):
        self.assertEqual(self.ok("log", "ok", "2015-09-13T01:00Z").out, "out-01\n")
        self.assertEqual(self.ok("log", "ok", "2015-09-13T01:00Z", "--stderr").out, "err-01\n")
        self.assertEqual(self.ok("log", "ok", "2015-09-13T01:00Z", "--tail", "3").out, "01\n")
        self.assertEqual(self.ok("log", "ok", "2015-09-13T01:00Z", "-o", "json").out, "out-01\n")
        state = self.ok("state", "ok", "2015-09-13T01:00Z")
        self.assertEqual(state.out.splitlines()[1].split()[:2], ["2015-09-13T01:00Z", "SUCCESS"])
        self.assert_json_is_route(["state", "ok", "2015-09-13T01:00Z"],
                                  "/api/v1/slot-state?id=ok&time=2015-09-13T01:00Z")

    def test_workflows_version_openapi_docs_health(self):
        self.assertEqual(self.ok("workflows").out.split(), ["bad", "kk", "ok", "pp", "rr", "use"])
        self.assert_json_is_route(["workflows"], "/api/v1/workflow-list")
        version = self.ok("version").out
        self.assertIn("celos-server %s at" % self.route("GET", "/api/v1/version")["version"],
                      version)
        self.assert_json_is_route(["version"], "/api/v1/version")
        self.assertIn("/api/v1/workflow-slots", self.ok("openapi").json["paths"])
        self.assertIn("/api/v1/docs", self.ok("docs").out)
        self.assertGreater(len(self.ok("docs", "swagger-ui.css").out), 1000)
        health = self.ok("health")
        self.assertTrue(health.out.startswith("ok (leader)"), health)
        self.assertEqual(self.ok("health", "-o", "json").json["status"], "ok")

    def test_datasets_announce_instances_lineage(self):
        datasets = self.ok("datasets")
        self.assertIn("ext", datasets.out)
        self.assertIn("use", datasets.out.splitlines()[1])
        self.assert_json_is_route(["datasets"], "/api/v1/datasets")
        announced = self.ok("announce", "ext", "2015-09-13T01:00Z")
        self.assertEqual(announced.out, "ext 2015-09-13T01:00Z is present\n")
        self.assertTrue(self.celos("announce", "ext", "2015-09-13T01:00Z", "-o", "json").json["present"])
        instances = self.ok("instances", "ext", "--from", FROM, "--to", TO)
        rows = {line.split()[0]: line.split()[1:3] for line in instances.out.splitlines()[1:]}
        self.assertEqual(rows["2015-09-13T01:00Z"], ["yes", "yes"])
        self.assert_json_is_route(["instances", "ext", "--from", FROM, "--to", TO],
                                  "/api/v1/datasets/ext/instances?start=%s&end=%s" % (FROM, TO))
        lineage = self.ok("lineage", "use", "2015-09-13T01:00Z")
        self.assertEqual(lineage.out.splitlines()[1].split()[:3], ["ext", "2015-09-13T01:00Z", "yes"])
        self.assert_json_is_route(["lineage", "use", "2015-09-13T01:00Z"],
                                  "/api/v1/lineage?id=use&time=2015-09-13T01:00Z")

    def test_cluster_of_one_and_step_down_refused(self):
        cluster = self.ok("cluster")
        self.assertIn("leader", cluster.out.splitlines()[0])
        self.assertIn("(this node)", cluster.out)
        shown = self.ok("cluster", "-o", "json").json
        route = self.route("GET", "/api/v1/cluster")
        for node in shown["nodes"] + route["nodes"]:
            node.pop("lastSeen")  # the time of the request
        self.assertEqual(shown, route)
        refused = self.celos("step-down", "--seconds", "5")
        self.assertEqual(refused.code, 1, refused)
        self.assertEqual(refused.out, "")
        line = refused.err.rstrip("\n")
        self.assertNotIn("\n", line)
        self.assertTrue(line.startswith("celos step-down: celos-server answered 409: {\"error\":"), line)
        json.loads(line[line.index("{"):])

    # ---- changing

    def test_rerun_one_slot_then_audited(self):
        run = self.ok("rerun", "rr", "2015-09-13T01:00Z")
        self.assertEqual(run.out, "rerun rr 2015-09-13T01:00Z: now WAITING\n")
        self.assertEqual(self.status("rr", "2015-09-13T01:00Z"), "WAITING")
        refused = self.celos("rerun", "rr", "2015-09-13T01:00Z")  # WAITING: 400
        self.assertEqual(refused.code, 1, refused)
        self.assertIn("answered 400", refused.err)
        audit = self.ok("audit", "--since", "2015-01-01T00:00Z")
        self.assertIn("/api/v1/rerun", audit.out)
        self.assertIn("id=rr&time=2015-09-13T01", audit.out)
        records = self.ok("audit", "-o", "json")
        self.assertTrue(any(r["path"] == "/api/v1/rerun" for r in records.json["records"]))

    def test_range_over_100_slots_is_a_dry_run_unless_yes(self):
        args = ["rerun", "rr", "--from", "2015-09-14T00:00Z", "--to", "2015-09-19T00:00Z"]
        dry = self.ok(*args)
        self.assertTrue(dry.out.startswith("dry run: would rerun rr: 120 slots\n"), dry)
        self.assertIn("this was a dry run: 120 slots is more than 100; to do it: celos rerun rr "
                      "--from 2015-09-14T00:00:00.000Z --to 2015-09-19T00:00:00.000Z --yes", dry.out)
        self.assertIsNone(self.status("rr", "2015-09-16T00:00Z"))
        as_json = self.celos(*args, "-o", "json")
        self.assertEqual(as_json.code, 0)
        self.assertTrue(as_json.json["dryRun"])
        self.assertIn("this was a dry run", as_json.err)
        small = self.ok("rerun", "rr", "--from", FROM, "--to", TO, "--status", "FAILURE",
                        "--dry-run")
        self.assertTrue(small.out.startswith("dry run: would rerun rr: "), small)
        yes = self.ok(*args, "--yes", "-o", "json")
        self.assertFalse(yes.json["dryRun"])
        self.assertEqual(len(yes.json["slots"]), 120)
        self.assertEqual(self.status("rr", "2015-09-16T00:00Z"), "WAITING")

    def test_kill_a_running_slot(self):
        run = self.ok("kill", "kk", "2015-09-13T01:00Z")
        self.assertEqual(run.out, "kill kk 2015-09-13T01:00Z: now KILLED\n")
        again = self.celos("kill", "kk", "--from", FROM, "--to", "2015-09-13T02:00Z", "--dry-run")
        self.assertEqual(again.code, 0, again)
        self.assertIn("skipped: 1", again.out)

    def test_pause_and_unpause(self):
        self.assertEqual(self.ok("pause", "pp").out, "pp is paused\n")
        self.assertTrue(self.route("GET", "/api/v1/workflow-slots?id=pp&end=" + TO)["paused"])
        self.assertIn("pp is paused", self.ok("slots", "pp", "--from", FROM, "--to", TO).out)
        self.assertEqual(self.ok("unpause", "pp", "-o", "json").json, {"id": "pp", "paused": False})
        self.assertFalse(self.route("GET", "/api/v1/workflow-slots?id=pp&end=" + TO)["paused"])

    def test_maintenance_drain_and_off(self):
        try:
            run = self.ok("maintenance", "drain", "--reason", "patching")
            self.assertTrue(run.out.startswith("maintenance: drain (patching) since "), run)
            self.assertEqual(self.route("GET", "/api/v1/maintenance")["mode"], "drain")
            shown = self.ok("maintenance", "-o", "json").json
            self.assertEqual(shown, self.route("GET", "/api/v1/maintenance"))
        finally:
            off = self.ok("maintenance", "off")
        self.assertTrue(off.out.startswith("maintenance: off"), off)

    def test_step_and_reload(self):
        run = self.ok("step", "2015-09-13T03:30Z", "--ids", "ok")
        self.assertTrue(run.out.startswith("step at 2015-09-13T03:30Z: 1 workflows"), run)
        self.assertEqual(self.ok("step", NOW, "--ids", "ok", "-o", "json").json["workflows"], 1)
        self.assertEqual(self.ok("reload").out, "6 workflows loaded\n")

    # ---- exit codes

    def test_an_unknown_workflow_exits_1_with_the_error_on_one_line(self):
        for args in (["slots", "nope"], ["why", "nope", FROM], ["history", "nope", FROM],
                     ["rerun", "nope", FROM], ["pause", "nope"], ["lineage", "nope", FROM]):
            run = self.celos(*args)
            self.assertEqual(run.code, 1, (args, run))
            self.assertEqual(run.out, "")
            self.assertEqual(run.err.count("\n"), 1, run)
            self.assertIn("answered 404: {\"error\":", run.err)

    def test_bad_usage_exits_2_with_the_commands_usage(self):
        for args, usage in ((["slots"], "usage: celos slots W"),
                            (["why", "ok", "yesterday"], "usage: celos why W T"),
                            (["rerun", "ok", "--frm", FROM], "usage: celos rerun W"),
                            (["status", "-o", "yaml"], "usage: celos [global options]"),
                            (["nonsense"], "unknown command")):
            run = self.celos(*args)
            self.assertEqual(run.code, 2, (args, run))
            self.assertIn(usage, run.err)
        self.assertEqual(self.celos("rerun", "--help").code, 0)

    def test_a_closed_port_exits_3(self):
        run = self.celos("status", server=False,
                         env=clean_env(CELOS_SERVER="http://127.0.0.1:%d" % free_port()))
        self.assertEqual(run.code, 3, run)
        self.assertIn("no connection to celos-server", run.err)

    def test_celos_server_from_the_environment_and_options_after_the_command(self):
        run = self.celos("workflows", server=False, env=clean_env(CELOS_SERVER=self.server.url("")))
        self.assertEqual(run.code, 0, run)
        run = self.celos("workflows", "-o", "json", "--server", self.server.url(""), server=False)
        self.assertEqual(run.json["ids"][0], "bad")

    # ---- terminal

    @unittest.skipUnless(shutil.which("tmux"), "tmux is not installed")
    def test_colours_on_a_terminal_and_not_in_a_pipe(self):
        piped = self.ok("slots", "bad", "--from", FROM, "--to", TO)
        self.assertNotIn("\x1b[", piped.out)
        socket = "celos-cli-test-%d" % os.getpid()
        out = os.path.join(self.server.root, "tmux-done")
        command = "env -u NO_COLOR TERM=xterm %s slots bad --from %s --to %s --server %s; touch %s; sleep 60" % (
            CLI, FROM, TO, self.server.url(""), out)
        subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-x", "160", "-y", "40",
                        "-s", "cli", command], check=True, timeout=30)
        try:
            poll(lambda: os.path.exists(out), "celos to run in tmux")
            screen = subprocess.run(["tmux", "-L", socket, "capture-pane", "-p", "-e", "-t", "cli"],
                                    capture_output=True, text=True, check=True, timeout=30).stdout
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], timeout=30)
        self.assertIn("FAILURE", screen)
        self.assertIn("\x1b[31mFAILURE", screen)


class JobTest(CliCase):
    """A job that waits for a file: log --follow and maintenance --wait."""
    def setUp(self):
        s = CelosServer(start=False)
        self.go = os.path.join(s.root, "go")
        s.write_workflow("f.js", workflow(
            "f", "echo one; while [ ! -f %s ]; do sleep 0.05; done; echo two" % self.go))
        s.start()
        self.server = s

    def tearDown(self):
        with open(self.go, "w"):
            pass
        self.server.close()

    def test_log_follow_shows_new_output_and_ends_with_the_slot(self):
        slot = "2015-09-13T00:00Z"

        def started():
            self.step("2015-09-13T00:30Z")
            return self.server.get("/api/v1/slot-log?id=f&time=" + slot).body == "one\n"
        poll(started, "the job to print its first line", interval=0.2)
        follow = subprocess.Popen([CLI, "log", "f", slot, "--follow", "--server",
                                   self.server.url("")], stdout=subprocess.PIPE, text=True,
                                  env=clean_env())
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(l) for l in follow.stdout], daemon=True).start()
        try:
            self.assertEqual(lines.get(timeout=30), "one\n")
            with open(self.go, "w"):
                pass
            written = time.monotonic()
            self.assertEqual(lines.get(timeout=30), "two\n")
            print("log --follow: new output shown %.0f ms after the job wrote it"
                  % ((time.monotonic() - written) * 1000), file=sys.stderr)
            self.assertIsNone(follow.poll())  # still RUNNING as far as celos knows

            def ended():
                self.step("2015-09-13T00:30Z")
                return follow.poll() is not None
            poll(ended, "log --follow to end with the slot", interval=0.2)
            self.assertEqual(follow.returncode, 0)
            self.assertTrue(lines.empty())
        finally:
            if follow.poll() is None:
                follow.kill()
            follow.wait()
            follow.stdout.close()


    def test_maintenance_drain_wait_returns_when_no_slot_runs(self):
        slot = "2015-09-13T00:00Z"

        def running():
            self.step("2015-09-13T00:30Z")
            return self.status("f", slot) == "RUNNING"
        poll(running, "the job to run", interval=0.2)
        wait = subprocess.Popen([CLI, "maintenance", "drain", "--reason", "restart", "--wait",
                                 "--server", self.server.url("")], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=clean_env())
        said = queue.Queue()
        threading.Thread(target=lambda: [said.put(l) for l in wait.stderr], daemon=True).start()
        try:
            self.assertEqual(said.get(timeout=30), "waiting: 1 slots running\n")
            self.assertIsNone(wait.poll())
            with open(self.go, "w"):
                pass

            def ended():
                self.step("2015-09-13T00:30Z")  # drain follows the running slot to its end
                return wait.poll() is not None
            poll(ended, "maintenance --wait to return", interval=0.2)
            self.assertEqual(wait.returncode, 0)
            out = wait.stdout.read()
            self.assertTrue(out.startswith("maintenance: drain (restart) since "), out)
            self.assertTrue(out.endswith("; running slots: 0\n"), out)
            self.assertEqual(self.status("f", slot), "SUCCESS")
        finally:
            if wait.poll() is None:
                wait.kill()
            wait.wait()
            wait.stdout.close()
            wait.stderr.close()


if __name__ == "__main__":
    unittest.main()
