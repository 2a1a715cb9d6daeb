#!/usr/bin/env python3
"""A fake Kubernetes API server speaking the part of the REST API that batch work needs,
written from the Kubernetes API reference: batch/v1 Jobs and core/v1 Pods in namespaces.

    fake_kube_apiserver.py --port 0 [--token T] [--forbidden-namespace NS] [--state FILE]
                           [--latency-ms N] [--bookmark-seconds S] [--tls-cert PEM --tls-key PEM]

- Jobs: create (POST), get, list, replace (PUT, 409 Conflict on a stale
  metadata.resourceVersion), patch (application/merge-patch+json,
  application/strategic-merge-patch+json applied as a merge patch, application/json-patch+json),
  delete with propagationPolicy Background (the Job goes, its pods are collected), Foreground
  (the Job stays with deletionTimestamp until its pods are gone) or Orphan (the default for
  batch/v1 Jobs: the pods stay, without ownerReferences); GET .../jobs/NAME/status.
- Pods: get, list, delete, and their log (GET .../pods/NAME/log?tailLines=N&limitBytes=N).
- Lists: labelSelector (=, ==, !=, in, notin, exists, !key), fieldSelector (metadata.name,
  metadata.namespace, status.phase), limit/continue, resourceVersion (+ resourceVersionMatch):
  one counter gives every change and every list its resourceVersion; a list at an Exact
  resourceVersion or a continue token older than the last compaction answers 410 Expired; a
  resourceVersion newer than the server's answers 504 (real servers wait up to 3 s first).
  The fake keeps no history: a list at an older resourceVersion shows the current objects.
- Errors are meta/v1 Status objects: 400, 401 (no or wrong bearer token with --token), 403
  (--forbidden-namespace), 404, 409 AlreadyExists / Conflict, 410, 415, 422 Invalid, 429 with
  Retry-After, 5xx. Discovery (/version, /api, /apis, /api/v1, /apis/batch/v1) in the legacy
  form; no OpenAPI (kubectl wants --validate=false), no Table answers (kubectl prints only
  NAME and AGE without -o).
- Watch (?watch=true, kube_watch.py): a stream of JSON lines kept open until timeoutSeconds:
  the changes after resourceVersion (or the current objects as ADDED from "" / "0") as they
  happen, objects entering or leaving a selector as ADDED / DELETED, BOOKMARK events with
  allowWatchBookmarks (every --bookmark-seconds); a resourceVersion older than the kept history
  (compaction, a restart, 10,000 changes) answers an ERROR event with a 410 Expired Status.
- A scripted cluster (kube_cluster.py) runs each pod's command as a local process: exit 0 ->
  pod Succeeded -> Job Complete; non-zero -> pod Failed, a new pod until backoffLimit, then Job
  Failed (BackoffLimitExceeded); activeDeadlineSeconds -> Failed (DeadlineExceeded);
  spec.suspend -> no pod (condition Suspended), resuming starts one (JobResumed).

With --tls-cert/--tls-key it serves HTTPS (kubectl sends a bearer token over HTTPS only).
With --state, objects are kept in FILE (pod logs and exit codes in FILE.pods/): a restarted
fake still knows its Jobs and the unschedulable switch, and finds pods that ended while it was
down. Prints the bound port on the first line of stdout. Control endpoints (not part of Kubernetes):
    POST /_control/unschedulable?on=1|0       new pods stay Pending (PodScheduled False,
                                              reason Unschedulable) until turned off
    POST /_control/delete-job?namespace=NS&name=N   a Job and its pods vanish behind the
                                              client's back
    POST /_control/fail?code=429|500|503&count=N    the next N API requests answer this error
                                              (429 with Retry-After: 1)
    POST /_control/compact                    older resourceVersions expire (410 from then on)
    GET  /_control/objects                    {"jobs": {...}, "pods": {...}, "rv": N}
    GET  /_control/requests, POST /_control/reset, POST /_control/latency?ms=N,
    GET  /_control/stats                      the request ledger (test/fake_ledger.py)
"""

