"""celos-server runs slots as real Slurm jobs (SPEC §12, §16) on a private single-node cluster:
munged with its own key and socket, slurmctld and slurmd on 127.0.0.1, everything in a temporary
directory that is removed afterwards (samples/quickstart/slurm/private_slurm.py).

Stories: a job runs to SUCCESS with the slot's environment and its output in the job directory;
a failing job is retried, then FAILURE; a kill cancels the job (KILLED); sbatch refusing a job
(unknown partition) reports Slurm's message; a controller outage leaves the slots RUNNING while
the server keeps answering, and they resolve once slurmctld is back.

The scheduler is stepped with explicit times (POST /scheduler?time=...); the jobs are real, so
the waits are polls with bounds."""

import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("CELOS_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
sys.path.insert(0, os.path.join(SOURCE, "samples", "quickstart", "slurm"))
from e2e_util import poll  # noqa: E402
from server_process import CelosServer  # noqa: E402
import private_slurm  # noqa: E402

SLOT = "2015-09-12T20:00Z"
SLOT_DIR = os.path.join("2015-09-12", "20:00:00.000Z")
CLUSTER = None


def setUpModule():
    global CLUSTER
    missing = private_slurm.missing_programs()
    if missing:
        raise unittest.SkipTest("Slurm is not installed (missing %s): scripts/setup.sh installs "
                                "slurm-wlm and munge" % ", ".join(missing))
    root = tempfile.mkdtemp(prefix="celos-slurm-e2e-")
    CLUSTER = private_slurm.Cluster(root)
    try:
        CLUSTER.start()
    except Exception:
        CLUSTER.remove()
        raise
    os.environ["SLURM_CONF"] = CLUSTER.conf  # celos-server and its sbatch inherit it


def tearDownModule():
    if CLUSTER is not None:
        CLUSTER.remove()


def workflow(wf_id, script, options=None, max_retries=0):
    return """celos.defineWorkflow({
  id: %s,
  schedule: celos.hourlySchedule(),
  schedulingStrategy: celos.serialSchedulingStrategy(),
  trigger: celos.alwaysTrigger(),
  externalService: celos.slurmExternalService(%s, %s),
  startTime: "%s",
  maxRetryCount: %d
});
""" % (json.dumps(wf_id), json.dumps(script), json.dumps(options or {}), SLOT, max_retries)


class SlurmStories(unittest.TestCase):
    def start(self, workflows, args=()):
        self.server = CelosServer(workflows, args=args)
        self.addCleanup(self.server.close)
        self.minute = 0

    def step(self, timeout=30):
        """One step; simulated time moves on by 20 s each step, within the slot's hour."""
        self.minute = min(self.minute + 1, 170)
        now = "2015-09-12T20:%02d:%02dZ" % (self.minute // 3, self.minute % 3 * 20)
        reply = self.server.post("/scheduler?time=" + urllib.parse.quote(now), timeout=timeout)
        self.assertEqual(reply.status, 200, reply)
        return reply

    def slot(self, wf_id):
        reply = self.server.get("/slot-state?" + urllib.parse.urlencode({"id": wf_id, "time": SLOT}))
        if reply.status == 404:
            return {"status": "WAITING"}
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def step_until(self, wf_id, statuses, timeout=60):
        seen = []

        def reached():
            self.step()
            slot = self.slot(wf_id)
            if not seen or seen[-1] != slot["status"]:
                seen.append(slot["status"])
            return slot if slot["status"] in statuses else None
        try:
            return poll(reached, "%s to become %s" % (wf_id, statuses), timeout=timeout,
                        interval=0.3)
        except AssertionError as e:
            raise AssertionError("%s (seen %s)\n%s" % (e, seen, self.server.stderr_text()))

    def job_dirs(self, wf_id):
        return sorted(glob.glob(os.path.join(self.server.db, "jobs", wf_id, SLOT_DIR, "*")))

    def squeue_state(self, job_id):
        out = subprocess.run(["squeue", "--noheader", "--states=all", "--jobs=" + job_id,
                              "--format=%T"], env=CLUSTER.env(), capture_output=True, text=True,
                             timeout=30)
        return out.stdout.strip()

    # ---- the stories

    def test_a_job_runs_to_success_with_the_slot_environment(self):
        self.start({"ok.js": workflow(
            "ok", 'echo "hello $CELOS_WORKFLOW_ID $GREETING ${year} $CELOS_SLOT_TIME"\n'
                  'echo to-stderr >&2\npwd',
            {"env": {"GREETING": "hi there"}, "time": "00:05:00", "cpus": 1})})
        slot = self.step_until("ok", ["SUCCESS"])
        job_id = slot["externalID"]
        self.assertRegex(job_id, r"^[0-9]+$")
        job_dir = os.path.join(self.server.db, "jobs", "ok", SLOT_DIR, job_id)
        with open(os.path.join(job_dir, "stdout")) as f:
            self.assertEqual(f.read(), "hello ok hi there 2015 2015-09-12T20:00:00.000Z\n"
                                       + job_dir + "\n")
        with open(os.path.join(job_dir, "stderr")) as f:
            self.assertEqual(f.read(), "to-stderr\n")
        with open(os.path.join(job_dir, "exit")) as f:
            self.assertEqual(f.read(), "0\n")
        shown = CLUSTER.scontrol("show", "job", job_id).stdout
        self.assertIn("JobName=ok@2015-09-12T20:00Z", shown)

    def test_a_failing_job_is_retried_then_fails(self):
        self.start({"bad.js": workflow("bad", "echo failing >&2\nexit 3", max_retries=1)})
        slot = self.step_until("bad", ["FAILURE"], timeout=90)
        self.assertEqual(slot["retryCount"], 1)
        dirs = self.job_dirs("bad")
        self.assertEqual(len(dirs), 2, dirs)  # the first attempt and its retry
        for d in dirs:
            with open(os.path.join(d, "exit")) as f:
                self.assertEqual(f.read(), "3\n")

    def test_a_kill_cancels_the_job(self):
        self.start({"long.js": workflow("long", "sleep 300")})
        slot = self.step_until("long", ["RUNNING"])
        job_id = slot["externalID"]
        poll(lambda: self.squeue_state(job_id) == "RUNNING", "job %s to run" % job_id)
        reply = self.server.post("/kill?" + urllib.parse.urlencode({"id": "long", "time": SLOT}))
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(self.slot("long")["status"], "KILLED")
        poll(lambda: self.squeue_state(job_id) == "CANCELLED", "job %s to be cancelled" % job_id)

    def test_a_refused_submission_reports_slurms_message(self):
        # A refusal is a failed attempt: with maxRetryCount 1, the retry is refused too.
        self.start({"nowhere.js": workflow("nowhere", "true", {"partition": "nope"},
                                           max_retries=1)})
        slot = self.step_until("nowhere", ["FAILURE"])
        self.assertEqual(slot["retryCount"], 1)
        with open(os.path.join(self.server.db, "state", "nowhere", SLOT_DIR)) as f:
            record = json.load(f)  # the slot record keeps why the attempt failed
        self.assertEqual(record["status"], "FAILURE")
        self.assertIn("Invalid partition name specified", record["message"])
        self.assertEqual(self.job_dirs("nowhere"), [])
        self.assertIn("Invalid partition name specified", self.server.stderr_text())

    def test_a_controller_outage_keeps_slots_running_until_it_is_back(self):
        # --io-timeout bounds every Slurm command (squeue alone retries for ~18 s).
        self.start({"outage.js": workflow("outage", "sleep 4")}, args=["--io-timeout", "5"])
        slot = self.step_until("outage", ["RUNNING"])
        job_id = slot["externalID"]
        poll(lambda: self.squeue_state(job_id) == "RUNNING", "job %s to run" % job_id)
        CLUSTER.stop_daemon("slurmctld")
        try:
            started = time.monotonic()
            reply = self.step(timeout=60)
            self.assertLess(time.monotonic() - started, 30)
            self.assertIn("squeue", reply.body + self.server.stderr_text())
            self.assertEqual(self.slot("outage")["status"], "RUNNING")
            self.assertEqual(self.server.get("/version").status, 200)
        finally:
            CLUSTER.start_slurmctld()
            CLUSTER.wait_idle()
        slot = self.step_until("outage", ["SUCCESS"], timeout=90)
        self.assertEqual(slot["externalID"], job_id)


if __name__ == "__main__":
    unittest.main()
