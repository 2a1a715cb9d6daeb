"""End-to-end tests of datasets (SPEC §14, §16 "Datasets") against the real celos-server with
local commands and files: the derived trigger, announcements, mode new across kill -9, atomic
outputs, statusTrigger, lineage and the load errors."""

import json
import os
import signal
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import CelosServer  # noqa: E402
from e2e_util import poll  # noqa: E402

START = "2015-09-13T00:00Z"
T0 = "2015-09-13T00:00:00.000Z"
T1 = "2015-09-13T01:00:00.000Z"
T2 = "2015-09-13T02:00:00.000Z"
NOW = "2015-09-13T03:30Z"  # slots 00:00, 01:00, 02:00, 03:00 of hourly workflows


def workflow(wid, command, fields, trigger="celos.alwaysTrigger()", schedule="celos.hourlySchedule()"):
    trig = '"trigger": %s,' % trigger if trigger else ""
    return """
importDefaults("datasets");
celos.defineWorkflow({
    "id": %s, "schedule": %s, "schedulingStrategy": celos.serialSchedulingStrategy(),
    %s "externalService": celos.commandExternalService(%s), "startTime": "%s", %s
});
""" % (json.dumps(wid), schedule, trig, json.dumps(command), START, fields)


class DatasetServer(CelosServer):
    def __init__(self, files):
        super().__init__(start=False)
        self.data = os.path.join(self.root, "data")
        os.makedirs(self.data)
        with open(os.path.join(self.defaults, "datasets.js"), "w") as f:
            f.write("""
var RAW = celos.dataset("raw", {"path": "%(d)s/raw/${year}${month}${day}/${hour}"});
var CLEAN = celos.dataset("clean", {"path": "%(d)s/clean/${year}${month}${day}/${hour}"});
var EXT = celos.dataset("ext", {"path": "%(d)s/ext/${year}${month}${day}/${hour}"});
""" % {"d": self.data})
        for name, text in files(self.data).items():
            self.write_workflow(name, text)
        self.start()

    def step(self, time=NOW, ids=None):
        reply = self.post("/scheduler?time=" + time + ("&ids=" + ids if ids else ""))
        assert reply.status == 200, reply
        return reply.json

    def slot(self, wid, time):
        reply = self.get("/slot-state?id=%s&time=%s" % (wid, time))
        return reply.json if reply.status == 200 else {"status": "WAITING"}

    def consumed(self, wid, time):
        """The "consumed" key of the stored slot record (SPEC §16)."""
        day, clock = time.split("T")
        with open(os.path.join(self.db, "state", wid, day, clock)) as f:
            return json.load(f).get("consumed")

    def step_until(self, wid, time, statuses, now=NOW, only=False):
        def done():
            self.step(now, wid if only else None)
            return self.slot(wid, time)["status"] in statuses
        poll(done, "%s@%s to become one of %s" % (wid, time, statuses), timeout=60, interval=0.1)
        return self.slot(wid, time)


IMPORT = 'mkdir -p %(d)s/raw/${year}${month}${day}/${hour} && echo row > %(d)s/raw/${year}${month}${day}/${hour}/part'
CLEAN = ('mkdir -p %(d)s/clean/${year}${month}${day}/${hour} && '
         'ln -s %(d)s/keep %(d)s/clean/${year}${month}${day}/${hour}/link && '
         'cat $CELOS_INPUT_RAW/part > %(d)s/clean/${year}${month}${day}/${hour}/part')


