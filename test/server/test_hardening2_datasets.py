"""Issue 33 (Hardening II), datasets, against the real celos-server with local commands:

- 10,000 announced instances: the listing and lineage answer (one ranged read each; before,
  a day directory was listed per instance and a listing took 28-133 s), the listing is capped
  and says so;
- 10,000 new instances for one slot: the job runs and receives every path (before: 480 KB in
  one environment variable, "Argument list too long");
- mode new: a slot whose instances went to an earlier slot waits instead of running with none;
- an announcement whose path another announced instance has is refused (400)."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import CelosServer  # noqa: E402
from e2e_util import poll, post_all  # noqa: E402

FIRST = "2015-09-06T00:00Z"      # the first announced instance; then one a minute
COUNT = 10000                    # up to 2015-09-12T22:39Z
SLOT = "2015-09-12T23:00:00.000Z"  # the daily consumer's slot that sees all of them
NOW = "2015-09-12T23:30Z"


def minute(i):
    """The i-th announced instance time, 2015-09-06T00:00Z + i minutes."""
    day, rest = divmod(i, 24 * 60)
    return "2015-09-%02dT%02d:%02dZ" % (6 + day, rest // 60, rest % 60)


class DatasetsServer(CelosServer):
    def __init__(self, workflows):
        super().__init__(start=False)
        self.data = os.path.join(self.root, "data")
        os.makedirs(self.data)
        with open(os.path.join(self.defaults, "datasets.js"), "w") as f:
            f.write("""
var EXT = celos.dataset("ext", {"path": "%(d)s/ext/${year}${month}${day}/${hour}${minute}"});
var DAY = celos.dataset("day", {"path": "%(d)s/day/${year}${month}${day}"});
""" % {"d": self.data})
        for name, text in workflows(self.data).items():
            self.write_workflow(name, text)
        self.start()

    def announce_all(self, dataset, times):
        """POSTs the announcements over 128 connections at once: the server stores the ones
        that wait together in one durable write (one at a time, 10,000 took 100 s of fsyncs)."""
        refused = post_all(self.port, ["/api/v1/datasets/%s/instances?time=%s" % (dataset, t)
                                       for t in times])
        assert not refused, refused[:3]

    def step(self, time):
        reply = self.post("/scheduler?time=" + time, timeout=120)
        assert reply.status == 200, reply
        return reply.json

    def slot(self, wid, time):
        reply = self.get("/slot-state?id=%s&time=%s" % (wid, time))
        return reply.json if reply.status == 200 else {"status": "WAITING"}

    def step_until(self, wid, time, statuses, now):
        def done():
            self.step(now)
            return self.slot(wid, time)["status"] in statuses
        poll(done, "%s@%s to become one of %s" % (wid, time, statuses), timeout=120, interval=0.2)
        return self.slot(wid, time)


def workflow(wid, command, schedule, start, inputs):
    return """
