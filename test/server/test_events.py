"""End-to-end tests of event-driven steps (issue 28) against the real celos-server: with
--autoSchedule 3600 the periodic step cannot come during a test, so a consumer that is submitted
was stepped by the event (an announcement, a producer's change of state, an operator's rerun,
a job's end). No timing assertions: each wait is a bounded poll."""

import datetime
import json
import os
import sys
import unittest

import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hadoop"))
from server_process import CelosServer  # noqa: E402
from e2e_util import poll  # noqa: E402
from fake_process import FakeServer  # noqa: E402 (test/hadoop: the Oozie fake)

# The partial steps run at the wall clock's now: the slots are the last hours'.
HOUR = datetime.datetime.now(datetime.timezone.utc).replace(minute=0, second=0, microsecond=0)
START = (HOUR - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%MZ")
T0 = (HOUR - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
STARTED = ("RUNNING", "SUCCESS")


def workflow(wid, command="true", trigger="celos.alwaysTrigger()", fields=""):
    return """
importDefaults("datasets");
celos.defineWorkflow({
    "id": %s, "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(), "trigger": %s,
    "externalService": celos.commandExternalService(%s), "startTime": "%s", %s
});
""" % (json.dumps(wid), trigger, json.dumps(command), START, fields)


class EventServer(CelosServer):
    def __init__(self, workflows, args=(), data_trigger=False):
        super().__init__(start=False, args=["--autoSchedule", "3600"] + list(args))
        self.data = os.path.join(self.root, "data")
        os.makedirs(self.data)
        if data_trigger:  # "DATA" in the workflows stands for the data directory
            workflows = {k: v.replace("DATA", self.data) for k, v in workflows.items()}
        with open(os.path.join(self.defaults, "datasets.js"), "w") as f:
            f.write('var RAW = celos.dataset("raw", {"path": "%s/raw/${year}${month}${day}${hour}"});\n'
                    % self.data)
        for name, text in workflows.items():
            self.write_workflow(name, text)
        self.start()

    def status(self, wid, time=T0):
        reply = self.get("/slot-state?id=%s&time=%s" % (wid, time))
        return reply.json["status"] if reply.status == 200 else "WAITING"

    def wait_for(self, wid, statuses, time=T0):
        poll(lambda: self.status(wid, time) in statuses,
             "%s@%s to become one of %s" % (wid, time, statuses), timeout=60, interval=0.05)

    def event_count(self, event):
        text = self.get("/metrics").body
        key = 'celos_event_to_submit_seconds_count{event="%s"} ' % event
        for line in text.splitlines():
            if line.startswith(key):
                return int(line[len(key):])
        return None

    def log_text(self):
        out = self.stderr_text()
        for name in sorted(os.listdir(self.logs)):
            with open(os.path.join(self.logs, name), errors="replace") as f:
                out += f.read()
        return out


class EventTest(unittest.TestCase):
    def tearDown(self):
        self.server.close()

    def test_an_announcement_submits_the_consumer_without_waiting_for_the_periodic_step(self):
        self.server = s = EventServer({
            "consumer.js": workflow("consumer", trigger="undefined", fields='"inputs": [RAW],'),
            "bystander.js": workflow("bystander", trigger="celos.offsetTrigger(0, celos.alwaysTrigger())"),
        })
        self.assertEqual(s.status("consumer"), "WAITING")
        reply = s.post("/api/v1/datasets/raw/instances?time=" + T0)
        self.assertEqual(reply.status, 200, reply)
        s.wait_for("consumer", STARTED)
        self.assertEqual(s.status("bystander"), "WAITING")  # not stepped: not a consumer
        poll(lambda: (s.event_count("announcement") or 0) >= 1, "the announcement to be measured")
        self.assertIn("partial: 1 workflow after announcement 1: consumer", s.log_text())

    def test_a_rerun_steps_its_workflow_at_once(self):
        self.server = s = EventServer({"wf.js": workflow("wf")})
        reply = s.post("/api/v1/rerun?id=wf&time=" + T0)
        self.assertEqual(reply.status, 200, reply)
        s.wait_for("wf", STARTED)
        poll(lambda: (s.event_count("operator") or 0) >= 1, "the rerun to be measured")

    def test_a_producers_success_submits_the_workflows_that_wait_for_it(self):
        self.server = s = EventServer({
            "producer.js": workflow("producer", fields='"outputs": [RAW],'),
            "reader.js": workflow("reader", trigger="undefined", fields='"inputs": [RAW],'),
            "follower.js": workflow("follower", trigger='celos.successTrigger("producer")'),
        })
        # Only the producer is stepped by hand, until its job is SUCCESS; its dependents follow
        # by themselves.
        def producer_done():
            self.assertEqual(s.post("/scheduler?ids=producer").status, 200)
            return s.status("producer") == "SUCCESS"
        poll(producer_done, "producer to succeed", timeout=60, interval=0.2)
        s.wait_for("follower", STARTED)
        s.wait_for("reader", STARTED)

    def test_a_command_jobs_end_carries_a_chain_of_workflows_with_no_step_but_events(self):
        chain = {"w0.js": workflow("w0")}
        for i in range(1, 4):
            chain["w%d.js" % i] = workflow("w%d" % i, trigger='celos.successTrigger("w%d")' % (i - 1))
        self.server = s = EventServer(chain)
        # One rerun starts it; each job's end (the wrapper's record) steps its workflow, whose
        # SUCCESS steps the next: no periodic and no manual step.
        self.assertEqual(s.post("/api/v1/rerun?id=w0&time=" + T0).status, 200)
        s.wait_for("w3", ("SUCCESS",))
        poll(lambda: (s.event_count("job") or 0) >= 3, "job ends to be measured")
        # The last job's wrapper moves its event file in after writing its exit record, which a
        # step may already have read: the server consumes the file shortly after (bounded poll).
        events = os.path.join(s.db, "jobs", ".events")
        poll(lambda: os.listdir(events) == [], "the job-end event files to be consumed")
        self.assertEqual(os.listdir(events), [])

    def test_a_local_file_appearing_submits_the_workflow_that_waits_for_it(self):
        self.server = s = EventServer({"reader.js": workflow("reader", trigger=(
            'celos.hdfsCheckTrigger("%s/in/${year}${month}${day}/${hour}/_READY", "file:///")'
            % "DATA"))}, data_trigger=True)
        # One step by hand finds the path missing (and watches what exists of it).
        self.assertEqual(s.post("/scheduler?ids=reader").status, 200)
        self.assertEqual(s.status("reader"), "WAITING")
        hour = os.path.join(s.data, "in", T0[:10].replace("-", ""), T0[11:13])
        os.makedirs(hour)
        with open(os.path.join(hour, "_READY"), "w"):
            pass
        s.wait_for("reader", STARTED)
        poll(lambda: (s.event_count("file") or 0) >= 1, "the file event to be measured")


OOZIE_WORKFLOW = """
celos.defineWorkflow({
    "id": %(id)s, "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(), "trigger": %(trigger)s,
    "externalService": celos.oozieExternalService({"oozie.wf.application.path": "/app",
                                                  "user.name": "celos"}, "%(oozie)s"),
    "startTime": "%(start)s"
});
"""


class OozieNotificationTest(unittest.TestCase):
    def setUp(self):
        self.oozie = FakeServer("fake_oozie.py")
        self.server = None

    def tearDown(self):
        if self.server:
            self.server.close()
        self.oozie.stop()

    def serve(self, args=()):
        def wf(wid, trigger):
            return OOZIE_WORKFLOW % {"id": json.dumps(wid), "trigger": trigger,
                                     "oozie": self.oozie.url("/oozie"), "start": START}
        self.server = EventServer({"job.js": wf("job", "celos.alwaysTrigger()"),
                                   "after.js": wf("after", 'celos.successTrigger("job")')},
                                  args=args)
        return self.server

    def oozie_json(self, path, method="GET"):
        req = urllib.request.Request(self.oozie.url(path), method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=30) as res:
            return json.loads(res.read())

    def job_of(self, s, wid):
        return s.get("/slot-state?id=%s&time=%s" % (wid, T0)).json.get("externalID")

    def test_oozies_notification_of_success_stores_it_and_submits_the_consumer(self):
        s = self.serve()
        self.assertEqual(s.post("/api/v1/rerun?id=job&time=" + T0).status, 200)
        s.wait_for("job", ("RUNNING",))
        job = self.job_of(s, "job")
        props = self.oozie_json("/_control/jobs")[job]["properties"]
        self.assertEqual(props["oozie.wf.workflow.notification.url"],
                         s.url("/api/v1/oozie-notification?jobId=$jobId&status=$status"))
        # A forged notification of another job changes nothing and is refused (and audited).
        forged = s.get("/api/v1/oozie-notification?jobId=0000099-x-oozie-oozi-W&status=SUCCEEDED")
        self.assertEqual(forged.status, 404, forged)
        self.assertEqual(s.status("job"), "RUNNING")
        # The job's own notification claiming SUCCEEDED while Oozie says RUNNING: not trusted.
        self.assertEqual(s.get("/api/v1/oozie-notification?jobId=%s&status=SUCCEEDED" % job).status, 200)
        # Oozie's own notification when the job succeeds: SUCCESS stored, the follower submitted.
        self.oozie_json("/_control/status?id=%s&status=SUCCEEDED" % job, method="POST")
        s.wait_for("job", ("SUCCESS",))
        s.wait_for("after", ("RUNNING",))
        answers = [n["status"] for n in self.oozie_json("/_control/notifications")]
        self.assertIn(200, answers)
        with open(os.path.join(s.logs, "audit.log")) as f:
            audit = f.read()
        self.assertIn("oozie-notification", audit)
        self.assertIn("404", audit)

    def test_notifications_can_be_turned_off(self):
        s = self.serve(args=["--oozie-notifications=false"])
        self.assertEqual(s.post("/api/v1/rerun?id=job&time=" + T0).status, 200)
        s.wait_for("job", ("RUNNING",))
        props = self.oozie_json("/_control/jobs")[self.job_of(s, "job")]["properties"]
        self.assertNotIn("oozie.wf.workflow.notification.url", props)
        self.assertEqual(s.get("/api/v1/oozie-notification?jobId=x").status, 404)


if __name__ == "__main__":
    unittest.main()
