"""The OpenAPI document that celos-server serves (GET /api/v1/openapi.json, generated from its
route table) against the same server: every documented path and method exists, the other methods
are 405 with the right Allow header, answers have a documented status code and the documented
shape, every endpoint of SPEC §6 and §13 is documented, and the docs page and its assets are
served by the server itself."""

import json
import os
import sys
import unittest

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


# The endpoints the SPEC promises (§6 at both paths, §13); the document must name each.
SPEC_ROUTES = [("post", p) for p in ("/scheduler", "/clear-cache", "/rerun", "/kill", "/pause")] + \
    [("get", p) for p in ("/workflow-list", "/workflow-slots", "/slot-state", "/trigger-status",
                          "/version")]
SPEC_ROUTES = SPEC_ROUTES + [(m, "/api/v1" + p) for m, p in SPEC_ROUTES] + [
    ("get", "/api/v1/openapi.json"), ("get", "/api/v1/docs"), ("get", "/health/live"),
    ("get", "/health/ready"), ("get", "/metrics"), ("get", "/api/v1/maintenance"),
    ("post", "/api/v1/maintenance"), ("get", "/api/v1/audit")]


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
        cls.server = CelosServer(workflows={"w.js": WORKFLOW})
        reply = cls.server.get("/api/v1/openapi.json")
        assert reply.status == 200, reply
        cls.spec = json.loads(reply.body)
        cls.schema = Schema(cls.spec)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def operation(self, path, method):
        return self.spec["paths"][path][method]

    def call(self, method, path, query=""):
        """Sends the request and checks the answer against the description: a documented
        status, JSON of the documented shape. Returns the reply."""
        target = path + ("?" + query if query else "")
        reply = self.server.request(method.upper(), target, body=b"" if method == "post" else None)
        responses = self.operation(path, method)["responses"]
        self.assertIn(str(reply.status), responses, "%s %s -> %r" % (method, target, reply))
        content_type = reply.headers["Content-Type"]
        response = self.schema.deref(responses[str(reply.status)])
        self.assertIn(content_type, response["content"], reply)
        if content_type == "application/json":
            self.schema.check(reply.json, response["content"][content_type]["schema"],
                              "%s %s" % (method.upper(), target))
        return reply

    def test_the_document_is_openapi_3_and_every_reference_resolves(self):
        self.assertTrue(self.spec["openapi"].startswith("3."))
        ids = set()
        for path, item in self.spec["paths"].items():
            for method, op in item.items():
                self.assertNotIn(op["operationId"], ids)
                ids.add(op["operationId"])
                for name, response in op["responses"].items():
                    response = self.schema.deref(response)
                    self.assertIn("description", response, (path, method, name))
                    for parameter in op["parameters"]:
                        self.assertIn("schema", parameter)

    def test_every_documented_path_exists_and_other_methods_are_405(self):
        for path, item in self.spec["paths"].items():
            documented = [m for m in METHODS if m in item]
            concrete = path.replace("{", "").replace("}", "")
            for method in ("get", "post", "put"):
                with self.subTest(path=path, method=method):
                    reply = self.server.request(method.upper(), concrete,
                                                body=b"" if method != "get" else None)
                    self.assertNotIn("no such endpoint", reply.body)
                    if method in documented:
                        self.assertNotEqual(reply.status, 405, reply)
                        self.assertIn(str(reply.status), item[method]["responses"], reply)
                    else:
                        self.assertEqual(reply.status, 405, reply)
                        self.assertEqual(reply.headers["Allow"],
                                         ", ".join(m.upper() for m in documented))

    def test_every_endpoint_of_the_spec_is_documented(self):
        for method, path in SPEC_ROUTES:
            with self.subTest(path=path, method=method):
                self.assertIn(path, self.spec["paths"])
                self.assertIn(method, self.spec["paths"][path])

    def test_the_docs_page_and_its_assets_come_from_the_server(self):
        page = self.server.get("/api/v1/docs")
        self.assertEqual(page.status, 200)
        self.assertTrue(page.headers["Content-Type"].startswith("text/html"))
        self.assertNotIn("//", page.body.replace("http://www.w3.org", ""),
                         "the page must not load anything from another host")
        for asset in ("/api/v1/docs/swagger-ui-bundle.js", "/api/v1/docs/swagger-ui.css"):
            self.assertIn(asset, page.body)
            reply = self.server.get(asset)
            self.assertEqual(reply.status, 200, asset)
            self.assertGreater(len(reply.body), 10000, asset)

    def test_an_undocumented_path_is_404(self):
        reply = self.server.get("/no-such-thing")
        self.assertEqual(reply.status, 404)
        self.assertIn("error", reply.json)

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
        self.call("get", "/health/ready")
        self.call("get", "/metrics")
        self.assertEqual(self.call("post", "/api/v1/maintenance", "mode=off").json["mode"], "off")
        self.assertEqual(self.call("post", "/api/v1/maintenance", "mode=nap").status, 400)
        self.assertGreater(len(self.call("get", "/api/v1/audit").json["records"]), 0)
        multi = self.call("get", "/multi-workflow-slots",
                          "start=2015-09-13T00:00Z&end=2015-09-13T03:00Z").json
        self.assertEqual([w["id"] for w in multi["workflows"]], ["w"])
        self.assertEqual(self.call("get", "/multi-workflow-slots", "ids=nope").status, 404)


if __name__ == "__main__":
    unittest.main()