importDefaults("datasets");
celos.defineWorkflow({
    "id": %s, "schedule": %s, "schedulingStrategy": celos.serialSchedulingStrategy(1),
    "inputs": %s, "externalService": celos.commandExternalService(%s), "startTime": %s
});
""" % (json.dumps(wid), schedule, inputs, json.dumps(command), json.dumps(start))


# The job records what it was handed: the variable, the number of lines of the list file and
# the list itself.
BULK = ('printf "%%s" "$CELOS_INPUT_EXT" | head -c 1 > %(d)s/first && '
        'wc -l < "$CELOS_INPUT_EXT_FILE" > %(d)s/count && cp ${inputs.ext.file} %(d)s/list')


class TenThousandInstancesTest(unittest.TestCase):
    """One server, 10,000 minutely instances announced through the API once for all tests."""

    @classmethod
    def setUpClass(cls):
        cls.server = DatasetsServer(lambda d: {
            # Daily at 23:00; minInstances 10,000: only the slot after the last instance runs.
            "bulk.js": workflow("bulk", BULK % {"d": d}, 'celos.cronSchedule("0 0 23 * * ?")',
                                FIRST, '[{"dataset": EXT, "mode": "new", "minInstances": %d}]'
                                % COUNT),
        })
        cls.server.announce_all("ext", [minute(i) for i in range(COUNT)])

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_the_listing_answers_capped_newest_first_and_pages(self):
        s = self.server
        target = "/api/v1/datasets/ext/instances?start=2015-09-06T00:00Z&end=2015-09-13T00:00Z"
        page = s.get(target).json
        self.assertEqual(len(page["instances"]), 1000)
        self.assertTrue(page["truncated"])
        # Newest first: the consumer's 23:00 slot (not announced), then the last instance.
        self.assertEqual(page["instances"][0]["time"], SLOT)
        self.assertFalse(page["instances"][0]["present"])
        self.assertEqual(page["instances"][1]["time"], "2015-09-12T22:39:00.000Z")
        self.assertTrue(page["instances"][1]["announced"])
        self.assertEqual(page["next"], page["instances"][-1]["time"])
        everything = s.get(target + "&limit=10000").json
        self.assertEqual(len(everything["instances"]), 10000)
        self.assertTrue(everything["truncated"])  # 10,000 announced + the 23:00 slot
        rest = s.get("/api/v1/datasets/ext/instances?start=2015-09-06T00:00Z&end="
                     + everything["next"] + "&limit=10000").json
        self.assertEqual([i["time"] for i in rest["instances"]], ["2015-09-06T00:00:00.000Z"])
        self.assertFalse(rest["truncated"])
        self.assertNotIn("next", rest)
        self.assertEqual(s.get(target + "&limit=0").status, 400)

    def test_the_slot_runs_with_all_10000_paths_and_lineage_lists_them(self):
        s = self.server
        lineage = s.get("/api/v1/lineage?id=bulk&time=" + SLOT).json
        self.assertEqual(len(lineage["inputs"]), COUNT)  # the candidates, before it ran
        state = s.step_until("bulk", SLOT, ["SUCCESS", "FAILURE"], NOW)
        self.assertEqual(state["status"], "SUCCESS", s.stderr_text()[-3000:])
        with open(os.path.join(s.data, "first")) as f:
            self.assertEqual(f.read(), "@")  # too long for the environment: the file's name
        with open(os.path.join(s.data, "count")) as f:
            self.assertEqual(int(f.read()), COUNT)
        with open(os.path.join(s.data, "list")) as f:
            paths = f.read().split("\n")
        expected = [s.data + "/ext/" + minute(i).replace("-", "")[:8] + "/"
                    + minute(i)[11:13] + minute(i)[14:16] for i in range(COUNT)]
        self.assertEqual(paths, expected + [""])
        # Earlier slots saw fewer than 10,000 and never ran.
        self.assertEqual(s.slot("bulk", "2015-09-11T23:00:00.000Z")["status"], "WAITING")
        lineage = s.get("/api/v1/lineage?id=bulk&time=" + SLOT).json
        self.assertEqual(len(lineage["inputs"]), COUNT)  # the stored set, after
        self.assertEqual(lineage["inputs"][-1]["path"], expected[-1])


class ModeNewMinInstancesTest(unittest.TestCase):
    """Issue 33 point 5: one announced instance, a minutely consumer with serial(1): the three
    slots are READY for it, one runs with it, the other two wait (they used to run with none)."""

    def setUp(self):
        self.server = DatasetsServer(lambda d: {
            "use.js": workflow("use", 'echo "$CELOS_INPUT_EXT" >> %s/runs' % d,
                               'celos.cronSchedule("0 * * * * ?")', "2015-09-13T01:00Z",
                               '[{"dataset": EXT, "mode": "new"}]'),
        })

    def tearDown(self):
        self.server.close()

    def test_slots_without_new_data_wait(self):
        s = self.server
        s.announce_all("ext", ["2015-09-13T01:00Z"])
        now = "2015-09-13T01:02:30Z"
        s.step(now)
        slots = ["2015-09-13T01:0%d:00.000Z" % m for m in range(3)]
        self.assertEqual([s.slot("use", t)["status"] for t in slots], ["READY"] * 3)
        s.step_until("use", slots[0], ["SUCCESS"], now)

        def settled():
            s.step(now)
            return all(s.slot("use", t)["status"] not in ("READY", "RUNNING") for t in slots)
        poll(settled, "the slots to settle", timeout=60, interval=0.2)
        self.assertEqual([s.slot("use", t)["status"] for t in slots],
                         ["SUCCESS", "WAITING", "WAITING"])
        with open(os.path.join(s.data, "runs")) as f:
            self.assertEqual(f.read(), s.data + "/ext/20150913/0100\n")  # one run, with the data
        waiting = s.slot("use", slots[1])
        self.assertIn("0 new instances of dataset ext", waiting.get("message", ""), waiting)


class IndistinguishableAnnouncementTest(unittest.TestCase):
    def setUp(self):
        self.server = DatasetsServer(lambda d: {
            "daily.js": workflow("daily", "true", 'celos.cronSchedule("0 0 0 * * ?")', "2015-09-13T00:00Z",
                                 "[DAY]"),
        })

    def tearDown(self):
        self.server.close()

    def test_a_second_time_with_the_same_path_is_refused(self):
        s = self.server
        first = s.post("/api/v1/datasets/day/instances?time=2015-09-13T01:00Z")
        self.assertEqual(first.status, 200, first)
        self.assertEqual(s.post("/api/v1/datasets/day/instances?time=2015-09-13T01:00Z").status,
                         200)  # idempotent
        second = s.post("/api/v1/datasets/day/instances?time=2015-09-13T02:00Z")
        self.assertEqual(second.status, 400, second)
        self.assertIn(s.data + "/day/20150913", second.json["error"])
        self.assertIn("does not tell them apart", second.json["error"])
        self.assertEqual(s.post("/api/v1/datasets/day/instances?time=2015-09-14T02:00Z").status,
                         200)
        listed = s.get("/api/v1/datasets/day/instances?start=2015-09-13T00:00Z"
                       "&end=2015-09-15T00:00Z").json["instances"]
        self.assertEqual([i["time"] for i in listed if i["announced"]],
                         ["2015-09-14T02:00:00.000Z", "2015-09-13T01:00:00.000Z"])


if __name__ == "__main__":
    unittest.main()
