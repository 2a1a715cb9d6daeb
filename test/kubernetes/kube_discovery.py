"""The discovery documents of the fake Kubernetes API server (/version, /api, /apis, /api/v1,
/apis/batch/v1): the legacy (unaggregated) form, which kubectl falls back to when the server
answers its aggregated-discovery Accept header with plain application/json."""

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def version():
    return {"major": "1", "minor": "30", "gitVersion": "v1.30.0-celos-fake",
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "2024-01-01T00:00:00Z", "goVersion": "go1.22.0", "compiler": "gc",
            "platform": "linux/amd64"}


def api(host):
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
        {"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}


def apis():
    batch = {"groupVersion": "batch/v1", "version": "v1"}
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": "batch", "versions": [batch], "preferredVersion": batch}]}


def _resource(name, kind, namespaced=True, verbs=VERBS, short=None, categories=None):
    entry = {"name": name, "singularName": "" if "/" in name else kind.lower(),
             "namespaced": namespaced, "kind": kind, "verbs": verbs}
    if short:
        entry["shortNames"] = short
    if categories:
        entry["categories"] = categories
    return entry


def core_v1():
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        _resource("namespaces", "Namespace", False, ["get", "list"], ["ns"]),
        _resource("pods", "Pod", True, VERBS, ["po"], ["all"]),
        _resource("pods/log", "Pod", True, ["get"]),
        _resource("pods/status", "Pod", True, ["get", "patch", "update"])]}


def batch_v1():
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "batch/v1",
            "resources": [_resource("jobs", "Job", True, VERBS, None, ["all"]),
                          _resource("jobs/status", "Job", True, ["get", "patch", "update"])]}


def document(path, host):
    """The discovery document at path, or None."""
    return {"/version": version, "/api": lambda: api(host), "/apis": apis,
            "/api/v1": core_v1, "/apis/batch/v1": batch_v1}.get(path.rstrip("/") or "/",
                                                                 lambda: None)()
