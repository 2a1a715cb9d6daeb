"""celos-server runs slots as Kubernetes Jobs (issue 30) on the fake API server of this folder
(fake_kube_apiserver.py: HTTPS with a bearer token, or plain HTTP), whose scripted cluster runs
each pod's command as a local process.

Stories: a job runs to SUCCESS with the slot's environment and its log in /api/v1/slot-log; a
failing command is FAILURE with Kubernetes's reason; a kill deletes the Job; a Job deleted
behind celos's back is FAILURE with a message within 2 steps; once celos's watches are live a
status step makes no API request, and a deletion still fails the slot within 2 steps; a pod no node takes keeps the slot
RUNNING with the reason; a suspended Job left by a crash between submit and record is adopted,
not created again; plain http:// carries the token too; refused credentials make a message on
the slot and in /health/ready; an unreachable API server leaves the slot READY.

The scheduler is stepped with explicit times (POST /scheduler?time=...); the pods are real
processes, so the waits are polls with bounds."""

import json
import os
import subprocess
import sys
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
from e2e_util import free_port, poll  # noqa: E402
from kube_util import TOKEN, FakeKube, temporary_directory  # noqa: E402
from server_process import CelosServer  # noqa: E402

SLOT = "2015-09-12T20:00Z"
SLOT_TIME = "2015-09-12T20:00:00.000Z"
NAMESPACE = "team"


class PlainFakeKube(FakeKube):
    """The fake over plain HTTP (kubectl would not send a token there; celos does)."""

    def __init__(self, directory, *args, token=TOKEN):
        self.directory = directory
        self.args = list(args) + (["--token", token] if token else [])
        self.token = token
        self.port = 0
        self.process = None
        self.context = None
        self.cert = None
        self.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port


def kubeconfig(directory, server, token, ca=None, namespace=NAMESPACE, name="kubeconfig"):
    """A kubeconfig in YAML, as kubectl writes them."""
    path = os.path.join(directory, name)
    cluster = "    server: %s\n" % server + (
        "    certificate-authority: %s\n" % ca if ca else "")
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n"
                "  cluster:\n" + cluster + "contexts:\n- name: fake\n  context:\n"
                "    cluster: fake\n    user: celos\n    namespace: %s\nusers:\n- name: celos\n"
                "  user:\n    token: %s\n" % (namespace, json.dumps(token)))
    return path


def workflow(wf_id, config, command, env=None, max_retries=0, **extra):
    options = dict({"kubeconfig": config, "image": "debian:12", "command": command,
                    "env": env or {}}, **extra)
    return """celos.defineWorkflow({
  id: %s,
  schedule: celos.hourlySchedule(),
  schedulingStrategy: celos.serialSchedulingStrategy(),
  trigger: celos.alwaysTrigger(),
  externalService: celos.kubernetesExternalService(%s),
  startTime: "%s",
  maxRetryCount: %d
});
""" % (json.dumps(wf_id), json.dumps(options), SLOT, max_retries)


