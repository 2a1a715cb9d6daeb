"""End-to-end tests of the hostile cases of issue 11 (SPEC §8, §11, §15, §16): the real
celos-server on 127.0.0.1 in temporary directories. Each test failed before its fix."""

import glob
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import CelosServer, poll  # noqa: E402
from test_server import workflow_js, STORY_TIME  # noqa: E402


class HardeningTest(unittest.TestCase):
    def setUp(self):
        self.servers = []

    def tearDown(self):
        for server in self.servers:
            server.close()

    def server(self, workflows=None, start=True, **kw):
        server = CelosServer(workflows=workflows or {}, start=False, **kw)
        self.servers.append(server)
        if start:
            server.start()
        return server

    def step(self, server, time=STORY_TIME):
        reply = server.post("/scheduler?time=" + time)
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def status(self, server, wid, time):
        reply = server.get("/slot-state?id=%s&time=%s" % (wid, time))
        return reply.json.get("status") if reply.status == 200 else None

    def test_a_relative_db_runs_command_jobs_to_success(self):
        server = self.server({"hello.js": workflow_js("hello", command="cd / && echo hi")},
                             start=False)
        server.cwd = server.root
        server.db_flag = "db"
        server.start()

        def done():
            self.step(server)
            return self.status(server, "hello", "2015-09-13T00:00Z") in ("SUCCESS", "FAILURE")
        poll(done, "slot 00:00 to end", interval=0.2)
        self.assertEqual(self.status(server, "hello", "2015-09-13T00:00Z"), "SUCCESS")
        exits = glob.glob(os.path.join(server.db, "jobs", "hello", "**", "exit"), recursive=True)
        self.assertEqual(len(exits), 1, exits)

    def test_a_second_server_on_the_same_db_exits_naming_the_directory_and_pid(self):
        first = self.server()
        second = self.server(start=False)
        second.db = first.db
        result = subprocess.run(second.command(), capture_output=True, text=True, timeout=60)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(first.db, result.stderr)
        self.assertIn("pid %d" % first.process.pid, result.stderr)
        self.assertEqual(first.get("/version").status, 200)
        self.assertEqual(first.terminate(), 0)
        second.start()  # the lock goes with the first server
        self.assertEqual(second.get("/version").status, 200)


if __name__ == "__main__":
    unittest.main()
