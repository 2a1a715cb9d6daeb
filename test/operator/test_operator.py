"""End-to-end tests of the operator features (SPEC §13, §16): range rerun/kill, slot history,
slot logs, retry back-off and notifications, against the real celos-server. Steps use explicit
?time= so that nothing depends on the clock; running jobs are polled with a bound."""

import datetime
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from server_process import ServerPerTest, WebhookReceiver, poll  # noqa: E402


def workflow_js(wid, command="echo out-${hour}; echo err >&2", extra=""):
    return """
celos.defineWorkflow({
    "id": "%s",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(3),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService(%s),
    "startTime": "2015-09-13T00:00Z"%s
});
""" % (wid, json.dumps(command), extra)


NOW = "2015-09-13T03:30Z"


class OperatorBase(ServerPerTest):
    def step(self, time=NOW):
        reply = self.server.post("/scheduler?time=" + time)
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def status(self, wid, time):
        reply = self.server.get("/slot-state?id=%s&time=%s" % (wid, time))
        return None if reply.status == 404 else reply.json["status"]

    def run_until_final(self, wid, times, now=NOW):
        def final():
            self.step(now)
            return all(self.status(wid, t) in ("SUCCESS", "FAILURE") for t in times)
        poll(final, "slots %s to end" % (times,), interval=0.2)


