"""The fake Kubernetes API server checked against real Kubernetes clients: kubectl and the
official Python client (python3-kubernetes, which deserialises every answer into its models),
then its error answers and the scripted cluster's behaviours, over raw HTTPS."""

import http.client
import json
import os
import subprocess
import unittest

from kube_util import (KUBECTL, FakeKube, Kubectl, condition, job_body, temporary_directory,
                       wait_for)

try:
    import kubernetes
    from kubernetes.client.rest import ApiException
except ImportError:  # python3-kubernetes (scripts/setup.sh installs it)
    kubernetes = None


class FakeTest(unittest.TestCase):
    fake_args = ()

    def setUp(self):
        self.fake = FakeKube(temporary_directory(self), *self.fake_args)
        self.addCleanup(self.fake.stop)

    def job(self, name, namespace="default"):
        return self.fake.request("GET", "/apis/batch/v1/namespaces/%s/jobs/%s"
                                 % (namespace, name))[2]

    def create(self, body, namespace="default"):
        status, _, answer = self.fake.request(
            "POST", "/apis/batch/v1/namespaces/%s/jobs" % namespace, body)
        self.assertEqual(status, 201, answer)
        return answer

    def settled(self, name, namespace="default"):
        """The Job once the cluster has marked it suspended: that mark is a write of the
        cluster's own (a new resourceVersion), which a test reading versions must wait out."""
        def marked():
            job = self.job(name, namespace)
            return job if condition(job, "Suspended") else None
        return wait_for("the Job %s marked suspended" % name, marked, timeout=30)

    def pods(self, selector, namespace="default"):
        return self.fake.request("GET", "/api/v1/namespaces/%s/pods?labelSelector=%s"
                                 % (namespace, selector))[2]["items"]


