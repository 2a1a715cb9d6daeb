"""The scripted "cluster" behind the fake Kubernetes API server: a Job controller, a garbage
collector and a kubelet on one fake node, ticking in a thread under the store's lock.

A pod's container runs as a local process (its command and args, the environment of its
container spec, its working directory), its stdout and stderr are the pod's log, exit 0 makes
the pod Succeeded and anything else Failed. The process runs under a small shell wrapper that
writes its exit code to a file, so a restarted fake (--state) finds pods that ended meanwhile,
as a kubelet outlives its API server.
"""

import os
import signal
import subprocess
import threading
import time

from kube_store import ApiError, invalid, now, random_suffix

NODE = "fake-node"
_WRAPPER = ('log=$1; code=$2; shift 2; "$@" >"$log" 2>&1; echo $? >"$code.tmp"; '
            'mv "$code.tmp" "$code"')


def condition(kind, status, reason, message):
    t = now()
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastProbeTime": t, "lastTransitionTime": t}


def set_condition(status, kind, value, reason, message):
    """Adds or changes a condition; True when something changed."""
    conditions = status.setdefault("conditions", [])
    for c in conditions:
        if c["type"] == kind:
            if c["status"] == value and c.get("reason") == reason:
                return False
            c.update(condition(kind, value, reason, message))
            return True
    conditions.append(condition(kind, value, reason, message))
    return True


def finished(job):
    return any(c["type"] in ("Complete", "Failed") and c["status"] == "True"
               for c in job.get("status", {}).get("conditions", []))


def new_job(store, namespace, body):
    """The Job object that POST .../jobs stores: validated, defaulted, with its selector."""
    if body.get("kind", "Job") != "Job":
        raise ApiError(400, "the body's kind is %r, not Job" % body.get("kind"))
    meta = store.new_meta("jobs", namespace, body.get("metadata"))
    spec = dict(body.get("spec") or {})
    template = spec.get("template") or {}
    pod_spec = template.get("spec") or {}
    name = meta["name"]
    if pod_spec.get("restartPolicy") not in ("Never", "OnFailure"):
        raise invalid("jobs", name, "spec.template.spec.restartPolicy",
                      'Required value: valid values: "OnFailure", "Never"')
    if not pod_spec.get("containers"):
        raise invalid("jobs", name, "spec.template.spec.containers", "Required value")
    uid = meta["uid"]
    generated = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                 "controller-uid": uid, "job-name": name}
    template = dict(template)
    template["metadata"] = dict(template.get("metadata") or {})
    template["metadata"]["labels"] = dict(template["metadata"].get("labels") or {}, **generated)
    spec["template"] = template
    spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    for key, value in (("parallelism", 1), ("completions", 1), ("backoffLimit", 6),
                       ("completionMode", "NonIndexed"), ("suspend", False),
                       ("podReplacementPolicy", "TerminatingOrFailed")):
        spec.setdefault(key, value)
    if not meta.get("labels"):
        meta["labels"] = dict(template["metadata"]["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec,
            "status": {}}


def new_pod(job):
    meta, template = job["metadata"], job["spec"]["template"]
    prefix = meta["name"][:57] + "-"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": prefix + random_suffix(), "generateName": prefix, "namespace": meta["namespace"],
        "labels": dict(template["metadata"]["labels"]),
        "annotations": dict(template["metadata"].get("annotations") or {}),
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"],
                             "uid": meta["uid"], "controller": True,
                             "blockOwnerDeletion": True}],
        "creationTimestamp": now(), "uid": None, "generation": 1},
        "spec": dict(template.get("spec") or {}),
        "status": {"phase": "Pending", "qosClass": "BestEffort"}}


