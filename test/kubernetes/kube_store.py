"""The objects of the fake Kubernetes API server (batch/v1 Jobs and core/v1 Pods), their
resourceVersions, the Status answers of errors, patches, and the --state file.

Every change of an object takes the next resourceVersion of one counter (as etcd's revision);
a list carries the counter's value. Objects are kept by kind ("jobs", "pods") under
"<namespace>/<name>".
"""

import bisect
import copy
import json
import os
import random
import re
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fake_ledger import Ledger  # noqa: E402 (test/fake_ledger.py)

MAX_EVENTS = 10000
KINDS = {"jobs": ("batch/v1", "Job", "batch"), "pods": ("v1", "Pod", "")}
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           405: "MethodNotAllowed", 409: "AlreadyExists", 410: "Expired", 415: "UnsupportedMediaType",
           422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
           504: "Timeout"}


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ApiError(Exception):
    """An error answered as a meta/v1 Status object."""

    def __init__(self, code, message, reason=None, details=None, headers=()):
        super().__init__(message)
        self.code, self.message = code, message
        self.reason = reason or REASONS.get(code, "Unknown")
        self.details, self.headers = details, list(headers)

    def status(self):
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body


def not_found(kind, name):
    group = KINDS[kind][2]
    resource = kind + ("." + group if group else "")
    return ApiError(404, '%s "%s" not found' % (resource, name),
                    details={"name": name, "group": group, "kind": kind})


def conflict(kind, name):
    group = KINDS[kind][2]
    return ApiError(409, 'Operation cannot be fulfilled on %s%s "%s": the object has been '
                    "modified; please apply your changes to the latest version and try again"
                    % (kind, "." + group if group else "", name), reason="Conflict",
                    details={"name": name, "group": group, "kind": kind})


def invalid(kind, name, field, message):
    api_kind = KINDS[kind][1]
    return ApiError(422, '%s.%s "%s" is invalid: %s: %s' % (kind, KINDS[kind][2] or "core", name,
                                                            field, message),
                    details={"name": name, "group": KINDS[kind][2], "kind": api_kind,
                             "causes": [{"reason": "FieldValueInvalid", "message": message,
                                         "field": field}]})


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch (null deletes a key, lists are replaced). Strategic merge
    patches are applied the same way: the fake has no list merge keys."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(doc, path):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    if not parts:
        raise ApiError(422, "the JSON patch path %r is empty" % path)
    parent = doc
    for part in parts[:-1]:
        parent = parent[int(part)] if isinstance(parent, list) else parent[part]
    return parent, parts[-1]


def json_patch(doc, operations):
    """RFC 6902 JSON patch: add, remove, replace, test (the operations kubectl and clients send)."""
    doc = copy.deepcopy(doc)
    if not isinstance(operations, list):
        raise ApiError(400, "json patch must be a list of operations")
    for op in operations:
        try:
            parent, key = _pointer(doc, op["path"])
            kind = op["op"]
            if isinstance(parent, list):
                index = len(parent) if key == "-" else int(key)
                if kind == "add":
                    parent.insert(index, op["value"])
                elif kind == "remove":
                    del parent[index]
                elif kind == "replace":
                    parent[index] = op["value"]
                elif kind == "test" and parent[index] != op["value"]:
                    raise ApiError(422, "testing value %s failed" % op["path"])
            elif kind in ("add", "replace"):
                if kind == "replace" and key not in parent:
                    raise ApiError(422, "replace operation does not apply: doc is missing key: "
                                   + op["path"])
                parent[key] = op["value"]
            elif kind == "remove":
                del parent[key]
            elif kind == "test" and parent.get(key) != op.get("value"):
                raise ApiError(422, "testing value %s failed" % op["path"])
            elif kind not in ("test",):
                raise ApiError(422, "Unexpected kind: %s" % kind)
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise ApiError(422, "the JSON patch %r does not apply: %s" % (op, e))
    return doc


def random_suffix():
    return "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))