class ChainTest(unittest.TestCase):
    """import -> raw -> clean (derived trigger), a cleanup workflow on FAILURE, lineage."""

    def setUp(self):
        def files(d):
            return {
                "import.js": workflow("import", IMPORT % {"d": d}, '"outputs": [RAW]'),
                "clean.js": workflow("clean", CLEAN % {"d": d},
                                     '"inputs": [RAW], "outputs": [CLEAN]', trigger=None),
                "alert.js": workflow("alert", "true", "",
                                     trigger='celos.statusTrigger("clean", ["FAILURE", "KILLED"])'),
            }
        self.server = DatasetServer(files)

    def tearDown(self):
        self.server.close()

    def test_derived_trigger_waits_for_the_producer_then_runs_on_its_output(self):
        s = self.server
        tree = s.get("/trigger-status?id=clean&time=" + T0).json
        self.assertEqual(tree["type"], "AndTrigger")
        self.assertEqual([n["type"] for n in tree["subStatuses"]], ["DatasetTrigger"])
        self.assertFalse(tree["ready"])
        s.step_until("import", T0, ["SUCCESS"])
        self.assertTrue(os.path.exists(os.path.join(s.data, "raw/20150913/00/_SUCCESS")))
        self.assertTrue(s.get("/trigger-status?id=clean&time=" + T0).json["ready"])
        s.step_until("clean", T0, ["SUCCESS"])
        with open(os.path.join(s.data, "clean/20150913/00/part")) as f:
            self.assertEqual(f.read(), "row\n")
        self.assertTrue(os.path.exists(os.path.join(s.data, "clean/20150913/00/_SUCCESS")))

        listing = s.get("/api/v1/datasets").json["datasets"]
        raw = [d for d in listing if d["id"] == "raw"][0]
        self.assertEqual(raw["producers"], ["import"])
        self.assertEqual(raw["consumers"], ["clean"])
        self.assertEqual(raw["doneFlag"], "_SUCCESS")

        lineage = s.get("/api/v1/lineage?id=clean&time=" + T0).json
        self.assertEqual(lineage["inputs"][0]["dataset"], "raw")
        self.assertEqual(lineage["inputs"][0]["producer"],
                         {"workflow": "import", "time": T0, "status": "SUCCESS"})
        self.assertTrue(lineage["inputs"][0]["present"])
        out = s.get("/api/v1/lineage?id=import&time=" + T0).json["outputs"][0]
        self.assertEqual(out["consumers"], [{"workflow": "clean", "time": T0, "status": "SUCCESS"}])
        self.assertEqual((out["exists"], out["complete"], out["wouldRemove"]), (True, True, False))

    def test_a_failed_attempt_loses_its_incomplete_output_and_triggers_the_cascade(self):
        s = self.server
        # raw 01:00 is there but broken: clean writes half its output (and a symbolic link to
        # data outside the instance) and fails.
        os.makedirs(os.path.join(s.data, "raw/20150913/01"))
        os.makedirs(os.path.join(s.data, "keep"))
        with open(os.path.join(s.data, "keep", "important"), "w") as f:
            f.write("x")
        s.post("/api/v1/datasets/raw/instances?time=" + T1)
        half = os.path.join(s.data, "clean/20150913/01")
        s.step_until("clean", T1, ["FAILURE"])
        self.assertFalse(os.path.exists(half), "incomplete output must be removed")
        self.assertTrue(os.path.exists(os.path.join(s.data, "keep", "important")),
                        "removal must not follow a symbolic link out of the instance")
        s.step_until("alert", T1, ["SUCCESS"])
        self.assertEqual(s.get("/trigger-status?id=alert&time=" + T1).json["type"], "StatusTrigger")
        # Nothing stored counts as WAITING: the alert of 02:00 does not fire for a WAITING slot.
        self.assertFalse(s.get("/trigger-status?id=alert&time=" + T2).json["ready"])