class Cluster:
    def __init__(self, store, workdir):
        self.store = store
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        self.children = {}  # pod key -> Popen (this process's own children, to reap them)
        self.stopping = threading.Event()
        self.idle = None  # (resourceVersion, unschedulable) after a pass that changed nothing
        self.timed = False  # the current pass saw something that changes with time
        self.quiet = {}  # job key -> (its resourceVersion, its pods'): reconciled to no change

    def run(self, period=0.05):
        while not self.stopping.wait(period):
            with self.store.lock:
                if self.idle != (self.store.rv, self.store.unschedulable):
                    self.tick()

    def tick(self):
        """One pass of the controllers. When it changed nothing and nothing waits on time (a
        running pod's exit, a Job's activeDeadlineSeconds), the next passes are skipped until
        an object or the unschedulable switch changes (controllers act on events)."""
        store, before = self.store, self.store.rv
        self.timed = False
        self.pass_once()
        quiet = store.rv == before and not self.timed
        self.idle = (store.rv, store.unschedulable) if quiet else None

    def pass_once(self):
        store = self.store
        by_owner = {}  # one pass over the pods, not one per Job (10,000 Jobs in the benchmarks)
        for key, pod in store.objects["pods"].items():
            for owner in pod["metadata"].get("ownerReferences", []):
                by_owner.setdefault(owner["uid"], {})[key] = pod
        for key, job in list(store.objects["jobs"].items()):
            if job["metadata"].get("deletionTimestamp"):
                self.finish_foreground(key, job)
            elif not finished(job) and not self.settled(job, by_owner):
                self.reconcile_changed(key, job, by_owner.get(job["metadata"]["uid"], {}))
        if len(self.quiet) > len(store.objects["jobs"]):  # forget Jobs that went
            self.quiet = {k: v for k, v in self.quiet.items() if k in store.objects["jobs"]}
        live = {j["metadata"]["uid"] for j in store.objects["jobs"].values()}
        for key, pod in list(store.objects["pods"].items()):
            owners = [o["uid"] for o in pod["metadata"].get("ownerReferences", [])]
            if owners and not any(uid in live for uid in owners):
                self.delete_pod(key)  # the garbage collector: its Job is gone
            else:
                self.kubelet(key, pod)

    def pods_of(self, job):
        uid = job["metadata"]["uid"]
        return {k: p for k, p in self.store.objects["pods"].items()
                if any(o["uid"] == uid for o in p["metadata"].get("ownerReferences", []))}

    @staticmethod
    def settled(job, by_owner):
        """A suspended Job already marked so, without pods: nothing to do (kept cheap, as
        thousands of them wait in the benchmarks)."""
        return (job["spec"].get("suspend") and job["metadata"]["uid"] not in by_owner
                and job["status"].get("active") == 0 and any(
                    c["type"] == "Suspended" and c["status"] == "True"
                    for c in job["status"].get("conditions", [])))

    def reconcile_changed(self, key, job, pods):
        """Reconciles a Job unless neither it nor its pods changed since a reconcile that
        changed nothing (the Job controller acts on changes, as a real one on its informers'
        events); a Job with activeDeadlineSeconds is looked at on every tick."""
        mark = (job["metadata"]["resourceVersion"],
                tuple(p["metadata"]["resourceVersion"] for p in pods.values()))
        if job["spec"].get("activeDeadlineSeconds") is not None:
            self.timed = True
        elif self.quiet.get(key) == mark:
            return
        self.quiet.pop(key, None)
        self.reconcile(job, pods)
        if job["metadata"]["resourceVersion"] == mark[0]:
            self.quiet[key] = mark

    def reconcile(self, job, pods):
        """The Job controller's step for one Job and its pods; stores it when its status
        changed."""
        status, spec = job["status"], job["spec"]
        before = repr(status)
        active = {k: p for k, p in pods.items() if p["status"]["phase"] in ("Pending", "Running")}
        if spec.get("suspend"):
            for key in active:
                self.delete_pod(key)
            set_condition(status, "Suspended", "True", "JobSuspended", "Job suspended")
            status["active"] = 0
            status.pop("startTime", None)
        else:
            self.run_job(job, pods, active)
        if repr(status) != before:
            self.store.bump(job)
            self.store.save()

    def run_job(self, job, pods, active):
        status, spec = job["status"], job["spec"]
        for c in status.get("conditions", []):
            if c["type"] == "Suspended" and c["status"] == "True":
                set_condition(status, "Suspended", "False", "JobResumed", "Job resumed")
        status.setdefault("startTime", now())
        succeeded = sum(p["status"]["phase"] == "Succeeded" for p in pods.values())
        failed = sum(p["status"]["phase"] == "Failed" for p in pods.values())
        status.update({"active": len(active), "succeeded": succeeded, "failed": failed,
                       "ready": sum(p["status"]["phase"] == "Running" for p in active.values())})
        for key in ("succeeded", "failed"):
            if not status[key]:
                del status[key]
        deadline = spec.get("activeDeadlineSeconds")
        started = time.mktime(time.strptime(status["startTime"], "%Y-%m-%dT%H:%M:%SZ"))
        if deadline is not None and time.mktime(time.gmtime()) - started >= deadline:
            return self.fail(job, active, "DeadlineExceeded",
                             "Job was active longer than specified deadline")
        if succeeded >= spec.get("completions", 1):
            status["completionTime"] = now()
            status["active"] = 0
            return set_condition(status, "Complete", "True", None, None)
        if failed > spec.get("backoffLimit", 6):
            return self.fail(job, active, "BackoffLimitExceeded",
                             "Job has reached the specified backoff limit")
        if not active:
            pod = new_pod(job)
            pod["metadata"].update(self.store.new_meta("pods", pod["metadata"]["namespace"],
                                                       pod["metadata"]))
            self.store.put("pods", pod)
            status["active"] = 1

    def fail(self, job, active, reason, message):
        for key in active:
            self.delete_pod(key)
        job["status"]["active"] = 0
        set_condition(job["status"], "Failed", "True", reason, message)

    def finish_foreground(self, key, job):
        """Foreground deletion: the Job goes once its pods are gone."""
        for pod_key in self.pods_of(job):
            self.delete_pod(pod_key)
        namespace, name = key.split("/", 1)
        self.store.remove("jobs", namespace, name)

    # The kubelet.

    def kubelet(self, key, pod):
        phase = pod["status"]["phase"]
        if phase == "Pending" and not pod["spec"].get("nodeName"):
            if self.store.unschedulable:
                if set_condition(pod["status"], "PodScheduled", "False", "Unschedulable",
                                 "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
                                 "nodes are available: 1 No preemption victims found for "
                                 "incoming pod."):
                    self.store.bump(pod)
                    self.store.save()
                return
            self.start(key, pod)
        elif phase == "Running":
            self.timed = True
            code = self.exit_code(key)
            if code is not None:
                self.terminated(pod, code)

    def start(self, key, pod):
        container = pod["spec"]["containers"][0]
        argv = list(container.get("command") or []) + list(container.get("args") or [])
        base = os.path.join(self.workdir, key.replace("/", "_"))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME":
               pod["metadata"]["name"], "KUBERNETES_SERVICE_HOST": "127.0.0.1"}
        for var in container.get("env") or []:
            env[var["name"]] = str(var.get("value", ""))
        cwd = container.get("workingDir") or self.workdir
        runtime = {"log": base + ".log", "exit": base + ".exit", "pid": None}
        if argv:
            process = subprocess.Popen(["/bin/sh", "-c", _WRAPPER, "kube-pod", runtime["log"],
                                        runtime["exit"]] + argv, env=env, cwd=cwd,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
            self.children[key] = process
            runtime["pid"] = process.pid
        else:  # the fake runs no images: a container without a command fails at once
            with open(runtime["log"], "w") as f:
                f.write("fake cluster: container %s has no command\n" % container.get("name"))
            with open(runtime["exit"], "w") as f:
                f.write("128\n")
        self.store.runtime[key] = runtime
        t = now()
        status = pod["status"]
        pod["spec"]["nodeName"] = NODE
        status.update({"phase": "Running", "hostIP": "127.0.0.1", "podIP": "127.0.0.1",
                       "startTime": t, "containerStatuses": [{
                           "name": container.get("name", "main"), "image": container.get("image", ""),
                           "imageID": "", "ready": True, "restartCount": 0, "started": True,
                           "state": {"running": {"startedAt": t}}}]})
        for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
            set_condition(status, kind, "True", None, None)
        self.store.bump(pod)
        self.store.save()

    def exit_code(self, key):
        """The container's exit code once it ended, else None."""
        runtime = self.store.runtime.get(key)
        if runtime is None:
            return 137
        process = self.children.get(key)
        if process is not None:
            process.poll()
        try:
            with open(runtime["exit"]) as f:
                return int(f.read().strip() or 1)
        except FileNotFoundError:
            pass
        if process is not None:
            return None if process.returncode is None else 137
        try:
            os.kill(runtime["pid"], 0)  # a pod started before a restart of the fake
            return None
        except (OSError, TypeError):
            return 137

    def terminated(self, pod, code):
        status = pod["status"]
        status["phase"] = "Succeeded" if code == 0 else "Failed"
        container = status["containerStatuses"][0]
        container.update({"ready": False, "started": False, "state": {"terminated": {
            "exitCode": code, "reason": "Completed" if code == 0 else "Error",
            "startedAt": container["state"].get("running", {}).get("startedAt", now()),
            "finishedAt": now()}}})
        for kind in ("ContainersReady", "Ready"):
            set_condition(status, kind, "False", "PodCompleted", None)
        self.store.bump(pod)
        self.store.save()

    def delete_pod(self, key):
        """Kills the pod's process group and removes the pod."""
        runtime = self.store.runtime.pop(key, None)
        if runtime and runtime.get("pid"):
            try:
                os.killpg(runtime["pid"], signal.SIGKILL)
            except OSError:
                pass
        process = self.children.pop(key, None)
        if process is not None:
            process.wait()
        namespace, name = key.split("/", 1)
        return self.store.remove("pods", namespace, name)

    def log(self, namespace, name, tail_lines=None, limit_bytes=None):
        pod = self.store.get("pods", namespace, name)
        runtime = self.store.runtime.get("%s/%s" % (namespace, name))
        if runtime is None or not os.path.exists(runtime["log"]):
            container = pod["spec"]["containers"][0].get("name", "main")
            raise ApiError(400, 'container "%s" in pod "%s" is waiting to start: '
                           "ContainerCreating" % (container, name))
        with open(runtime["log"], "rb") as f:
            data = f.read()
        if tail_lines is not None:
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[len(lines) - tail_lines:] if tail_lines > 0 else [])
        if limit_bytes is not None:
            data = data[:limit_bytes]
        return data

    def stop(self):
        self.stopping.set()