class KubeStories(unittest.TestCase):
    plain = False

    def setUp(self):
        self.dir = temporary_directory(self)
        if self.plain:
            self.fake = PlainFakeKube(self.dir)
        else:
            self.fake = FakeKube(self.dir)
        self.addCleanup(self.fake.stop)
        self.config = kubeconfig(self.dir, self.fake.url, TOKEN, self.fake.cert)
        self.minute = 0

    def start(self, workflows, args=()):
        self.server = CelosServer(workflows, args=args)
        self.addCleanup(self.server.close)

    def step(self):
        """One step; simulated time moves on by 20 s each step, within the slot's hour."""
        self.minute = min(self.minute + 1, 170)
        now = "2015-09-12T20:%02d:%02dZ" % (self.minute // 3, self.minute % 3 * 20)
        reply = self.server.post("/scheduler?time=" + urllib.parse.quote(now), timeout=60)
        self.assertEqual(reply.status, 200, reply)
        return reply

    def slot(self, wf_id):
        reply = self.server.get("/slot-state?" + urllib.parse.urlencode({"id": wf_id, "time": SLOT}))
        if reply.status == 404:
            return {"status": "WAITING"}
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def record(self, wf_id):
        with open(os.path.join(self.server.db, "state", wf_id, "2015-09-12", "20:00:00.000Z")) as f:
            return json.load(f)

    def step_until(self, wf_id, statuses, timeout=60):
        seen = []

        def reached():
            self.step()
            slot = self.slot(wf_id)
            if not seen or seen[-1] != slot["status"]:
                seen.append(slot["status"])
            return slot if slot["status"] in statuses else None
        try:
            return poll(reached, "%s to become %s" % (wf_id, statuses), timeout=timeout,
                        interval=0.3)
        except AssertionError as e:
            raise AssertionError("%s (seen %s)\n%s" % (e, seen, self.server.stderr_text()))

    def job(self, name, namespace=NAMESPACE):
        return self.fake.objects()["jobs"].get("%s/%s" % (namespace, name))

    def requests(self, method, name):
        return [r for r in self.fake.request("GET", "/_control/requests", token=False)[2]
                if r["method"] == method and r["path"].endswith("/jobs/" + name)]


class HttpsStories(KubeStories):
    def test_a_job_runs_to_success_with_the_slot_environment_and_its_log(self):
        self.start({"ok.js": workflow(
            "ok", self.config, ["sh", "-c", 'echo "hello $CELOS_WORKFLOW_ID $GREETING ${year}"; '
                                            'echo "$CELOS_SLOT_TIME"'],
            {"GREETING": "hi there"}, resources={"cpu": "100m", "memory": "64Mi"})})
        self.step()  # READY
        self.step()  # submitted, recorded RUNNING, resumed
        slot = self.slot("ok")
        self.assertEqual(slot["status"], "RUNNING")
        name = "ok-20150912t200000-1"
        self.assertEqual(slot["externalID"], NAMESPACE + "/" + name)
        job = self.job(name)
        self.assertFalse(job["spec"]["suspend"])  # resumed after RUNNING was recorded
        self.assertEqual(job["spec"]["backoffLimit"], 0)
        self.assertEqual(job["metadata"]["labels"]["celos.workflow"], "ok")
        self.assertEqual(job["metadata"]["labels"]["celos.slot"], "20150912T200000Z")
        self.assertEqual(job["metadata"]["annotations"]["celos.slot"], SLOT_TIME)
        container = job["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(container["resources"]["limits"], {"cpu": "100m", "memory": "64Mi"})
        env = {e["name"]: e["value"] for e in container["env"]}
        self.assertEqual((env["CELOS_WORKFLOW_ID"], env["CELOS_SLOT_TIME"], env["GREETING"]),
                         ("ok", SLOT_TIME, "hi there"))
        self.assertIn("$GREETING 2015", container["command"][2])  # ${year} replaced
        self.assertEqual(len(self.requests("PATCH", name)), 1)
        self.step_until("ok", ["SUCCESS"])
        log = self.server.get("/api/v1/slot-log?id=ok&time=" + SLOT)
        self.assertEqual(log.status, 200, log)
        self.assertEqual(log.body, "hello ok hi there 2015\n%s\n" % SLOT_TIME)
        tail = self.server.get("/api/v1/slot-log?id=ok&time=%s&tail=25" % SLOT)
        self.assertEqual(tail.body, SLOT_TIME + "\n")
        ready = self.server.get("/health/ready").json
        self.assertEqual(ready["checks"]["kubernetes"], "ok")

    def test_a_failing_command_is_failure_with_the_reason(self):
        self.start({"bad.js": workflow("bad", self.config, ["sh", "-c", "echo no >&2; exit 3"])})
        self.step_until("bad", ["FAILURE"])
        message = self.record("bad")["message"]
        self.assertIn("Kubernetes Job team/bad-20150912t200000-1 failed: BackoffLimitExceeded",
                      message)

    def test_a_kill_deletes_the_job(self):
        self.start({"long.js": workflow("long", self.config, ["sleep", "300"])})
        self.step_until("long", ["RUNNING"])
        name = "long-20150912t200000-1"
        poll(lambda: self.fake.objects()["pods"], "the pod to start")
        reply = self.server.post("/kill?" + urllib.parse.urlencode({"id": "long", "time": SLOT}))
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(self.slot("long")["status"], "KILLED")
        self.assertIsNone(self.job(name))
        delete = self.requests("DELETE", name)
        self.assertEqual(delete[0]["query"].get("propagationPolicy"), "Background")
        poll(lambda: not self.fake.objects()["pods"], "the pod to be collected")

    def test_a_job_deleted_behind_celos_back_fails_within_two_steps(self):
        self.start({"gone.js": workflow("gone", self.config, ["sleep", "300"])})
        self.step_until("gone", ["RUNNING"])
        self.fake.control("delete-job?namespace=%s&name=gone-20150912t200000-1" % NAMESPACE)
        self.step()
        self.step()
        self.assertEqual(self.slot("gone")["status"], "FAILURE")
        self.assertIn("deleted behind celos's back", self.record("gone")["message"])

    def test_status_steps_answer_from_the_watch_and_see_a_deletion(self):
        """Once celos's watches of the namespace are live, a status step asks the API server
        nothing; a Job deleted behind celos's back still fails its slot within 2 steps."""
        self.fake.control("unschedulable?on=1")  # the Job stays active, its pod Pending
        self.start({"w.js": workflow("w", self.config, ["true"])})
        self.step_until("w", ["RUNNING"])

        def api_requests():
            return [r for r in self.fake.request("GET", "/_control/requests", token=False)[2]
                    if not r["query"].get("watch")]

        def quiet():
            self.fake.control("reset")
            self.step()
            return not api_requests() and "Unschedulable" in (self.slot("w").get("message")
                                                              or "")
        poll(quiet, "a status step without API requests", timeout=30, interval=0.3)
        for _ in range(3):
            self.assertTrue(quiet(), api_requests())
        self.fake.control("delete-job?namespace=%s&name=w-20150912t200000-1" % NAMESPACE)
        self.fake.control("reset")
        self.step()
        self.step()
        self.assertEqual(self.slot("w")["status"], "FAILURE")
        self.assertIn("deleted behind celos's back", self.record("w")["message"])
        lists = [r for r in api_requests() if r["method"] == "GET" and
                 r["path"].endswith(("/jobs", "/pods"))]
        self.assertEqual(lists, [])  # the watch told; a GET of the Job confirmed it

    def test_a_broken_watch_makes_the_steps_list_until_it_is_back(self):
        """The API server restarts (its --state keeps the Jobs): the watches' streams drop, and
        until they are open again a status step lists as it did without them."""
        self.fake.stop()
        self.fake.args += ["--state", os.path.join(self.dir, "fake-state.json")]
        self.fake.start()
        self.fake.control("unschedulable?on=1")
        self.start({"w.js": workflow("w", self.config, ["true"])})
        self.step_until("w", ["RUNNING"])

        def lists():
            return [r for r in self.fake.request("GET", "/_control/requests", token=False)[2]
                    if r["method"] == "GET" and r["path"].endswith(("/jobs", "/pods"))
                    and not r["query"].get("watch")]

        def step_lists():
            self.fake.control("reset")
            self.step()
            return lists()
        poll(lambda: not step_lists(), "a status step without lists", timeout=30, interval=0.3)
        self.fake.restart()
        self.fake.control("unschedulable?on=1")
        self.assertTrue(step_lists())  # the streams are gone: the step lists
        poll(lambda: not step_lists(), "the watches to be back", timeout=30, interval=0.3)
        self.assertEqual(self.slot("w")["status"], "RUNNING")

    def test_a_pod_no_node_takes_keeps_the_slot_running_with_the_reason(self):
        self.fake.control("unschedulable?on=1")
        self.start({"wait.js": workflow("wait", self.config, ["true"])})
        self.step_until("wait", ["RUNNING"])
        poll(lambda: (self.step(), "Unschedulable" in (self.slot("wait").get("message") or ""))[1],
             "the slot to say why its pod waits", timeout=30, interval=0.3)
        self.assertEqual(self.slot("wait")["status"], "RUNNING")
        self.fake.control("unschedulable?on=0")
        self.step_until("wait", ["SUCCESS"])

    def test_a_suspended_job_left_by_a_crash_is_adopted_not_created_again(self):
        # As if celos had created the Job and died before recording RUNNING.
        name = "adopt-20150912t200000-1"
        status, _, created = self.fake.request(
            "POST", "/apis/batch/v1/namespaces/%s/jobs" % NAMESPACE, {
                "apiVersion": "batch/v1", "kind": "Job", "metadata": {
                    "name": name, "labels": {"celos.workflow": "adopt",
                                             "celos.slot": "20150912T200000Z"},
                    "annotations": {"celos.workflow": "adopt", "celos.slot": SLOT_TIME}},
                "spec": {"suspend": True, "backoffLimit": 0, "template": {"spec": {
                    "restartPolicy": "Never", "containers": [{
                        "name": "main", "image": "debian:12",
                        "command": ["sh", "-c", "echo adopted"]}]}}}})
        self.assertEqual(status, 201, created)
        self.start({"adopt.js": workflow("adopt", self.config, ["sh", "-c", "echo new"])})
        slot = self.step_until("adopt", ["SUCCESS"])
        self.assertEqual(slot["externalID"], NAMESPACE + "/" + name)
        self.assertEqual(self.job(name)["metadata"]["uid"], created["metadata"]["uid"])
        self.assertEqual(sorted(self.fake.objects()["jobs"]), [NAMESPACE + "/" + name])
        self.assertEqual(self.server.get("/api/v1/slot-log?id=adopt&time=" + SLOT).body,
                         "adopted\n")
        self.assertIn("adopting the suspended Kubernetes Job", self.server.stderr_text())

    def test_refused_credentials_show_on_the_slot_and_in_health(self):
        wrong = kubeconfig(self.dir, self.fake.url, "wrong-token", self.fake.cert, name="wrong")
        self.start({"creds.js": workflow("creds", wrong, ["true"])})
        self.step_until("creds", ["FAILURE"])
        self.assertIn("401 Unauthorized", self.record("creds")["message"])
        ready = self.server.get("/health/ready")
        self.assertEqual(ready.status, 200, ready)
        self.assertIn("401 Unauthorized from " + self.fake.url, ready.json["checks"]["kubernetes"])

    def test_an_unreachable_api_server_leaves_the_slot_ready(self):
        down = kubeconfig(self.dir, "https://127.0.0.1:%d" % free_port(), TOKEN, self.fake.cert,
                          name="down")
        self.start({"down.js": workflow("down", down, ["true"])})
        for _ in range(3):
            reply = self.step()
        self.assertEqual(self.slot("down")["status"], "READY")
        self.assertIn("127.0.0.1", reply.body + self.server.stderr_text())


class PlainHttpStories(KubeStories):
    plain = True

    def test_plain_http_carries_the_token_and_runs_the_job(self):
        self.start({"plain.js": workflow("plain", self.config, ["sh", "-c", "echo plain"])})
        slot = self.step_until("plain", ["SUCCESS"])
        self.assertEqual(slot["externalID"], NAMESPACE + "/plain-20150912t200000-1")
        self.assertEqual(self.server.get("/api/v1/slot-log?id=plain&time=" + SLOT).body,
                         "plain\n")


if __name__ == "__main__":
    unittest.main()