class AnnouncementTest(unittest.TestCase):
    def setUp(self):
        self.server = DatasetServer(lambda d: {
            "use.js": workflow("use", "echo $CELOS_INPUT_EXT > seen", '"inputs": ["ext"]', trigger=None),
        })

    def tearDown(self):
        self.server.close()

    def test_an_announced_instance_is_present_and_announcing_is_idempotent(self):
        s = self.server
        self.assertFalse(s.get("/trigger-status?id=use&time=" + T1).json["ready"])
        for _ in range(2):
            reply = s.post("/api/v1/datasets/ext/instances?time=2015-09-13T01:00Z")
            self.assertEqual(reply.status, 200, reply)
            self.assertEqual(reply.json, {"dataset": "ext", "time": T1, "present": True})
        self.assertTrue(s.get("/trigger-status?id=use&time=" + T1).json["ready"])
        instances = s.get("/api/v1/datasets/ext/instances?start=2015-09-13T00:00Z"
                          "&end=2015-09-13T03:00Z").json["instances"]
        self.assertEqual([i["time"] for i in instances], [T2, T1, T0])  # newest first
        self.assertEqual([(i["present"], i["announced"]) for i in instances],
                         [(False, False), (True, True), (False, False)])
        self.assertEqual(instances[1]["path"], s.data + "/ext/20150913/01")
        self.assertEqual(s.post("/api/v1/datasets/nope/instances?time=" + T1).status, 404)
        self.assertEqual(s.post("/api/v1/datasets/ext/instances").status, 400)
        self.assertEqual(s.post("/api/v1/datasets/ext/instances?time=yesterday").status, 400)
        self.assertEqual(s.post("/api/v1/datasets/ext/instances?time=2015-09-13T01:00:00.500Z")
                         .status, 400)
        self.assertEqual(s.get("/api/v1/datasets/ext/instances?start=2015-09-01T00:00Z"
                               "&end=2015-09-13T00:00Z").status, 400)
        s.step_until("use", T1, ["SUCCESS"])


class ModeNewTest(unittest.TestCase):
    """A daily roll-up of new data only: an instance is never consumed twice, even when the
    server is killed with SIGKILL while a roll-up runs."""

    def setUp(self):
        def files(d):
            return {
                "import.js": workflow("import", IMPORT % {"d": d}, '"outputs": [RAW]'),
                "rollup.js": workflow(
                    "rollup", "echo $CELOS_INPUT_RAW >> %s/rollup.log; echo '${inputs.raw}' > args" % d,
                    '"inputs": [{"dataset": RAW, "mode": "new"}]', trigger=None,
                    schedule='celos.cronSchedule("0 0 */2 * * ?")'),
            }
        self.server = DatasetServer(files)

    def tearDown(self):
        self.server.close()

    def test_each_instance_is_consumed_once_across_a_kill_9(self):
        s = self.server
        s.step_until("import", T0, ["SUCCESS"], now="2015-09-13T00:30Z")
        # rollup 00:00 takes raw 00:00 and is RUNNING: kill -9 the server right then.
        s.step_until("rollup", T0, ["RUNNING", "SUCCESS"], now="2015-09-13T00:30Z")
        self.assertEqual(s.consumed("rollup", T0), {"raw": [T0]})
        s.process.send_signal(signal.SIGKILL)
        s.process.wait()
        s.stderr.close()
        s.start()
        s.step_until("rollup", T0, ["SUCCESS"], now="2015-09-13T00:30Z")
        self.assertEqual(s.consumed("rollup", T0), {"raw": [T0]})
        # 01:00 and 02:00 arrive; rollup 02:00 takes exactly those two.
        # (only import steps meanwhile, so that the roll-up sees both at once)
        s.step_until("import", T1, ["SUCCESS"], now="2015-09-13T02:30Z", only=True)
        s.step_until("import", T2, ["SUCCESS"], now="2015-09-13T02:30Z", only=True)
        s.step_until("rollup", T2, ["SUCCESS"], now="2015-09-13T02:30Z")
        self.assertEqual(s.consumed("rollup", T2), {"raw": [T1, T2]})
        with open(os.path.join(s.data, "rollup.log")) as f:
            lines = f.read().split()
        self.assertEqual(lines, [s.data + "/raw/20150913/00",
                                 s.data + "/raw/20150913/01," + s.data + "/raw/20150913/02"])
        lineage = s.get("/api/v1/lineage?id=rollup&time=" + T2).json
        self.assertEqual([i["time"] for i in lineage["inputs"]], [T1, T2])
        out = s.get("/api/v1/lineage?id=import&time=" + T1).json["outputs"][0]
        self.assertEqual(out["consumers"], [{"workflow": "rollup", "time": T2, "status": "SUCCESS"}])
        # Nothing new: rollup 04:00 is not ready.
        tree = s.get("/trigger-status?id=rollup&time=2015-09-13T04:00Z").json
        self.assertFalse(tree["ready"], tree)


