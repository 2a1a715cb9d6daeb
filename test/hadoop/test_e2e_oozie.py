"""celos-server running Hadoop workflows end to end: hdfsCheckTrigger on hdfs:// paths served
by the WebHDFS fake (HA: a standby and an active name node, found through a Hadoop
configuration directory), slots run as jobs on the Oozie fake, the scheduler stepped with
explicit times (SPEC §4, §7.1, §7.3)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

from fake_process import FakeServer, request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_util import free_port  # noqa: E402 (test/e2e_util.py)
import pg_util  # noqa: E402 (test/pg_util.py)

SERVER = os.environ.get("CELOS_SERVER", "")
# "postgresql": the same story with the state in a private PostgreSQL (ctest celos_hadoop_e2e_postgres).
STATE_DB = os.environ.get("CELOS_TEST_STATE_DB", "file")

WORKFLOWS = """
var CELOS_DEFAULT_OOZIE = "%(oozie)s";
var CELOS_DEFAULT_OOZIE_PROPERTIES = {
    "queue": "default",
    "defaultOnly": "from-defaults",
    "year": "1999"
};

celos.defineWorkflow({
    "id": "wordcount",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(5),
    "trigger": celos.andTrigger(
        celos.hdfsCheckTrigger("/input/${year}-${month}-${day}/${hour}00/_READY"),
        celos.offsetTrigger(0, celos.hdfsCheckTrigger("/input/${year}-${month}-${day}/${hour}00/_READY"))),
    "externalService": celos.oozieExternalService({
        "oozie.wf.application.path": "/wordcount/workflow.xml",
        "inputDir": "/input/${year}-${month}-${day}/${hour}00",
        "queue": "etl & <more>"
    }),
    "startTime": "2015-09-12T20:00Z",
    "maxRetryCount": 2
});

celos.defineWorkflow({
    "id": "always",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(5),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.oozieExternalService(function (slot) {
        return {"oozie.wf.application.path": "/always/workflow.xml"};
    }),
    "startTime": "2015-09-12T20:00Z"
});

celos.defineWorkflow({
    "id": "explicit",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.hdfsCheckTrigger("/explicit/_READY", "hdfs://nameservice1"),
    "externalService": celos.oozieExternalService({"oozie.wf.application.path": "/x"}),
    "startTime": "2015-09-12T20:00Z"
});
"""

CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://nameservice1</value></property>
</configuration>
"""

HDFS_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>dfs.nameservices</name><value>nameservice1</value></property>
  <property><name>dfs.ha.namenodes.nameservice1</name><value>nn1,nn2</value></property>
  <property><name>dfs.namenode.http-address.nameservice1.nn1</name><value>127.0.0.1:%d</value></property>
  <property><name>dfs.namenode.http-address.nameservice1.nn2</name><value>127.0.0.1:%d</value></property>
