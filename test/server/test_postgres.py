"""celos-server with its state in PostgreSQL (SPEC §11, §16): --import-db of a file database
(the original's format included), start-up errors, and a server that starts while PostgreSQL is
down. Each test class starts a private PostgreSQL (test/pg_util.py)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from server_process import SERVER, CelosServer
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pg_util  # noqa: E402
from e2e_util import poll  # noqa: E402

WORKFLOW = """
celos.defineWorkflow({
    "id": "wordcount-nyc",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(1),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true"),
    "startTime": "2015-09-14T00:00Z"
});
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(*args):
    return subprocess.run([SERVER] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)


@unittest.skipUnless(os.path.exists(SERVER), "celos-server is not built")
class PostgresServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why_not = pg_util.available()
        if why_not:
            raise unittest.SkipTest(why_not)
        cls.pg = pg_util.PrivatePostgres()
        cls.count = 0

    @classmethod
    def tearDownClass(cls):
        cls.pg.close()

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="celos-pg-e2e-")
        type(self).count += 1
        self.uri = self.pg.create_database("t%d" % self.count)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def original_db(self):
        db = os.path.join(self.dir, "db")
        write(db + "/state/wordcount-nyc/2015-09-15/00:00:00.000Z",
              '{\n  "status" : "SUCCESS",\n  "externalID" : "0008681-W",\n  "retryCount" : 0\n}')
        write(db + "/state/wordcount-nyc/2015-09-15/01:00:00.000Z",
              '{\n  "status" : "READY",\n  "externalID" : null,\n  "retryCount" : 2\n}')
        write(db + "/rerun/wordcount-nyc/2015-09-15/00:00:00.000Z", "")
        write(db + "/paused/wordcount-lax", "")
        return db

    def test_import_of_the_original_format_is_served_by_a_server_on_postgres(self):
        db = self.original_db()
        p = run("--import-db", db, "--state-db", self.uri)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("2 slots, 1 rerun markers, 1 pause flags", p.stdout)
        self.assertNotIn(pg_util.PASSWORD, p.stdout + p.stderr)
        server = CelosServer(workflows={"wc.js": WORKFLOW},
                             args=["--state-db", self.uri])
        try:
            r = server.get("/slot-state?id=wordcount-nyc&time=2015-09-15T00:00Z")
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json["status"], "SUCCESS")
            self.assertEqual(r.json["externalID"], "0008681-W")
            r = server.get("/slot-state?id=wordcount-nyc&time=2015-09-15T01:00Z")
            self.assertEqual(r.json["retryCount"], 2)
            # The server's own file database stays empty: the state lives in PostgreSQL.
            self.assertFalse(os.path.exists(os.path.join(server.db, "state")))
        finally:
            server.close()

    def test_a_second_import_is_refused_unless_forced(self):
        db = self.original_db()
        self.assertEqual(run("--import-db", db, "--state-db", self.uri).returncode, 0)
        p = run("--import-db", db, "--state-db", self.uri)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not empty", p.stderr)
        write(db + "/state/other/2015-09-15/00:00:00.000Z",
              '{"status":"FAILURE","externalID":null,"retryCount":0}')
        p = run("--import-db", db, "--state-db", self.uri, "--force")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.pg.psql("t%d" % self.count,
                                      "SELECT count(*) FROM celos_slots"), "3")

    def test_a_corrupt_file_is_named_and_nothing_is_written(self):
        db = self.original_db()
        write(db + "/state/broken/2015-09-15/00:00:00.000Z", "{not json")
        p = run("--import-db", db, "--state-db", self.uri)
        self.assertEqual(p.returncode, 1)
        self.assertIn("state/broken/2015-09-15/00:00:00.000Z", p.stderr)
        self.assertIn("nothing written", p.stderr)
        # Nothing at all: the directory is read whole before the target is touched.
        self.assertEqual(self.pg.psql("t%d" % self.count, "SELECT count(*) FROM pg_tables "
                                      "WHERE tablename = 'celos_slots'"), "0")

    def test_refused_credentials_exit_2_naming_host_port_database_not_the_password(self):
        server = CelosServer(workflows={"wc.js": WORKFLOW}, start=False,
                             args=["--state-db", self.pg.uri("t%d" % self.count, "wrong-pw-42")])
        try:
            p = subprocess.run(server.command(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("host 127.0.0.1 port %d database t%d" % (self.pg.port, self.count),
                          p.stderr)
            self.assertNotIn("wrong-pw-42", p.stderr)
        finally:
            server.close()

    def test_a_malformed_uri_exits_2(self):
        server = CelosServer(workflows={"wc.js": WORKFLOW}, start=False,
                             args=["--state-db", "postgresql://celos:pw9@[::1/x"])
        try:
            p = subprocess.run(server.command(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertNotIn("pw9", p.stderr)
        finally:
            server.close()

    def test_the_password_may_come_from_pgpassfile(self):
        passfile = os.path.join(self.dir, "pgpass")
        write(passfile, "127.0.0.1:%d:*:celos:%s\n" % (self.pg.port, pg_util.PASSWORD))
        os.chmod(passfile, 0o600)
        os.environ["PGPASSFILE"] = passfile
        try:
            server = CelosServer(workflows={"wc.js": WORKFLOW},
                                 args=["--state-db", self.pg.uri("t%d" % self.count, None)])
        finally:
            del os.environ["PGPASSFILE"]
        try:
            r = server.post("/scheduler?time=2015-09-14T03:00Z")
            self.assertEqual(r.status, 200, r)
            self.assertNotEqual(self.pg.psql("t%d" % self.count,
                                             "SELECT count(*) FROM celos_slots"), "0")
        finally:
            server.close()