import argparse
import base64
import json
import os
import shutil
import signal
import ssl
import sys
import tempfile
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "hadoop")]
import fake_http  # noqa: E402 (test/hadoop/fake_http.py)
from fake_ledger import LedgerRequests  # noqa: E402 (test/fake_ledger.py)
import kube_discovery  # noqa: E402
from kube_cluster import Cluster, new_job  # noqa: E402
from kube_selectors import (SelectorError, fields_match, labels_match,  # noqa: E402
                            parse_fields, parse_labels)
from kube_store import (KINDS, ApiError, Store, conflict, invalid, json_patch,  # noqa: E402
                        merge_patch, now)
from kube_watch import WatchStream, open_watch  # noqa: E402

TRUE = {"1", "t", "T", "true", "True", "TRUE"}  # Go's strconv.ParseBool (Python sends True)
PATCH_TYPES = {"application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json"}
fake_http.REASONS.update({202: "Accepted", 410: "Gone", 415: "Unsupported Media Type",
                          422: "Unprocessable Entity", 429: "Too Many Requests",
                          504: "Gateway Timeout"})


def parse_path(path):
    """(kind, namespace, name, subresource) of an API path, or None."""
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
    if parts[:2] == ["api", "v1"]:
        rest, group = parts[2:], ""
    elif parts[:3] == ["apis", "batch", "v1"]:
        rest, group = parts[3:], "batch"
    else:
        return None
    namespace = None
    if len(rest) >= 2 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
        if not rest:
            return ("namespaces", None, namespace, None)
    if not rest or rest[0] not in KINDS or KINDS[rest[0]][2] != group or len(rest) > 3:
        if rest == ["namespaces"]:
            return ("namespaces", None, None, None)
        return None
    return (rest[0], namespace, rest[1] if len(rest) > 1 else None,
            rest[2] if len(rest) > 2 else None)