</configuration>
"""

SLOT_20 = "2015-09-12T20:00:00.000Z"
SLOT_21 = "2015-09-12T21:00:00.000Z"
NOW = "2015-09-12T21:30Z"


@unittest.skipUnless(SERVER and os.path.exists(SERVER), "celos-server is not built")
class HadoopEndToEndTest(unittest.TestCase):
    databases = 0  # with CELOS_TEST_STATE_DB=postgresql: how many the class's PostgreSQL has

    @classmethod
    def setUpClass(cls):
        # One PostgreSQL for the class (initdb and a start cost seconds on a loaded machine),
        # a database of its own for each test.
        cls.postgres = None
        if STATE_DB == "postgresql":
            why_not = pg_util.available()
            if why_not:
                raise unittest.SkipTest(why_not)
            cls.postgres = pg_util.PrivatePostgres()

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="celos-hadoop-e2e-")
        self.hdfs_root = self.path("hdfs")
        os.makedirs(self.hdfs_root)
        # nn1 is standby, nn2 active: every hdfs:// check must fail over.
        self.nn1 = FakeServer("fake_webhdfs.py", "--root", self.hdfs_root, "--standby")
        self.nn2 = FakeServer("fake_webhdfs.py", "--root", self.hdfs_root)
        self.oozie = FakeServer("fake_oozie.py", "--state", self.path("oozie-jobs.json"))
        for name in ("workflows", "defaults", "conf", "db"):
            os.makedirs(self.path(name))
        with open(self.path("workflows/hadoop.js"), "w") as f:
            f.write(WORKFLOWS % {"oozie": self.oozie.url("/oozie")})
        with open(self.path("conf/core-site.xml"), "w") as f:
            f.write(CORE_SITE)
        with open(self.path("conf/hdfs-site.xml"), "w") as f:
            f.write(HDFS_SITE % (self.nn1.port, self.nn2.port))
        self.server = None
        self.state_db_args = []
        if self.postgres:
            type(self).databases += 1
            name = "celos%d" % self.databases
            self.state_db_args = ["--state-db", self.postgres.create_database(name)]
        self.start_server()

    @classmethod
    def tearDownClass(cls):
        if cls.postgres:
            cls.postgres.close()
            cls.postgres = None

    def tearDown(self):
        self.stop_server()
        for fake in (self.nn1, self.nn2, self.oozie):
            fake.stop()
        shutil.rmtree(self.dir)

    # ---- helpers

    def path(self, relative):
        return os.path.join(self.dir, relative)

    def start_server(self):
        self.port = free_port()
        env = dict(os.environ, HADOOP_USER_NAME="celos")
        self.server_log = open(self.path("server.err"), "a")
        self.server = subprocess.Popen(
            [SERVER, "--port", str(self.port), "--workflows", self.path("workflows"),
             "--defaults", self.path("defaults"), "--logs", self.path("logs"),
             "--db", self.path("db"), "--hadoop-conf", self.path("conf")] + self.state_db_args,
            stdout=self.server_log, stderr=self.server_log, env=env)
        for _ in range(300):
            if self.server.poll() is not None:
                self.fail("celos-server exited: " + self.server_output())
            try:
                status, _, _ = request("GET", self.api("/version"))
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.fail("celos-server did not answer: " + self.server_output())

    def stop_server(self):
        if self.server and self.server.poll() is None:
            self.server.terminate()
            self.server.wait(timeout=60)
        if self.server:
            self.server_log.close()

    def server_output(self):
        with open(self.path("server.err")) as f:
            return f.read()[-4000:]

    def api(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def step(self, at=NOW):
        status, _, body = request("POST", self.api("/scheduler?time=" + urllib.parse.quote(at)))
        self.assertEqual(status, 200, body)
        self.assertIsNone(self.server.poll(), "celos-server died: " + self.server_output())

    def slot(self, workflow, time_):
        q = urllib.parse.urlencode({"id": workflow, "time": time_})
        status, _, body = request("GET", self.api("/slot-state?" + q))
        if status == 404:
            return {"status": "WAITING", "retryCount": 0, "externalID": None}
        self.assertEqual(status, 200, body)
        return json.loads(body)

    def step_until(self, workflow, time_, status, retry_count=None, steps=6):
        """Steps until the slot reaches `status` (a slot moves one state per step or so: the
        bound is a step count, not a time)."""
        seen = []
        for _ in range(steps):
            self.step()
            slot = self.slot(workflow, time_)
            seen.append(slot["status"])
            if slot["status"] == status:
                if retry_count is not None:
                    self.assertEqual(slot["retryCount"], retry_count)
                return slot
        self.fail("%s@%s never became %s: %s\n%s" % (workflow, time_, status, seen,
                                                     self.server_output()))

    def ready(self, hour):
        d = os.path.join(self.hdfs_root, "input", "2015-09-12", "%02d00" % hour)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "_READY"), "w").close()

    def jobs(self):
        return self.oozie.control("/_control/jobs", "GET")

    def set_job(self, job_id, status):
        self.oozie.control("/_control/status?id=%s&status=%s" % (job_id, status))

    # ---- the stories

    def test_a_slot_runs_on_oozie_with_the_properties_of_the_spec(self):
        self.oozie.control("/_control/start-status?status=PREP")
        self.ready(20)
        running = self.step_until("wordcount", SLOT_20, "RUNNING")
        job = self.jobs()[running["externalID"]]
        self.assertEqual(job["properties"], {
            "oozie.wf.application.path": "/wordcount/workflow.xml",
            "inputDir": "/input/2015-09-12/2000",
            "queue": "etl & <more>",
            "defaultOnly": "from-defaults",
            "user.name": "celos",
            "year": "2015", "month": "09", "day": "12",
            "hour": "20", "minute": "00", "second": "00",
            "celosWorkflowName": "wordcount@2015-09-12T20:00Z",
        })
        # Submitted and started, PREP counts as running.
        self.assertEqual(job["status"], "PREP")
        self.step()
        self.assertEqual(self.slot("wordcount", SLOT_20)["status"], "RUNNING")
        # The slot whose input is missing waits.
        self.assertEqual(self.slot("wordcount", SLOT_21)["status"], "WAITING")
        self.set_job(running["externalID"], "SUCCEEDED")
        self.step_until("wordcount", SLOT_20, "SUCCESS")

    def test_failed_killed_and_suspended_jobs_are_retried_then_fail(self):
        self.ready(20)
        job_ids = []
        for retry, oozie_status in enumerate(["FAILED", "SUSPENDED", "KILLED"]):
            running = self.step_until("wordcount", SLOT_20, "RUNNING", retry_count=retry)
            self.assertNotIn(running["externalID"], job_ids)
            job_ids.append(running["externalID"])
            self.set_job(running["externalID"], oozie_status)
            final = "FAILURE" if retry == 2 else "WAITING"
            self.step_until("wordcount", SLOT_20, final)
        self.assertEqual(len(self.jobs()), len(job_ids) + 2)  # + the "always" slots

    def test_kill_reaches_oozie(self):
        running = self.step_until("always", SLOT_20, "RUNNING")
        q = urllib.parse.urlencode({"id": "always", "time": SLOT_20})
        status, _, body = request("POST", self.api("/kill?" + q))
        self.assertEqual(status, 200, body)
        self.assertEqual(self.slot("always", SLOT_20)["status"], "KILLED")
        self.assertEqual(self.jobs()[running["externalID"]]["status"], "KILLED")

    def test_oozie_down_and_back_loses_nothing(self):
        running = self.step_until("always", SLOT_20, "RUNNING")
        self.oozie.stop()
        self.step()
        self.step()
        self.assertEqual(self.slot("always", SLOT_20)["status"], "RUNNING")
        status, _, body = request("GET", self.api("/workflow-list"))
        self.assertEqual((status, json.loads(body)["ids"]), (200, ["always", "explicit", "wordcount"]))
        self.oozie.start()
        self.set_job(running["externalID"], "SUCCEEDED")
        self.step_until("always", SLOT_20, "SUCCESS")

    def test_hdfs_down_makes_only_its_workflow_wait_and_it_resumes(self):
        self.ready(20)
        self.nn1.stop()
        self.nn2.stop()
        for _ in range(3):
            self.step()
        self.assertEqual(self.slot("wordcount", SLOT_20)["status"], "WAITING")
        # The workflow that needs no HDFS keeps going.
        self.assertEqual(self.slot("always", SLOT_20)["status"], "RUNNING")
        self.nn1.start()
        self.nn2.start()
        self.step_until("wordcount", SLOT_20, "RUNNING")

    def test_the_active_name_node_is_found_whichever_it_is(self):
        self.ready(20)
        self.step_until("wordcount", SLOT_20, "READY")
        nn1_requests = self.nn1.control("/_control/requests", "GET")
        self.assertTrue(nn1_requests, "the standby name node was never asked")
        # Failover the other way round: nn1 becomes active, nn2 standby.
        self.nn1.control("/_control/state?standby=false")
        self.nn2.control("/_control/state?standby=true")
        self.nn1.control("/_control/reset")
        self.ready(21)
        self.step_until("wordcount", SLOT_21, "READY")
        ops = [r["op"] for r in self.nn1.control("/_control/requests", "GET")]
        self.assertIn("GETFILESTATUS", ops)

    def test_one_check_per_distinct_path_and_slot_per_step(self):
        # wordcount refers to its path twice (fs.defaultFS); explicit names hdfs://nameservice1.
        # The active name node sees one check per path and waiting slot per step.
        self.step()
        self.nn2.control("/_control/reset")
        self.step()
        paths = [r["path"] for r in self.nn2.control("/_control/requests", "GET")
                 if r["op"] == "GETFILESTATUS"]
        # Each wordcount slot's path once although the trigger names it twice; explicit's two
        # slots share one path, which may be checked once for both.
        self.assertEqual(sorted(p for p in paths if p.startswith("/input/")),
                         ["/input/2015-09-12/2000/_READY", "/input/2015-09-12/2100/_READY"])
        self.assertIn(paths.count("/explicit/_READY"), (1, 2))


if __name__ == "__main__":
    unittest.main()
