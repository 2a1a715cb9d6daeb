"""docs/openapi.yaml against the real celos-server: every documented path and method exists, the
other methods are 405 with the right Allow header, answers have a documented status code and the
documented shape, and every route of the server's table is documented."""

import os
import re
import sys
import unittest

import yaml  # Debian's python3-yaml (scripts/setup.sh)

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("CELOS_SOURCE_DIR", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "test", "server"))
from server_process import CelosServer  # noqa: E402

METHODS = ("get", "post", "put", "delete", "patch")

WORKFLOW = """
celos.defineWorkflow({
    "id": "w",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("sleep 600"),
    "startTime": "2015-09-13T00:00Z",
    "url": "http://wiki/w",
    "contacts": [{"name": "Ann", "email": "ann@example.com"}],
});
"""


def load_spec():
    with open(os.path.join(SOURCE, "docs", "openapi.yaml")) as f:
        return yaml.safe_load(f)


class Schema:
    """Just enough of OpenAPI 3.0 schemas to check our answers: $ref, allOf, type, nullable,
    enum, required, properties, items."""

    def __init__(self, spec):
        self.spec = spec

    def deref(self, node):
        while isinstance(node, dict) and "$ref" in node:
            target = self.spec
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def check(self, value, schema, where="$"):
        schema = self.deref(schema)
        for sub in schema.get("allOf", []):
            self.check(value, sub, where)
        if value is None:
            if not schema.get("nullable", False):
                raise AssertionError("%s: null is not allowed" % where)
            return
        kind = schema.get("type")
        types = {"object": dict, "array": list, "string": str, "boolean": bool,
                 "integer": int, "number": (int, float)}
        if kind and not isinstance(value, types[kind]) or (
                kind in ("integer", "number") and isinstance(value, bool)):
            raise AssertionError("%s: %r is not of type %s" % (where, value, kind))
        if "enum" in schema and value not in schema["enum"]:
            raise AssertionError("%s: %r is not one of %s" % (where, value, schema["enum"]))
        if isinstance(value, dict):
            for name in schema.get("required", []):
                if name not in value:
                    raise AssertionError("%s: missing %r in %r" % (where, name, value))
            for name, sub in schema.get("properties", {}).items():
                if name in value:
                    self.check(value[name], sub, where + "." + name)
        if isinstance(value, list) and "items" in schema:
            for i, item in enumerate(value):
                self.check(item, schema["items"], "%s[%d]" % (where, i))


class OpenApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.spec = load_spec()
        cls.schema = Schema(cls.spec)
        cls.server = CelosServer(workflows={"w.js": WORKFLOW})

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def operation(self, path, method):
        return self.spec["paths"][path][method]

    def pending(self, path):
        """Documented ahead of the server (`x-celos-pending: true`)."""
        return any(op.get("x-celos-pending") for m, op in self.spec["paths"][path].items()
                   if m in METHODS)

    def call(self, method, path, query=""):
        """Sends the request and checks the answer against the description: a documented
        status, JSON of the documented shape. Returns the reply."""
        target = path + ("?" + query if query else "")
        reply = self.server.request(method.upper(), target, body=b"" if method == "post" else None)
        responses = self.operation(path, method)["responses"]
        self.assertIn(str(reply.status), responses, "%s %s -> %r" % (method, target, reply))
        self.assertTrue(reply.headers["Content-Type"].startswith("application/json"), reply)
        response = self.schema.deref(responses[str(reply.status)])
        self.schema.check(reply.json, response["content"]["application/json"]["schema"],
                          "%s %s" % (method.upper(), target))
        return reply

    def test_the_description_is_openapi_3_with_an_operation_per_documented_path(self):
        self.assertTrue(self.spec["openapi"].startswith("3."))
        for path, item in self.spec["paths"].items():
            operations = [m for m in METHODS if m in item]
            self.assertEqual(len(operations), 1, path)
            for name, response in item[operations[0]]["responses"].items():
                response = self.schema.deref(response)
                example = response.get("content", {}).get("application/json", {}).get("example")
                if example is not None:
                    with self.subTest(path=path, status=name):
                        self.schema.check(example, response["content"]["application/json"]["schema"])

    def test_every_documented_path_exists_and_other_methods_are_405(self):
        for path, item in self.spec["paths"].items():
            documented = [m for m in METHODS if m in item]
            if self.pending(path):
                with self.subTest(path=path, pending=True):
                    reply = self.server.get(path)
                    self.assertIn("no such endpoint", reply.body,
                                  "the server serves %s now: drop its x-celos-pending" % path)
                continue
            for method in ("get", "post"):
                with self.subTest(path=path, method=method):
                    reply = self.server.request(method.upper(), path,
                                                body=b"" if method == "post" else None)
                    self.assertNotIn("no such endpoint", reply.body)
                    if method in documented:
                        self.assertNotEqual(reply.status, 405, reply)
                        self.assertIn(str(reply.status), item[method]["responses"], reply)
                    else:
                        self.assertEqual(reply.status, 405, reply)
                        self.assertEqual(reply.headers["Allow"], documented[0].upper())
                        self.assertIn("405", item[documented[0]]["responses"])

    def test_an_undocumented_path_is_404(self):
        reply = self.server.get("/no-such-thing")
        self.assertEqual(reply.status, 404)
        self.assertIn("error", reply.json)

    def test_every_route_of_the_server_is_documented(self):
        with open(os.path.join(SOURCE, "libcelos", "src", "web", "api.cc")) as f:
            routes = re.findall(r'\{"(/[a-z-]+)",\s*\{"(GET|POST)"', f.read())
        self.assertGreater(len(routes), 5, "the route table of api.cc was not found")
        for path, method in routes:
            with self.subTest(path=path):
                self.assertIn(path, self.spec["paths"])
                self.assertIn(method.lower(), self.spec["paths"][path])

    def test_answers_have_the_documented_status_and_shape(self):
        slot = "2015-09-13T01:00Z"
        # A step makes the slots READY and submits the oldest (a long sleep: it stays RUNNING).
        step = self.call("post", "/scheduler", "time=2015-09-13T02:30Z").json
        self.assertEqual(step["errors"], [])
        self.call("post", "/scheduler", "time=2015-09-13T02:31Z&ids=w")
        self.assertEqual(self.call("post", "/clear-cache").json, {"workflows": 1, "errors": []})
        self.assertEqual(self.call("get", "/workflow-list").json, {"ids": ["w"]})
        slots = self.call("get", "/workflow-slots",
                          "id=w&start=2015-09-13T00:00Z&end=2015-09-13T03:00Z").json
        self.assertEqual([s["time"][11:13] for s in slots["slots"]], ["02", "01", "00"])
        self.assertEqual(slots["slots"][-1]["status"], "RUNNING")
        self.assertEqual(self.call("get", "/workflow-slots", "id=nope").status, 404)
        self.assertEqual(self.call("get", "/workflow-slots", "").status, 400)
        self.assertEqual(self.call("get", "/slot-state", "id=w&time=" + slot).json["status"],
                         "READY")
        self.assertEqual(self.call("get", "/slot-state", "id=w&time=2015-09-13T03:00Z").status,
                         404)
        self.assertTrue(self.call("get", "/trigger-status", "id=w&time=" + slot).json["ready"])
        self.assertEqual(self.call("post", "/rerun", "id=w&time=" + slot).status, 400)
        self.assertEqual(self.call("post", "/kill", "id=w&time=" + slot).json["status"],
                         "KILLED")
        self.assertEqual(self.call("post", "/kill", "id=w&time=2015-09-13T00:00Z").json["status"],
                         "KILLED")
        self.assertEqual(self.call("post", "/kill", "id=w&time=" + slot).status, 400)
        self.assertEqual(self.call("post", "/rerun", "id=w&time=" + slot).json["status"],
                         "WAITING")
        self.assertEqual(self.call("post", "/rerun", "id=w&time=2015-09-13T01:30Z").status, 404)
        self.assertEqual(self.call("post", "/pause", "id=w&paused=true").json,
                         {"id": "w", "paused": True})
        self.assertEqual(self.call("post", "/pause", "id=w&paused=maybe").status, 400)
        self.assertTrue(self.call("get", "/workflow-slots", "id=w").json["paused"])
        self.call("get", "/version")
        if self.pending("/multi-workflow-slots"):
            return
        multi = self.call("get", "/multi-workflow-slots",
                          "start=2015-09-13T00:00Z&end=2015-09-13T03:00Z").json
        self.assertEqual([w["id"] for w in multi["workflows"]], ["w"])
        self.assertEqual(self.call("get", "/multi-workflow-slots", "ids=nope").status, 404)


if __name__ == "__main__":
    unittest.main()