class LoadErrorTest(unittest.TestCase):
    def test_dataset_load_errors_name_their_files(self):
        s = DatasetServer(lambda d: {
            "z.js": 'celos.dataset("raw", {"path": "/elsewhere/${hour}"});',
            "b.js": workflow("b", "true", '"inputs": ["missing"]', trigger=None),
            "c.js": workflow("c", "true", '"outputs": [celos.dataset("flat", {"path": "/flat/x"})]'),
            "d.js": workflow("d", "true", '"inputs": [CLEAN], "outputs": [RAW]', trigger=None)
                    + workflow("e", "true", '"inputs": [RAW], "outputs": [CLEAN]', trigger=None),
        })
        try:
            errors = "\n".join(s.post("/clear-cache").json["errors"])
            self.assertIn("z.js:1: dataset \"raw\" is declared differently", errors)
            self.assertIn("b.js", errors)
            self.assertIn("unknown dataset \"missing\"", errors)
            self.assertIn("c.js", errors)
            self.assertIn("no time variables", errors)
            self.assertIn("add up to 0", errors)
            self.assertEqual(s.get("/workflow-list").json["ids"], ["d"])
        finally:
            s.close()


SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "datasets")


class SampleTest(unittest.TestCase):
    """samples/datasets runs: import -> clean -> hourly report, and the daily roll-up of new
    data only."""

    def test_the_sample_runs(self):
        s = CelosServer(start=False)
        try:
            data = os.path.join(s.root, "data")
            with open(os.path.join(SAMPLE, "defaults", "datasets.js")) as f:
                text = f.read().replace("@DATA@", data).replace("@START_TIME@", "2015-09-13T22:00Z")
            with open(os.path.join(s.defaults, "datasets.js"), "w") as f:
                f.write(text)
            for name in os.listdir(os.path.join(SAMPLE, "workflows")):
                with open(os.path.join(SAMPLE, "workflows", name)) as f:
                    s.write_workflow(name, f.read())
            s.start()
            ds = DatasetServer.__new__(DatasetServer)
            ds.__dict__.update(s.__dict__)
            now = "2015-09-14T00:30Z"
            hours = ["2015-09-13T22:00:00.000Z", "2015-09-13T23:00:00.000Z",
                     "2015-09-14T00:00:00.000Z"]
            for wid in ["clicks-import", "clicks-clean", "clicks-report"]:
                for h in hours:
                    ds.step_until(wid, h, ["SUCCESS"], now=now, only=True)
            with open(os.path.join(data, "report/2015-09-13/2300/report.txt")) as f:
                self.assertEqual(f.read(), "cart 1\nhome 5\n")
            ds.step_until("clicks-rollup", hours[2], ["SUCCESS"], now=now, only=True)
            with open(os.path.join(data, "daily/2015-09-14/rollup.txt")) as f:
                self.assertEqual(f.read(), "cart 3\nhome 15\n")
            with open(os.path.join(data, "daily/2015-09-14/inputs.txt")) as f:
                self.assertEqual(f.read().strip().split(","),
                                 [data + "/clean/2015-09-13/2200", data + "/clean/2015-09-13/2300",
                                  data + "/clean/2015-09-14/0000"])
            self.assertTrue(os.path.exists(os.path.join(data, "daily/2015-09-14/_SUCCESS")))
        finally:
            s.close()


if __name__ == "__main__":
    unittest.main()