@unittest.skipUnless(os.path.exists(KUBECTL), "kubectl is not installed")
class KubectlTest(FakeTest):
    def setUp(self):
        super().setUp()
        self.kubectl = Kubectl(self.fake.kubeconfig("team"))

    def test_create_get_select_resume_logs_delete(self):
        body = job_body("hello", ["sh", "-c", "echo one; echo $GREETING world"],
                        labels={"app": "demo", "tier": "batch"})
        path = os.path.join(self.fake.directory, "job.json")
        with open(path, "w") as f:
            json.dump(body, f)
        self.kubectl.run("create", "--validate=false", "-f", path)
        job = self.kubectl.json("get", "job", "hello")
        self.assertTrue(job["spec"]["suspend"])
        self.assertEqual(condition(job, "Suspended"), ("True", "JobSuspended"))
        self.assertEqual(job["spec"]["selector"]["matchLabels"],
                         {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"]})
        self.assertEqual(self.kubectl.json("get", "pods")["items"], [])
        for selector, found in (("app=demo", True), ("app==demo,tier!=web", True),
                                ("app in (demo,other)", True), ("tier notin (batch)", False),
                                ("app", True), ("!app", False), ("app=other", False)):
            names = self.kubectl.run("get", "jobs", "-l", selector, "-o", "name").stdout.split()
            self.assertEqual(names, ["job.batch/hello"] if found else [], selector)
        duplicate = self.kubectl.run("create", "--validate=false", "-f", path, check=False)
        self.assertNotEqual(duplicate.returncode, 0)
        self.assertIn("already exists", duplicate.stderr)

        self.kubectl.run("patch", "job", "hello", "-p", '{"spec":{"suspend":false}}')
        done = wait_for("Complete", lambda: condition(
            self.kubectl.json("get", "job", "hello"), "Complete"))
        self.assertEqual(done[0], "True")
        pod = self.kubectl.json("get", "pods", "-l", "job-name=hello")["items"][0]
        self.assertEqual(pod["status"]["phase"], "Succeeded")
        self.assertEqual(pod["metadata"]["ownerReferences"][0]["uid"], job["metadata"]["uid"])
        self.assertEqual(self.kubectl.run("logs", "job/hello").stdout, "one\nhello world\n")
        self.assertEqual(self.kubectl.run("logs", pod["metadata"]["name"], "--tail=1").stdout,
                         "hello world\n")
        self.kubectl.run("delete", "job", "hello", "--cascade=background")
        wait_for("the pod collected", lambda: not self.kubectl.json("get", "pods")["items"])
        self.assertIn("NotFound", self.kubectl.run("get", "job", "hello", check=False).stderr)

    def test_merge_patch_and_json_patch(self):
        self.create(job_body("patched", ["true"]), namespace="team")
        self.kubectl.run("patch", "job", "patched", "--type", "merge", "-p",
                         '{"metadata":{"labels":{"stage":"two"}}}')
        self.kubectl.run("patch", "job", "patched", "--type", "json", "-p",
                         '[{"op":"replace","path":"/spec/suspend","value":false}]')
        job = self.kubectl.json("get", "job", "patched")
        self.assertEqual(job["metadata"]["labels"]["stage"], "two")
        self.assertFalse(job["spec"]["suspend"])
        self.assertEqual(job["metadata"]["generation"], 2)

    def test_wait_and_foreground_delete_watch(self):
        self.create(job_body("watched", ["sleep", "1"], suspend=False), namespace="team")
        self.kubectl.run("wait", "--for=condition=complete", "job/watched", "--timeout=60s")
        self.kubectl.run("delete", "job", "watched", "--cascade=foreground", "--timeout=60s")
        self.assertEqual(self.kubectl.json("get", "jobs,pods")["items"], [])


    def test_get_watch_sees_added_modified_deleted(self):
        """kubectl lists, then watches from the list's resourceVersion on one open stream."""
        self.create(job_body("before", ["true"]), namespace="team")
        watcher = subprocess.Popen([KUBECTL, "get", "jobs", "--watch", "--output-watch-events",
                                    "-o", "json"], env=self.kubectl.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(watcher.stdout.close)
        self.addCleanup(watcher.wait)
        self.addCleanup(watcher.kill)
        events = JsonStream(watcher.stdout)
        self.assertEqual(events.next()["type"], "ADDED")  # from the list
        wait_for("kubectl's watch", lambda: [r for r in self.fake.request(
            "GET", "/_control/requests", token=False)[2] if r["query"].get("watch")])
        self.create(job_body("during", ["sleep", "60"]), namespace="team")
        self.kubectl.run("patch", "job", "during", "-p", '{"spec":{"suspend":false}}')
        self.fake.control("delete-job?namespace=team&name=during")
        seen = []
        while not seen or seen[-1] != "DELETED":
            event = events.next()
            self.assertEqual(event["object"]["metadata"]["name"], "during")
            seen.append(event["type"])
        self.assertEqual((seen[0], set(seen[1:-1])), ("ADDED", {"MODIFIED"}))
        self.assertIsNone(watcher.poll())  # the stream is still open


class JsonStream:
    """The JSON documents kubectl prints one after another (indented, not one a line)."""

    def __init__(self, stream):
        self.stream, self.text = stream, ""

    def next(self):
        while True:
            stripped = self.text.lstrip()
            try:
                value, end = json.JSONDecoder().raw_decode(stripped)
                self.text = stripped[end:]
                return value
            except ValueError:
                line = self.stream.readline()
                if not line:
                    raise AssertionError("kubectl's watch ended: " + self.text[-200:])
                self.text += line


@unittest.skipUnless(kubernetes, "python3-kubernetes is not installed")
class PythonClientTest(FakeTest):
    def setUp(self):
        super().setUp()
        config = kubernetes.client.Configuration()
        config.host = self.fake.url
        config.api_key = {"authorization": "Bearer " + self.fake.token}
        config.ssl_ca_cert = self.fake.cert
        client = kubernetes.client.ApiClient(config)
        self.addCleanup(client.close)
        self.batch = kubernetes.client.BatchV1Api(client)
        self.core = kubernetes.client.CoreV1Api(client)

    def model(self, name, command, **spec):
        k = kubernetes.client
        container = k.V1Container(name="main", image="debian:12", command=command,
                                  env=[k.V1EnvVar(name="GREETING", value="hi")])
        return k.V1Job(api_version="batch/v1", kind="Job", metadata=k.V1ObjectMeta(
            name=name, labels={"celos.workflow": "wordcount"}), spec=k.V1JobSpec(
            suspend=True, backoff_limit=0, template=k.V1PodTemplateSpec(spec=k.V1PodSpec(
                restart_policy="Never", containers=[container])), **spec))

    def finished(self, name, kind):
        job = self.batch.read_namespaced_job(name, "celos")
        return next((c for c in job.status.conditions or [] if c.type == kind), None)

    def test_lifecycle(self):
        created = self.batch.create_namespaced_job("celos", self.model(
            "wc-1", ["sh", "-c", "echo $GREETING; echo done"]))
        self.assertTrue(created.spec.suspend)
        self.assertTrue(created.metadata.uid)
        self.assertIsNotNone(created.metadata.creation_timestamp)
        listed = self.batch.list_namespaced_job("celos", label_selector="celos.workflow=wordcount")
        self.assertEqual([j.metadata.name for j in listed.items], ["wc-1"])
        self.assertGreaterEqual(int(listed.metadata.resource_version),
                                int(created.metadata.resource_version))
        self.assertEqual(self.batch.list_namespaced_job(
            "celos", label_selector="celos.workflow notin (wordcount)").items, [])
        patched = self.batch.patch_namespaced_job("wc-1", "celos", {"spec": {"suspend": False}})
        self.assertFalse(patched.spec.suspend)
        self.assertGreater(int(patched.metadata.resource_version),
                           int(created.metadata.resource_version))
        wait_for("Complete", lambda: self.finished("wc-1", "Complete"))
        job = self.batch.read_namespaced_job("wc-1", "celos")
        self.assertEqual(job.status.succeeded, 1)
        self.assertIsNotNone(job.status.completion_time)
        pods = self.core.list_namespaced_pod("celos", label_selector="job-name=wc-1").items
        self.assertEqual(pods[0].metadata.labels["batch.kubernetes.io/job-name"], "wc-1")
        log = self.core.read_namespaced_pod_log(pods[0].metadata.name, "celos", tail_lines=1)
        self.assertEqual(log, "done\n")
        status = self.batch.delete_namespaced_job("wc-1", "celos",
                                                  propagation_policy="Background")
        self.assertEqual(status.status, "Success")
        with self.assertRaises(ApiException) as raised:
            self.batch.read_namespaced_job("wc-1", "celos")
        self.assertEqual(raised.exception.status, 404)
        wait_for("the pod collected",
                 lambda: not self.core.list_namespaced_pod("celos").items)

    def test_watch(self):
        created = self.batch.create_namespaced_job("celos", self.model("seen", ["true"]))
        self.batch.patch_namespaced_job("seen", "celos", {"spec": {"suspend": False}})
        seen = []
        watch = kubernetes.watch.Watch()
        for event in watch.stream(self.batch.list_namespaced_job, "celos",
                                  resource_version=created.metadata.resource_version,
                                  timeout_seconds=5):
            seen.append((event["type"], event["object"]))
            if any(c.type == "Complete" for c in event["object"].status.conditions or []):
                watch.stop()
        self.assertEqual({t for t, _ in seen}, {"MODIFIED"})
        self.assertFalse(seen[-1][1].spec.suspend)
        versions = [int(o.metadata.resource_version) for _, o in seen]
        self.assertEqual(versions, sorted(set(versions)))

    def test_failure_and_deadline(self):
        self.batch.create_namespaced_job("celos", self.model("fails", ["sh", "-c", "exit 3"]))
        self.batch.create_namespaced_job("celos", self.model(
            "slow", ["sleep", "60"], active_deadline_seconds=1))
        for name in ("fails", "slow"):
            self.batch.patch_namespaced_job(name, "celos", {"spec": {"suspend": False}})
        failed = wait_for("Failed", lambda: self.finished("fails", "Failed"))
        self.assertEqual(failed.reason, "BackoffLimitExceeded")
        self.assertEqual(self.batch.read_namespaced_job("fails", "celos").status.failed, 1)
        pod = self.core.list_namespaced_pod("celos", label_selector="job-name=fails").items[0]
        self.assertEqual(pod.status.phase, "Failed")
        self.assertEqual(pod.status.container_statuses[0].state.terminated.exit_code, 3)
        late = wait_for("DeadlineExceeded", lambda: self.finished("slow", "Failed"))
        self.assertEqual(late.reason, "DeadlineExceeded")
        wait_for("the slow pod killed", lambda: not self.core.list_namespaced_pod(
            "celos", label_selector="job-name=slow").items)

    def test_orphan_and_foreground(self):
        for name in ("orphaned", "foreground"):
            self.batch.create_namespaced_job("celos", self.model(name, ["sleep", "60"]))
            self.batch.patch_namespaced_job(name, "celos", {"spec": {"suspend": False}})
            wait_for("a pod", lambda: self.core.list_namespaced_pod(
                "celos", label_selector="job-name=" + name).items)
        self.batch.delete_namespaced_job("orphaned", "celos")  # batch/v1's default: Orphan
        pod = self.core.list_namespaced_pod("celos", label_selector="job-name=orphaned").items[0]
        self.assertIsNone(pod.metadata.owner_references)
        self.core.delete_namespaced_pod(pod.metadata.name, "celos")
        self.batch.delete_namespaced_job("foreground", "celos", propagation_policy="Foreground")
        wait_for("the Job gone", lambda: not self.batch.list_namespaced_job("celos").items)
        self.assertEqual(self.core.list_namespaced_pod("celos").items, [])


class ErrorAnswersTest(FakeTest):
    fake_args = ("--forbidden-namespace", "secret")

    def assertStatus(self, answer, code, reason):
        status, headers, body = answer
        self.assertEqual(status, code, body)
        self.assertEqual((body["kind"], body["code"], body["reason"]), ("Status", code, reason))
        return headers, body

    def test_authentication_and_authorization(self):
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        self.assertStatus(self.fake.request("GET", jobs, token=False), 401, "Unauthorized")
        self.assertStatus(self.fake.request("GET", "/api", token=False), 401, "Unauthorized")
        self.assertStatus(self.fake.request("GET", "/apis/batch/v1/namespaces/secret/jobs"),
                          403, "Forbidden")
        self.assertEqual(self.fake.request("GET", jobs)[0], 200)

    def test_not_found_already_exists_conflict_invalid(self):
        _, body = self.assertStatus(self.fake.request(
            "GET", "/apis/batch/v1/namespaces/default/jobs/none"), 404, "NotFound")
        self.assertEqual(body["message"], 'jobs.batch "none" not found')
        self.create(job_body("once", ["true"]))
        self.assertStatus(self.fake.request("POST", "/apis/batch/v1/namespaces/default/jobs",
                                            job_body("once", ["true"])), 409, "AlreadyExists")
        path = "/apis/batch/v1/namespaces/default/jobs/once"
        job = self.settled("once")
        stale = dict(job, metadata=dict(job["metadata"], labels={"x": "y"}))
        self.assertEqual(self.fake.request("PUT", path, stale)[0], 200)
        self.assertStatus(self.fake.request("PUT", path, stale), 409, "Conflict")
        bad = job_body("bad", ["true"])
        del bad["spec"]["template"]["spec"]["restartPolicy"]
        self.assertStatus(self.fake.request("POST", "/apis/batch/v1/namespaces/default/jobs",
                                            bad), 422, "Invalid")
        self.assertStatus(self.fake.request("PATCH", path, {}, content_type="text/plain"),
                          415, "UnsupportedMediaType")

    def test_resource_versions_and_expiry(self):
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        versions = [int(self.fake.request("GET", jobs)[2]["metadata"]["resourceVersion"])]
        for name in ("a", "b", "c"):
            self.create(job_body(name, ["true"]))
            versions.append(int(self.fake.request("GET", jobs)[2]["metadata"]["resourceVersion"]))
        self.assertEqual(versions, sorted(set(versions)))
        first = self.fake.request("GET", jobs + "?limit=2")[2]
        self.assertEqual(len(first["items"]), 2)
        token = first["metadata"]["continue"]
        rest = self.fake.request("GET", jobs + "?limit=2&continue=" + token)[2]
        self.assertEqual([j["metadata"]["name"] for j in rest["items"]], ["c"])
        old = versions[1]
        self.assertEqual(self.fake.request(
            "GET", jobs + "?resourceVersion=%d&resourceVersionMatch=Exact" % old)[0], 200)
        self.assertStatus(self.fake.request("GET", jobs + "?resourceVersion=999999"), 504,
                          "Timeout")
        self.create(job_body("d", ["true"]))  # a newer revision, then compaction up to it
        self.fake.control("compact")
        self.assertStatus(self.fake.request(
            "GET", jobs + "?resourceVersion=%d&resourceVersionMatch=Exact" % old), 410, "Expired")
        self.assertStatus(self.fake.request("GET", jobs + "?limit=2&continue=" + token), 410,
                          "Expired")
        watch = self.fake.request("GET", jobs + "?watch=1&resourceVersion=%d" % old)[2]
        self.assertEqual((watch["type"], watch["object"]["code"]), ("ERROR", 410))
        self.assertStatus(self.fake.request("GET", jobs + "?labelSelector=a%20in%20x"), 400,
                          "BadRequest")

    def test_throttling_and_server_errors(self):
        self.fake.control("fail?code=429&count=2")
        self.fake.control("fail?code=503&count=1")
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        for _ in range(2):
            headers, body = self.assertStatus(self.fake.request("GET", jobs), 429,
                                              "TooManyRequests")
            self.assertEqual(headers["Retry-After"], "1")
            self.assertEqual(body["details"]["retryAfterSeconds"], 1)
        self.assertStatus(self.fake.request("GET", jobs), 503, "ServiceUnavailable")
        self.assertEqual(self.fake.request("GET", jobs)[0], 200)


class WatchTest(FakeTest):
    """The watch stream over raw HTTPS: events as they happen on one open answer."""
    fake_args = ("--bookmark-seconds", "0.2")

    def watch(self, query):
        connection = http.client.HTTPSConnection("127.0.0.1", self.fake.port, timeout=30,
                                                 context=self.fake.context)
        self.addCleanup(connection.close)
        connection.request("GET", "/apis/batch/v1/namespaces/default/jobs?watch=1&" + query,
                           headers={"Authorization": "Bearer " + self.fake.token})
        answer = connection.getresponse()
        self.addCleanup(answer.close)
        self.assertEqual((answer.status, answer.getheader("Transfer-Encoding")),
                         (200, "chunked"))
        return answer

    def test_selector_bookmarks_timeout(self):
        self.create(job_body("w", ["true"], labels={"app": "x"}))
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        self.settled("w")  # the mark is a MODIFIED event of the cluster's own: watch from after it
        rv = self.fake.request("GET", jobs)[2]["metadata"]["resourceVersion"]
        stream = self.watch("resourceVersion=%s&allowWatchBookmarks=true&labelSelector=app%%3Dx"
                            "&timeoutSeconds=3" % rv)

        def label(value):
            self.fake.request("PATCH", jobs + "/w", {"metadata": {"labels": {"app": value}}},
                              content_type="application/merge-patch+json")

        def event(skip_bookmarks=True):
            while True:
                line = stream.readline()
                self.assertTrue(line, "the stream ended early")
                got = json.loads(line)
                if got["type"] != "BOOKMARK" or not skip_bookmarks:
                    return got
        label("y")  # leaves the selection: DELETED, as a watch cache sends it
        left = event()
        self.assertEqual((left["type"], left["object"]["metadata"]["labels"]["app"]),
                         ("DELETED", "y"))
        label("x")
        self.assertEqual(event()["type"], "ADDED")
        last = int(self.fake.request("GET", jobs + "/w")[2]["metadata"]["resourceVersion"])
        mark = event(skip_bookmarks=False)
        while mark["type"] != "BOOKMARK":
            mark = event(skip_bookmarks=False)
        self.assertEqual(set(mark["object"]), {"kind", "apiVersion", "metadata"})
        self.assertGreaterEqual(int(mark["object"]["metadata"]["resourceVersion"]), last)
        while stream.readline():  # timeoutSeconds ends the answer
            pass

    def test_too_old_a_version_is_one_error_event_then_the_end(self):
        self.create(job_body("a", ["true"]))
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        old = int(self.fake.request("GET", jobs)[2]["metadata"]["resourceVersion"])
        self.create(job_body("b", ["true"]))
        self.fake.control("compact")
        stream = self.watch("resourceVersion=%d&allowWatchBookmarks=true" % old)
        error = json.loads(stream.readline())
        self.assertEqual((error["type"], error["object"]["code"]), ("ERROR", 410))
        self.assertEqual(stream.read(), b"")  # no bookmark after an ERROR: the end

    def test_current_objects_first_then_changes(self):
        self.create(job_body("old", ["true"]))
        stream = self.watch("")
        self.assertEqual(json.loads(stream.readline())["type"], "ADDED")
        self.create(job_body("new", ["true"]))
        new = json.loads(stream.readline())
        while new["object"]["metadata"]["name"] == "old":  # the cluster marks it suspended
            self.assertEqual(new["type"], "MODIFIED")
            new = json.loads(stream.readline())
        self.assertEqual((new["type"], new["object"]["metadata"]["name"]), ("ADDED", "new"))


class ClusterTest(FakeTest):
    def test_unschedulable_pod_stays_pending(self):
        self.fake.control("unschedulable?on=1")
        self.create(job_body("waits", ["true"], suspend=False))
        pod = wait_for("the Unschedulable condition", lambda: next(
            (p for p in self.pods("job-name=waits")
             if any(c["reason"] == "Unschedulable" for c in p["status"].get("conditions", []))),
            None))
        self.assertEqual(pod["status"]["phase"], "Pending")
        scheduled = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        self.assertEqual(scheduled[0]["status"], "False")
        self.assertEqual(self.job("waits")["status"]["active"], 1)
        self.fake.control("unschedulable?on=0")
        wait_for("Complete", lambda: condition(self.job("waits"), "Complete"))

    def test_job_deleted_behind_the_clients_back(self):
        self.create(job_body("vanishes", ["sleep", "60"], suspend=False))
        wait_for("a running pod", lambda: [p for p in self.pods("job-name=vanishes")
                                           if p["status"]["phase"] == "Running"])
        self.fake.control("delete-job?namespace=default&name=vanishes")
        self.assertEqual(self.job("vanishes")["code"], 404)
        self.assertEqual(self.pods("job-name=vanishes"), [])

    def test_restart_keeps_jobs_and_finds_ended_pods(self):
        state = os.path.join(self.fake.directory, "state.json")
        self.fake.stop()
        self.fake.args += ["--state", state]
        self.fake.start()
        job = self.create(job_body("survives", ["sh", "-c", "sleep 1; echo after"],
                                   suspend=False))
        wait_for("a running pod", lambda: [p for p in self.pods("job-name=survives")
                                           if p["status"]["phase"] == "Running"])
        before = int(self.job("survives")["metadata"]["resourceVersion"])
        self.fake.restart()
        again = self.job("survives")
        self.assertEqual(again["metadata"]["uid"], job["metadata"]["uid"])
        wait_for("Complete after the restart", lambda: condition(self.job("survives"),
                                                                 "Complete"))
        self.assertGreater(int(self.job("survives")["metadata"]["resourceVersion"]), before)
        pod = self.pods("job-name=survives")[0]["metadata"]["name"]
        self.assertEqual(self.fake.request("GET", "/api/v1/namespaces/default/pods/%s/log"
                                           % pod)[2], "after\n")


if __name__ == "__main__":
    unittest.main()