def namespace_object(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": name, "uid": "00000000-0000-0000-0000-%012d" % (hash(name) % 10 ** 12),
        "resourceVersion": "1", "creationTimestamp": "2024-01-01T00:00:00Z",
        "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


class ListBody:
    """A list's answer: its head, the items' cached encodings and its tail, joined into one
    bytes object by send() after the store's lock is released."""

    def __init__(self, head, items, tail):
        self.head, self.items, self.tail = head, items, tail

    def join(self):
        return self.head + b", ".join(self.items) + self.tail


class Handler(LedgerRequests, fake_http.Handler):
    server_version = "kube-apiserver-fake"
    state = None
    cluster = None
    token = None
    forbidden_namespace = None

    def send(self, status, body, headers=(), content_type="application/json"):
        if isinstance(body, WatchStream):  # a chunked stream of events (kube_watch.py)
            self.send_response(status)
            for name, value in (("Content-Type", content_type), ("Cache-Control",
                                "no-cache, private"), ("Transfer-Encoding", "chunked")):
                self.send_header(name, value)
            self.end_headers()
            self.stream = body
            return
        if isinstance(body, ListBody):
            body = body.join()
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = [("Cache-Control", "no-cache, private")] + list(headers)
        return self.send_answer(status, data, content_type, headers)

    def respond(self):
        if not self.counted:
            return self.control(self.url.path, self.query)
        self.state.record({"method": self.command, "path": self.url.path, "query": self.query,
                           "content_type": self.headers.get("Content-Type"),
                           "body": self.body.decode("utf-8", "replace")})
        try:
            self.check_access()
            with self.state.lock:
                status, body, *rest = self.serve(self.url.path)
            self.send(status, body, *rest)
        except ApiError as e:
            self.send(e.code, e.status(), e.headers)

    def check_access(self):
        with self.state.lock:
            if self.state.fail_next:
                code, count = self.state.fail_next[0]
                self.state.fail_next[0][1] -= 1
                if count <= 1:
                    self.state.fail_next.pop(0)
                if code == 429:
                    raise ApiError(429, "Too many requests, please try again later.",
                                   details={"retryAfterSeconds": 1}, headers=[("Retry-After", "1")])
                raise ApiError(code, "the fake was told to fail this request (%d)" % code)
        if self.token and self.headers.get("Authorization", "") != "Bearer " + self.token:
            raise ApiError(401, "Unauthorized")

    def serve(self, path):
        document = kube_discovery.document(path, self.headers.get("Host", "127.0.0.1"))
        if document is not None and self.command == "GET":
            return 200, document
        target = parse_path(path)
        if target is None:
            raise ApiError(404, "the server could not find the requested resource",
                           details={})
        kind, namespace, name, sub = target
        if namespace and namespace == self.forbidden_namespace:
            verb = {"GET": "get" if name else "list", "POST": "create", "PUT": "update",
                    "PATCH": "patch", "DELETE": "delete"}.get(self.command, "get")
            resource = kind + ("." + KINDS[kind][2] if kind in KINDS and KINDS[kind][2] else "")
            raise ApiError(403, '%s is forbidden: User "celos-fake-user" cannot %s resource '
                           '"%s" in API group "%s" in the namespace "%s"'
                           % (resource, verb, kind, KINDS.get(kind, ("", "", ""))[2], namespace),
                           details={"kind": kind, "group": KINDS.get(kind, ("", "", ""))[2]})
        if kind == "namespaces":
            if name:
                return 200, namespace_object(name)
            names = sorted({k.split("/")[0] for objs in self.state.objects.values()
                            for k in objs} | {"default"})
            return 200, {"kind": "NamespaceList", "apiVersion": "v1", "metadata": {
                "resourceVersion": str(self.state.rv)}, "items": [namespace_object(n)
                                                                  for n in names]}
        handler = {"GET": self.get, "POST": self.create, "PUT": self.replace,
                   "PATCH": self.patch, "DELETE": self.delete}.get(self.command)
        if handler is None or (
                self.command != "GET" and (self.command == "POST") != (name is None)):
            raise ApiError(405, "the server does not allow this method on the requested "
                           "resource")
        return handler(kind, namespace, name, sub)

    def read_body(self):
        try:
            return json.loads(self.body or b"null")
        except ValueError as e:
            raise ApiError(400, "the request body is not JSON: %s" % e)

    def get(self, kind, namespace, name, sub):
        if name is None:
            return self.list(kind, namespace)
        if sub == "log" and kind == "pods":
            try:
                tail = int(self.query["tailLines"]) if "tailLines" in self.query else None
                limit = int(self.query["limitBytes"]) if "limitBytes" in self.query else None
            except ValueError:
                raise ApiError(400, "tailLines and limitBytes want whole numbers")
            return 200, self.cluster.log(namespace, name, tail, limit), (), "text/plain"
        if sub not in (None, "status"):
            raise ApiError(404, "the server could not find the requested resource")
        return 200, self.state.get(kind, namespace, name)

    def selection(self, namespace):
        """A predicate on objects: the namespace, labelSelector and fieldSelector of a list."""
        try:
            labels = parse_labels(self.query.get("labelSelector"))
            fields = parse_fields(self.query.get("fieldSelector"))
        except SelectorError as e:
            raise ApiError(400, "unable to parse requirement: %s" % e)
        return lambda obj: ((namespace is None or obj["metadata"]["namespace"] == namespace)
                            and labels_match(labels, obj["metadata"].get("labels"))
                            and fields_match(fields, obj))

    def list(self, kind, namespace):
        state, query = self.state, self.query
        wanted = self.selection(namespace)
        if query.get("watch") in TRUE:
            return 200, open_watch(state, kind, wanted, query)
        start = self.check_resource_version()
        items = [(key, obj) for key, obj in sorted(state.objects[kind].items())
                 if key > start and wanted(obj)]
        meta = {"resourceVersion": str(state.rv)}
        limit = int(query.get("limit") or 0)
        if limit and len(items) > limit:
            last = items[limit - 1][1]["metadata"]
            token = json.dumps({"rv": state.rv, "start": "%s/%s" % (last["namespace"],
                                                                    last["name"])})
            meta["continue"] = base64.urlsafe_b64encode(token.encode()).decode()
            meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        version, api_kind, _ = KINDS[kind]
        # The body is joined from each object's cached encoding (the same bytes json.dumps
        # gives the whole list): 10,000 objects are not serialised again on every list.
        head = json.dumps({"kind": api_kind + "List", "apiVersion": version, "metadata": meta})
        encoded = [state.encoded(kind, key, obj) for key, obj in items]
        return 200, ListBody(head[:-1].encode() + b', "items": [', encoded, b"]}")

    def check_resource_version(self):
        """The key after which a list starts (a continue token's), checking resourceVersion."""
        state, query = self.state, self.query
        if query.get("continue"):
            try:
                token = json.loads(base64.urlsafe_b64decode(query["continue"].encode()))
                rv, start = int(token["rv"]), token["start"]
            except (ValueError, KeyError, TypeError):
                raise ApiError(400, "continue key is not valid")
            if rv < state.compacted:
                raise ApiError(410, "The provided continue parameter is too old to display a "
                               "consistent list result. You can start a new list without the "
                               "continue parameter.", reason="Expired")
            return start
        wanted = query.get("resourceVersion", "")
        if wanted not in ("", "0"):
            try:
                rv = int(wanted)
            except ValueError:
                raise ApiError(400, "invalid resource version: %s" % wanted)
            if rv > state.rv:
                raise ApiError(504, "Too large resource version: %d, current: %d"
                               % (rv, state.rv), reason="Timeout", details={"causes": [
                                   {"reason": "ResourceVersionTooLarge",
                                    "message": "Too large resource version"}],
                                   "retryAfterSeconds": 1})
            if query.get("resourceVersionMatch") == "Exact" and rv < state.compacted:
                raise ApiError(410, "The resourceVersion for the provided list is too old.",
                               reason="Expired")
        return ""

    def create(self, kind, namespace, name, sub):
        if kind != "jobs" or name is not None:
            raise ApiError(405, "the fake creates Jobs only (pods come from Jobs)")
        body = self.read_body()
        if not isinstance(body, dict):
            raise ApiError(400, "the body is not a JSON object")
        job = new_job(self.state, namespace, body)
        if self.query.get("dryRun") != "All":
            self.state.put("jobs", job)
        return 201, job

    def apply_change(self, kind, old, new):
        """Stores new in place of old: metadata the server owns stays, status stays, a changed
        spec raises the generation; a stale resourceVersion is a Conflict."""
        name = old["metadata"]["name"]
        wanted = (new.get("metadata") or {}).get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise conflict(kind, name)
        meta = dict(old["metadata"])
        for key in ("labels", "annotations", "finalizers"):
            if key in (new.get("metadata") or {}):
                meta[key] = new["metadata"][key]
            else:
                meta.pop(key, None)
        if (new.get("metadata") or {}).get("name", name) != name:
            raise invalid(kind, name, "metadata.name", "field is immutable")
        result = dict(old, metadata=meta)
        if kind == "jobs":
            spec = new.get("spec") or {}
            for field in ("template", "selector", "completions", "completionMode"):
                if field in old["spec"] and spec.get(field) != old["spec"][field]:
                    raise invalid(kind, name, "spec." + field, "field is immutable")
            if spec != old["spec"]:
                meta["generation"] = old["metadata"].get("generation", 1) + 1
            result["spec"] = spec
        elif new.get("spec") != old.get("spec"):
            raise invalid(kind, name, "spec", "Forbidden: pod updates may not change fields "
                          "other than metadata in this fake")
        if self.query.get("dryRun") != "All":
            self.state.put(kind, result)
        return 200, result

    def replace(self, kind, namespace, name, sub):
        body = self.read_body()
        if not isinstance(body, dict):
            raise ApiError(400, "the body is not a JSON object")
        old = self.state.get(kind, namespace, name)
        if not (body.get("metadata") or {}).get("resourceVersion"):
            raise invalid(kind, name, "metadata.resourceVersion",
                          "Invalid value: 0x0: must be specified for an update")
        return self.apply_change(kind, old, body)

    def patch(self, kind, namespace, name, sub):
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if content_type not in PATCH_TYPES:
            raise ApiError(415, 'the body of the request was in an unknown format - accepted '
                           'media types include: %s' % ", ".join(sorted(PATCH_TYPES)))
        old = self.state.get(kind, namespace, name)
        patch = self.read_body()
        if content_type == "application/json-patch+json":
            new = json_patch(old, patch)
        else:
            if not isinstance(patch, dict):
                raise ApiError(400, "a merge patch must be a JSON object")
            new = merge_patch(old, patch)
        return self.apply_change(kind, old, new)

    def delete(self, kind, namespace, name, sub):
        options = self.read_body() or {}
        policy = self.query.get("propagationPolicy") or options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        policy = policy or ("Orphan" if kind == "jobs" else "Background")
        if policy not in ("Background", "Foreground", "Orphan"):
            raise ApiError(400, "unknown propagationPolicy %r" % policy)
        obj = self.state.get(kind, namespace, name)
        pre = options.get("preconditions") or {}
        if pre.get("uid") not in (None, obj["metadata"]["uid"]) or pre.get(
                "resourceVersion") not in (None, obj["metadata"]["resourceVersion"]):
            raise conflict(kind, name)
        key = "%s/%s" % (namespace, name)
        if kind == "pods":
            self.cluster.delete_pod(key)
            return 200, obj
        if policy == "Foreground":
            obj["metadata"].update({"deletionTimestamp": now(), "deletionGracePeriodSeconds": 0,
                                    "finalizers": ["foregroundDeletion"]})
            self.state.bump(obj)
            self.state.save()
            return 202, obj
        if policy == "Orphan":
            for pod in self.cluster.pods_of(obj).values():
                pod["metadata"].pop("ownerReferences", None)
                self.state.bump(pod)
        self.state.remove("jobs", namespace, name)
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                     "details": {"name": name, "group": "batch", "kind": "jobs",
                                 "uid": obj["metadata"]["uid"]}}

    def control(self, path, query):
        common = self.state.control(self.command, path, query)
        if common:
            return self.send(*common)
        with self.state.lock:
            if path == "/_control/objects":
                return self.send(200, dict(self.state.objects, rv=self.state.rv))
            if self.command != "POST":
                return self.send(404, {"error": "unknown control endpoint"})
            if path == "/_control/unschedulable":
                self.state.unschedulable = query.get("on", "1") in ("1", "true")
                self.state.save()  # kept across a restart with --state, as the Jobs are
            elif path == "/_control/delete-job":
                key = "%s/%s" % (query.get("namespace"), query.get("name"))
                job = self.state.objects["jobs"].get(key)
                if job is None:
                    return self.send(404, {"error": "no job " + key})
                for pod_key in self.cluster.pods_of(job):
                    self.cluster.delete_pod(pod_key)
                self.state.remove("jobs", *key.split("/", 1))
            elif path == "/_control/fail":
                try:
                    code, count = int(query.get("code", "")), int(query.get("count", "1"))
                except ValueError:
                    return self.send(400, {"error": "fail wants code=<status>&count=<n>"})
                self.state.fail_next.append([code, count])
            elif path == "/_control/compact":
                self.state.compacted = self.state.rv
            else:
                return self.send(404, {"error": "unknown control endpoint"})
            return self.send(200, {"ok": True})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", help="require 'Authorization: Bearer TOKEN'")
    parser.add_argument("--forbidden-namespace", help="answer 403 for this namespace")
    parser.add_argument("--state", help="keep objects in this JSON file across restarts")
    parser.add_argument("--latency-ms", type=int, default=0, help="delay every answer by N ms")
    parser.add_argument("--bookmark-seconds", type=float, default=5.0,
                        help="how often a watch with allowWatchBookmarks gets a BOOKMARK")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (kubectl sends "
                        "tokens over HTTPS only)")
    parser.add_argument("--tls-key", help="the PEM key of --tls-cert")
    args = parser.parse_args()
    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
    state = Store(args.state)
    state.latency_ms = args.latency_ms
    state.bookmark_seconds = args.bookmark_seconds
    if args.state:
        workdir = args.state + ".pods"
    else:
        workdir = tempfile.mkdtemp(prefix="fake-kube-")
        # Its harnesses stop the fake with SIGTERM: the pods' directory goes with it (every CI
        # run left about 30 of them in /tmp).
        signal.signal(signal.SIGTERM, lambda *_: (shutil.rmtree(workdir, True), os._exit(0)))
    cluster = Cluster(state, workdir)
    threading.Thread(target=cluster.run, daemon=True).start()
    handler = type("KubeHandler", (Handler,), {
        "state": state, "cluster": cluster, "token": args.token,
        "forbidden_namespace": args.forbidden_namespace})
    fake_http.serve(handler, args.port, on_bound=lambda port: print(port, flush=True),
                    ssl_context=context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
