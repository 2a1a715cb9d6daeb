"""Deadlines (issue 27) against the real celos-server, steps at explicit ?time= so that nothing
depends on the clock; running jobs are polled with a bound.

The "must reach" scenarios: every miss is alerted within one step of its deadline (here: the
step at the deadline), and never for a slot that succeeded in time, was killed, or belongs to a
paused workflow; deadlines survive 100 reloads with edits of the workflow between them (and a
kill -9 of the server)."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from server_process import CelosServer, ServerPerTest, WebhookReceiver, poll  # noqa: E402

START = "2026-03-02T00:00Z"
SLOT = "2026-03-02T00:00:00.000Z"


def workflow_js(wid, ready=True, command="true", deadline='{"after": "PT1H"}', extra=""):
    trigger = "celos.alwaysTrigger()" if ready else "celos.notTrigger(celos.alwaysTrigger())"
    return """
celos.defineWorkflow({
    "id": "%s",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(1),
    "trigger": %s,
    "externalService": celos.commandExternalService(%s),
    "startTime": "%s",
    "deadline": %s%s
});
""" % (wid, trigger, json.dumps(command), START, deadline, extra)


class DeadlineTest(ServerPerTest):
    def step(self, time):
        reply = self.server.post("/scheduler?time=" + time)
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def slot(self, wid, time=SLOT):
        reply = self.server.get("/slot-state?id=%s&time=%s" % (wid, time))
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def deadline_alerts(self, receiver):
        return [b for _, _, b in receiver.bodies() if b.get("event") == "deadline"]

    def test_a_miss_is_alerted_once_in_the_step_at_the_deadline_and_only_then(self):
        receiver = WebhookReceiver()
        self.addCleanup(receiver.close)
        self.start({"late.js": workflow_js("late", ready=False),
                    "ontime.js": workflow_js("ontime"),
                    "killed.js": workflow_js("killed", ready=False),
                    "paused.js": workflow_js("paused", ready=False)},
                   args=["--notify-webhook", receiver.url + "/hook", "--allow-loopback-webhooks"])
        self.step("2026-03-02T00:05Z")  # ontime READY; every slot stored with its deadline
        for wid in ("late", "ontime", "killed", "paused"):
            self.assertEqual(self.slot(wid)["deadline"], "2026-03-02T01:00:00.000Z")

        def succeeded():
            self.step("2026-03-02T00:10Z")
            return self.slot("ontime")["status"] == "SUCCESS"
        poll(succeeded, "ontime's job to succeed", interval=0.2)
        self.assertEqual(self.server.post("/kill?id=killed&time=" + SLOT).status, 200)
        self.assertEqual(self.server.post("/pause?id=paused&paused=true").status, 200)
        self.step("2026-03-02T00:59:59Z")
        self.assertEqual(self.slot("late").get("deadlineState"), None)
        self.step("2026-03-02T01:00Z")  # the deadline of the slots at 00:00
        self.step("2026-03-02T01:01Z")  # a later step alerts nothing again

        def arrived():
            return len(self.deadline_alerts(receiver)) >= 1
        poll(arrived, "the miss to be notified")
        alerts = self.deadline_alerts(receiver)
        self.assertEqual([(a["workflow"], a["time"], a["state"]) for a in alerts],
                         [("late", SLOT, "MISSED")], alerts)
        self.assertEqual(alerts[0]["deadline"], "2026-03-02T01:00:00.000Z")
        self.assertIn("not SUCCESS at the deadline", alerts[0]["reason"])
        listed = self.server.get("/api/v1/deadlines?start=2026-03-02T00:00Z"
                                 "&end=2026-03-02T02:00Z").json["deadlines"]
        states = {(d["workflow"], d["time"]): d["state"] for d in listed}
        self.assertEqual(states[("late", SLOT)], "MISSED")
        self.assertEqual(states[("ontime", SLOT)], "MET")
        self.assertNotIn(("killed", SLOT), states)
        self.assertEqual([d["deadline"] for d in listed], sorted(d["deadline"] for d in listed))
        missed = self.server.get("/api/v1/deadlines?start=2026-03-02T00:00Z"
                                 "&end=2026-03-02T02:00Z&state=MISSED").json["deadlines"]
        self.assertEqual({d["workflow"] for d in missed}, {"late", "paused"})
        tree = self.server.get("/trigger-status?id=late&time=" + SLOT).json
        self.assertEqual(tree["deadline"]["state"], "MISSED")
        metrics = self.server.get("/metrics").body
        self.assertIn("celos_deadline_missed_total 1\n", metrics)
        self.assertIn("celos_deadlines_at_risk ", metrics)
        self.assertEqual(self.server.get("/api/v1/deadlines?start=x&end=y").status, 400)
        self.assertEqual(self.server.get("/api/v1/deadlines?start=2026-03-02T00:00Z"
                                         "&end=2026-03-02T02:00Z&state=LATE").status, 400)

    def test_deadlines_survive_100_reloads_with_edits_and_a_kill_9(self):
        self.start({"w.js": workflow_js("w", ready=False, deadline='{"after": "PT5H"}')})
        self.step("2026-03-02T00:30Z")
        for i in range(100):
            # Each edit changes the rule and the command; existing slots keep their deadline.
            self.server.write_workflow("w.js", workflow_js(
                "w", ready=False, command="echo %d" % i,
                deadline='{"after": "PT%dM"}' % (61 + i)))
            self.assertEqual(self.server.post("/clear-cache").status, 200)
            self.step("2026-03-02T00:%02d:%02dZ" % (30 + i // 60, i % 60))
            self.assertEqual(self.slot("w")["deadline"], "2026-03-02T05:00:00.000Z", i)
        self.server.process.kill()  # kill -9: the stored deadline stays
        self.server.process.wait()
        self.server.stderr.close()
        self.server.start()
        self.assertEqual(self.slot("w")["deadline"], "2026-03-02T05:00:00.000Z")
        self.step("2026-03-02T01:30Z")  # the new slot 01:00 gets the last rule: 01:00 + 160 min
        self.assertEqual(self.slot("w", "2026-03-02T01:00:00.000Z")["deadline"],
                         "2026-03-02T03:40:00.000Z")

    def test_an_operator_moves_a_deadline_audited_and_bad_deadlines_are_load_errors(self):
        self.start({"w.js": workflow_js("w", ready=False),
                    "bad.js": workflow_js("bad", deadline='{"after": "-PT1H"}')})
        moved = self.server.post("/api/v1/deadline?id=w&time=%s&deadline=2026-03-02T04:00Z"
                                 % START)
        self.assertEqual(moved.status, 200, moved)
        self.assertEqual(moved.json["deadline"], "2026-03-02T04:00:00.000Z")
        self.step("2026-03-02T02:00Z")
        self.assertNotIn("deadlineState", self.slot("w"))
        self.assertEqual(self.slot("w")["deadline"], "2026-03-02T04:00:00.000Z")
        self.assertEqual(self.server.post("/api/v1/deadline?id=w&time=%s" % START).status, 400)
        self.assertEqual(self.server.post("/api/v1/deadline?id=nope&time=%s&deadline=%s"
                                          % (START, START)).status, 404)
        audit = self.server.get("/api/v1/audit").json["records"]
        self.assertIn("/api/v1/deadline", [r["path"] for r in audit])
        self.assertEqual(self.server.get("/workflow-slots?id=bad").status, 404)
        log = self.server.stderr_text()
        for logs in os.listdir(self.server.logs):
            with open(os.path.join(self.server.logs, logs), errors="replace") as f:
                log += f.read()
        self.assertIn("bad.js", log)
        self.assertIn("\"deadline\".after", log)


if __name__ == "__main__":
    unittest.main()