class OperatorTest(OperatorBase):
    def test_range_rerun_dry_run_then_real_with_history(self):
        self.start({"a.js": workflow_js("a", command="exit 1")})
        times = ["2015-09-13T00:00Z", "2015-09-13T01:00Z", "2015-09-13T02:00Z"]
        self.step()
        self.run_until_final("a", times)
        self.assertEqual([self.status("a", t) for t in times], ["FAILURE"] * 3)
        before = self.server.get("/workflow-slots?id=a&end=2015-09-13T04:00Z").json
        rng = "/api/v1/rerun?id=a&start=2015-09-12T23:00Z&end=2015-09-13T05:00Z"
        dry = self.server.post(rng + "&status=FAILURE&dryRun=true")
        self.assertEqual(dry.status, 200, dry)
        self.assertTrue(dry.json["dryRun"])
        self.assertEqual([s["time"] for s in dry.json["slots"]],
                         ["2015-09-13T00:00:00.000Z", "2015-09-13T01:00:00.000Z",
                          "2015-09-13T02:00:00.000Z"])
        self.assertEqual({s["from"] for s in dry.json["slots"]}, {"FAILURE"})
        self.assertEqual(self.server.get("/workflow-slots?id=a&end=2015-09-13T04:00Z").json, before)
        # Bad requests change nothing.
        for bad in (rng + "&status=FAILED", rng + "&time=2015-09-13T00:00Z",
                    "/api/v1/rerun?id=a&start=2015-09-13T05:00Z&end=2015-09-13T00:00Z",
                    "/api/v1/rerun?id=a&start=2015-09-13T00:00Z",
                    "/api/v1/rerun?id=a&start=2014-01-01T00:00Z&end=2017-01-01T00:00Z"):
            reply = self.server.post(bad)
            self.assertEqual(reply.status, 400, (bad, reply))
            self.assertIn("error", reply.json)
        self.assertEqual(self.server.get("/workflow-slots?id=a&end=2015-09-13T04:00Z").json, before)
        real = self.server.post(rng + "&status=FAILURE")
        self.assertEqual(real.status, 200, real)
        self.assertFalse(real.json["dryRun"])
        self.assertEqual(len(real.json["slots"]), 3)
        self.assertEqual([self.status("a", t) for t in times], ["WAITING"] * 3)
        history = self.server.get("/api/v1/slot-history?id=a&time=2015-09-13T01:00Z")
        self.assertEqual(history.status, 200, history)
        steps = [(h["from"], h["to"], h["by"]) for h in history.json]
        self.assertEqual(steps[:3], [(None, "READY", "step"), ("READY", "RUNNING", "step"),
                                     ("RUNNING", "FAILURE", "step")])
        self.assertEqual(steps[-1][:2], ("FAILURE", "WAITING"))
        self.assertEqual(steps[-1][2], "api:anonymous@127.0.0.1")
        self.assertEqual(history.json[0]["at"], "2015-09-13T03:30:00.000Z")
        self.assertTrue(history.json[1]["externalID"])
        self.assertEqual(self.server.get(
            "/api/v1/slot-history?id=a&time=2015-09-13T01:30Z").status, 404)
        self.assertEqual(self.server.get(
            "/api/v1/slot-history?id=nope&time=2015-09-13T01:00Z").status, 404)
        self.assertEqual(self.server.get(
            "/api/v1/slot-history?id=a&time=2015-09-13T05:00Z").json, [])
        # One history file per workflow and day, not one per change.
        self.assertEqual(os.listdir(os.path.join(self.server.db, "history", "a")),
                         ["2015-09-13.jsonl"])

    def test_range_kill_and_backfill_markers(self):
        self.start({"b.js": workflow_js("b", command="sleep 600")})
        self.step()
        self.step()
        self.assertEqual(self.status("b", "2015-09-13T00:00Z"), "RUNNING")
        reply = self.server.post(
            "/api/v1/kill?id=b&start=2015-09-13T00:00Z&end=2015-09-13T03:00Z&dryRun=true")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual([s["from"] for s in reply.json["slots"]], ["RUNNING"] * 3)
        self.assertEqual(self.status("b", "2015-09-13T00:00Z"), "RUNNING")
        reply = self.server.post("/api/v1/kill?id=b&start=2015-09-13T00:00Z&end=2015-09-13T03:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual([s["to"] for s in reply.json["slots"]], ["KILLED"] * 3)
        self.assertEqual(self.status("b", "2015-09-13T02:00Z"), "KILLED")
        # Backfill: slots long before the window get rerun markers and are stepped.
        reply = self.server.post("/api/v1/rerun?id=b&start=2015-09-01T00:00Z&end=2015-09-01T02:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual([s["from"] for s in reply.json["slots"]], [])  # before startTime
        reply = self.server.post("/api/v1/rerun?id=b&start=2015-09-13T00:00Z&end=2015-09-13T02:00Z")
        self.assertEqual([s["from"] for s in reply.json["slots"]], ["KILLED", "KILLED"])
        self.assertTrue(os.path.exists(os.path.join(
            self.server.db, "rerun", "b", "2015-09-13", "00:00:00.000Z")))
        self.step("2015-09-25T00:30Z")  # twelve days later: only the markers keep them in view
        self.assertEqual(self.status("b", "2015-09-13T00:00Z"), "READY")
        self.assertEqual(self.status("b", "2015-09-13T02:00Z"), "KILLED")
        self.server.post("/api/v1/kill?id=b&start=2015-09-13T00:00Z&end=2015-09-26T00:00Z")

    def test_slot_log_answers_the_tail_of_the_job_output(self):
        self.start({"c.js": workflow_js("c", command="echo out-${hour}; echo err-${hour} >&2")})
        self.step()
        self.run_until_final("c", ["2015-09-13T01:00Z"])
        log = self.server.get("/api/v1/slot-log?id=c&time=2015-09-13T01:00Z")
        self.assertEqual(log.status, 200, log)
        self.assertEqual(log.headers["Content-Type"], "text/plain; charset=utf-8")
        self.assertEqual(log.body, "out-01\n")
        err = self.server.get("/api/v1/slot-log?id=c&time=2015-09-13T01:00Z&stream=stderr&tail=4")
        self.assertEqual(err.body, "-01\n")
        self.assertEqual(self.server.get(
            "/api/v1/slot-log?id=c&time=2015-09-13T01:00Z&tail=0").status, 400)
        self.assertEqual(self.server.get(
            "/api/v1/slot-log?id=c&time=2015-09-13T05:00Z").status, 404)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class BackoffAndNotifyTest(OperatorBase):
    def test_a_failed_slot_waits_for_its_retry_time(self):
        # Step times an hour ahead of the real clock, so that /trigger-status (evaluated at the
        # real time) sees the wait too.
        real = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        slot = real.replace(minute=0, second=0, microsecond=0) + datetime.timedelta(hours=1)
        at = slot + datetime.timedelta(minutes=30)
        wf = workflow_js("r", command="exit 1").replace(
            '"startTime": "2015-09-13T00:00Z"',
            '"startTime": "%s", "maxRetryCount": 2, "retryDelaySeconds": 600, '
            '"waitTimeoutSeconds": 60' % iso(slot))
        self.start({"r.js": wf})
        self.step(iso(at))
        self.step(iso(at))
        self.assertEqual(self.status("r", iso(slot)), "RUNNING")

        def retried():
            self.step(iso(at))
            return self.server.get("/slot-state?id=r&time=%s" % iso(slot)).json["retryCount"] == 1
        poll(retried, "the job to fail once", interval=0.2)
        retry_at = iso(at + datetime.timedelta(minutes=10))
        tree = self.server.get("/trigger-status?id=r&time=%s" % iso(slot)).json
        self.assertEqual(tree["type"], "RetryBackoff")
        self.assertFalse(tree["ready"])
        self.assertEqual(tree["description"], "Retry 1 not before " + retry_at)
        self.assertEqual(tree["subStatuses"][0]["type"], "AlwaysTrigger")
        self.step(iso(at + datetime.timedelta(minutes=9)))
        self.assertEqual(self.status("r", iso(slot)), "WAITING")  # no READY, no WAIT_TIMEOUT
        self.step(retry_at)
        self.assertEqual(self.status("r", iso(slot)), "READY")
        history = self.server.get("/api/v1/slot-history?id=r&time=%s" % iso(slot)).json
        self.assertEqual(history[2]["to"], "WAITING")
        self.assertEqual(history[2]["retryCount"], 1)

    def test_notifications_reach_a_local_receiver(self):
        receiver = WebhookReceiver()
        self.addCleanup(receiver.close)
        wf = workflow_js("n", command="exit 1", extra=', "url": "http://wiki/n", "notify": '
                         '[{"on": ["KILLED", "FAILURE"], "webhook": "%s/n"}]' % receiver.url)
        # The receiver is on loopback: refused without --allow-loopback-webhooks (issue 33).
        self.start({"n.js": wf}, args=["--notify-webhook", receiver.url + "/all",
                                       "--allow-loopback-webhooks"])
        self.step()
        self.step()
        self.run_until_final("n", ["2015-09-13T00:00Z"])
        # A change made through the API notifies too.
        self.assertEqual(self.server.post("/kill?id=n&time=2015-09-13T05:00Z").status, 200)

        def arrived():
            statuses = [(p, b["status"], b["time"]) for p, _, b in receiver.bodies()]
            return (("/all", "FAILURE", "2015-09-13T00:00:00.000Z") in statuses
                    and ("/n", "KILLED", "2015-09-13T05:00:00.000Z") in statuses)
        poll(arrived, "notifications to arrive")
        bodies = receiver.bodies()
        failure = [b for p, _, b in bodies if p == "/all" and b["time"].startswith("2015-09-13T00")]
        self.assertEqual(len(failure), 1, bodies)
        self.assertEqual(failure[0]["workflow"], "n")
        self.assertEqual(failure[0]["status"], "FAILURE")
        self.assertEqual(failure[0]["url"], "http://wiki/n")
        self.assertTrue(failure[0]["externalID"])
        self.assertTrue(failure[0]["node"])
        killed = [b for p, _, b in bodies if b["status"] == "KILLED"]
        self.assertEqual([(k["time"], k["externalID"]) for k in killed],
                         [("2015-09-13T05:00:00.000Z", None)])
        self.assertEqual({t for _, t, _ in bodies}, {"application/json"})
        self.assertEqual(len({b["id"] for _, _, b in bodies}), len(bodies))


if __name__ == "__main__":
    unittest.main()