class Store(Ledger):
    """The objects, the resourceVersion counter and the control knobs, under self.lock."""

    def __init__(self, path=None):
        super().__init__()
        self.objects = {"jobs": {}, "pods": {}}
        self.runtime = {}  # pod key -> {"pid", "log", "exit"}: the fake kubelet's records
        self.rv = 1
        self.compacted = 0
        self.unschedulable = False
        self.fail_next = []  # [[code, count]]: the next requests answer this error
        self.events = []  # (resourceVersion, kind, type, object, previous) of every change
        self.latest = {}  # (kind, key) -> the object as its last change left it (for previous)
        self.watchers = set()  # open watches (kube_watch.py), told of every change
        self.bookmark_seconds = 5.0  # how often a watch with allowWatchBookmarks gets one
        self.encodings = {"jobs": {}, "pods": {}}  # key -> (object, resourceVersion, JSON)
        self.path = path
        if path and os.path.exists(path):
            with open(path) as f:
                saved = json.load(f)
            self.objects, self.runtime = saved["objects"], saved["runtime"]
            self.rv, self.compacted = saved["rv"], saved["compacted"]
            # As a cluster whose nodes are cordoned stays so while its API server restarts.
            self.unschedulable = saved.get("unschedulable", False)
        self.events_from = self.rv  # a restarted fake has no history of earlier changes
        for kind, objects in self.objects.items():
            for key, obj in objects.items():
                self.latest[(kind, key)] = json.loads(json.dumps(obj))

    def save(self):
        """Called with the lock held after every change."""
        if not self.path:
            return
        with open(self.path + ".tmp", "w") as f:
            json.dump({"objects": self.objects, "runtime": self.runtime, "rv": self.rv,
                       "compacted": self.compacted, "unschedulable": self.unschedulable}, f)
        os.replace(self.path + ".tmp", self.path)

    def bump(self, obj, event="MODIFIED"):
        """Gives obj the next resourceVersion (a change), records the change with the object as
        it was before (a watch with a selector sees an object enter or leave it) and tells the
        open watches."""
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        kind = "jobs" if obj.get("kind") == "Job" else "pods"
        key = (kind, "%s/%s" % (obj["metadata"]["namespace"], obj["metadata"]["name"]))
        now_as = json.loads(json.dumps(obj))
        before = self.latest.pop(key, None) if event == "DELETED" else self.latest.get(key)
        if event != "DELETED":
            self.latest[key] = now_as
        self.events.append((self.rv, kind, event, now_as, before))
        if len(self.events) > MAX_EVENTS:  # as etcd compacts its history
            self.compacted = max(self.compacted, self.events.pop(0)[0])
        for watcher in list(self.watchers):
            watcher.notify()

    def put(self, kind, obj):
        meta = obj["metadata"]
        key = "%s/%s" % (meta["namespace"], meta["name"])
        self.bump(obj, "MODIFIED" if key in self.objects[kind] else "ADDED")
        self.objects[kind][key] = obj
        self.save()

    def remove(self, kind, namespace, name):
        obj = self.objects[kind].pop("%s/%s" % (namespace, name), None)
        self.encodings[kind].pop("%s/%s" % (namespace, name), None)
        if obj is not None:
            self.bump(obj, "DELETED")
            self.save()
        return obj

    def encoded(self, kind, key, obj):
        """obj as a list item (JSON without apiVersion and kind), encoded once per
        resourceVersion as an API server's watch cache keeps it: every change of an object
        gives it a new resourceVersion (bump), so an unchanged one is answered from here."""
        rv = obj["metadata"].get("resourceVersion")
        cached = self.encodings[kind].get(key)
        if cached is not None and cached[0] is obj and cached[1] == rv:
            return cached[2]
        data = json.dumps({k: v for k, v in obj.items()
                           if k not in ("apiVersion", "kind")}).encode()
        self.encodings[kind][key] = (obj, rv, data)
        return data

    def changes(self, kind, since):
        """The (resourceVersion, type, object, previous) of the changes of kind after since;
        raises 410 Expired when that history is compacted or from before a restart."""
        oldest = max(self.compacted, self.events_from)
        if since < oldest:
            raise ApiError(410, "too old resource version: %d (%d)" % (since, oldest),
                           reason="Expired")
        start = bisect.bisect_right(self.events, since, key=lambda e: e[0])
        return [(rv, t, obj, before) for rv, k, t, obj, before in self.events[start:]
                if k == kind]

    def get(self, kind, namespace, name):
        obj = self.objects[kind].get("%s/%s" % (namespace, name))
        if obj is None:
            raise not_found(kind, name)
        return obj

    def new_meta(self, kind, namespace, meta):
        """The server-set metadata of a created object; checks its name."""
        meta = dict(meta or {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + random_suffix()
        name = meta.get("name", "")
        if not name:
            raise invalid(kind, name, "metadata.name",
                          "Required value: name or generateName is required")
        if len(name) > 253 or not DNS_SUBDOMAIN.match(name):
            raise invalid(kind, name, "metadata.name", 'Invalid value: "%s": a lowercase RFC 1123 '
                          "subdomain must consist of lower case alphanumeric characters, '-' or "
                          "'.', and must start and end with an alphanumeric character" % name)
        if "%s/%s" % (namespace, name) in self.objects[kind]:
            group = KINDS[kind][2]
            raise ApiError(409, '%s%s "%s" already exists' % (kind, "." + group if group else "",
                                                             name),
                           details={"name": name, "group": group, "kind": kind})
        meta.update({"namespace": namespace, "uid": str(uuid.uuid4()),
                     "creationTimestamp": now(), "generation": 1})
        for key in ("resourceVersion", "deletionTimestamp", "selfLink"):
            meta.pop(key, None)
        return meta
