"""End-to-end tests of the automation API (SPEC §13, §16) against the real celos-server: the
/api/v1/ aliases of the §6 endpoints and the check order of the dispatcher."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import CelosServer  # noqa: E402
from test_server import workflow_js  # noqa: E402

T = "2015-09-13T01:00:00.000Z"


class AliasTest(unittest.TestCase):
    """Every §6 endpoint answers the same under /api/v1/ as at its legacy path."""

    @classmethod
    def setUpClass(cls):
        cls.server = CelosServer(workflows={"hello.js": workflow_js("hello")})

    @classmethod
    def tearDownClass(cls):
        status = cls.server.terminate()
        cls.server.close()
        assert status == 0, status

    def both(self, method, target):
        legacy = self.server.request(method, target, body=b"" if method == "POST" else None)
        v1 = self.server.request(method, "/api/v1" + target,
                                 body=b"" if method == "POST" else None)
        self.assertEqual(legacy.status, v1.status, (legacy, v1))
        return legacy, v1

    def test_reads_answer_the_same_under_api_v1(self):
        for target in ["/workflow-list", "/workflow-slots?id=hello&end=" + T,
                       "/multi-workflow-slots?end=" + T, "/slot-state?id=hello&time=" + T,
                       "/trigger-status?id=hello&time=" + T, "/version",
                       "/workflow-slots?id=nope", "/workflow-slots"]:
            legacy, v1 = self.both("GET", target)
            self.assertEqual(legacy.body, v1.body, target)

    def test_mutations_work_under_api_v1(self):
        _, v1 = self.both("POST", "/scheduler?time=2015-09-13T01:30Z&ids=hello")
        self.assertEqual(v1.json["workflows"], 1)
        reply = self.server.post("/api/v1/pause?id=hello&paused=false")
        self.assertEqual(reply.json, {"id": "hello", "paused": False})
        reply = self.server.post("/api/v1/kill?id=hello&time=2015-09-13T05:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["status"], "KILLED")
        reply = self.server.post("/api/v1/rerun?id=hello&time=2015-09-13T05:00Z")
        self.assertEqual(reply.json["status"], "WAITING")
        self.assertEqual(self.server.post("/api/v1/clear-cache").json["workflows"], 1)

    def test_errors_keep_their_shapes_under_api_v1(self):
        reply = self.server.get("/api/v1/rerun?id=hello&time=" + T)
        self.assertEqual(reply.status, 405)
        self.assertEqual(reply.headers["Allow"], "POST")
        self.assertEqual(self.server.get("/api/v1/nothing").status, 404)
        self.assertEqual(self.server.get("/api/v1").status, 404)


if __name__ == "__main__":
    unittest.main()
