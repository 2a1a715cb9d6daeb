"""End-to-end test of schedules in local time (issue 26) against the real celos-server: a daily
06:00 Europe/Paris workflow runs at 04:00Z in summer and 05:00Z in winter (explicit ?time=
steps across the spring change), its job sees its local time, the schedule preview shows the
DST rule and the lint, /version names the tzdata, and an unknown zone is a load error naming
the file, the line and the field."""

import glob
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from server_process import ServerPerTest, poll  # noqa: E402


def paris_js(wid, expr, options, command="true", start="2026-03-26T00:00Z"):
    return """
celos.defineWorkflow({
    "id": "%s",
    "schedule": celos.cronSchedule("%s", %s),
    "schedulingStrategy": celos.serialSchedulingStrategy(3),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("%s"),
    "startTime": "%s"
});
""" % (wid, expr, options, command, start)


DAILY = paris_js("daily", "0 0 6 * * ?", "{timeZone: 'Europe/Paris'}",
                 command="echo ${local.year}-${local.month}-${local.day}T${local.hour}:"
                         "${local.minute}${local.offset} ${local.timeZone} > local.txt")
GAP = paris_js("gap", "0 30 2 * * ?", "{timeZone: 'Europe/Paris'}")
BAD = "\n\ncelos.cronSchedule('0 0 6 * * ?', {timeZone: 'Europe/Pariss'});\n"


class TimeZoneTest(ServerPerTest):

    def step(self, time):
        reply = self.server.post("/api/v1/scheduler?time=" + time)
        self.assertEqual(reply.status, 200, reply)
        return reply.json

    def slots(self, wid, start, end):
        reply = self.server.get("/api/v1/workflow-slots?id=%s&start=%s&end=%s" % (wid, start, end))
        self.assertEqual(reply.status, 200, reply)
        return {s["time"]: s["status"] for s in reply.json["slots"]}

    def test_daily_six_o_clock_in_paris_runs_at_four_z_in_summer_and_five_z_in_winter(self):
        self.start({"daily.js": DAILY})
        # Sunday 2026-03-29 is the spring change: the slot before it at 05:00Z, on it at 04:00Z.
        self.step("2026-03-29T03:59Z")
        self.assertEqual(self.slots("daily", "2026-03-26T00:00Z", "2026-03-29T03:59Z"),
                         {"2026-03-26T05:00:00.000Z": "READY", "2026-03-27T05:00:00.000Z": "READY",
                          "2026-03-28T05:00:00.000Z": "READY"})
        self.assertEqual(self.server.get(
            "/api/v1/slot-state?id=daily&time=2026-03-29T04:00Z").status, 404)
        self.step("2026-03-29T04:00:01Z")
        slots = self.slots("daily", "2026-03-26T00:00Z", "2026-03-29T04:00:01Z")
        self.assertEqual(sorted(slots), ["2026-03-26T05:00:00.000Z", "2026-03-27T05:00:00.000Z",
                                         "2026-03-28T05:00:00.000Z", "2026-03-29T04:00:00.000Z"])
        self.assertEqual(slots["2026-03-29T04:00:00.000Z"], "READY")

        def all_done():
            self.step("2026-03-29T04:00:01Z")
            states = self.slots("daily", "2026-03-26T00:00Z", "2026-03-30T00:00Z")
            return all(s == "SUCCESS" for s in states.values())
        poll(all_done, "the four slots to succeed", timeout=120, interval=0.3)
        outputs = []
        for path in glob.glob(os.path.join(self.server.db, "jobs", "daily", "**", "local.txt"),
                              recursive=True):
            with open(path) as f:
                outputs.append(f.read().strip())
        self.assertIn("2026-03-28T06:00+01:00 Europe/Paris", outputs)
        self.assertIn("2026-03-29T06:00+02:00 Europe/Paris", outputs)
        state = self.server.get("/api/v1/slot-state?id=daily&time=2026-03-29T04:00Z").json
        self.assertEqual(state["timeZone"], "Europe/Paris")
        self.assertEqual(state["local"], "2026-03-29T06:00:00+02:00")

        # Winter again after the autumn change, in the preview.
        preview = self.server.get("/api/v1/schedule-preview?id=daily"
                                  "&start=2026-10-24T00:00Z&end=2026-10-27T00:00Z").json
        self.assertEqual([s["time"] for s in preview["slots"]],
                         ["2026-10-24T04:00:00.000Z", "2026-10-25T05:00:00.000Z",
                          "2026-10-26T05:00:00.000Z"])
        self.assertEqual(preview["warnings"], [])

    def test_preview_names_the_rule_and_warns_of_a_fixed_time_in_a_transition(self):
        self.start({"gap.js": GAP})
        reply = self.server.get("/api/v1/schedule-preview?id=gap"
                                "&start=2026-03-28T00:00Z&end=2026-03-30T00:00Z")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["timeZone"], "Europe/Paris")
        self.assertEqual(reply.json["slots"][1],
                         {"time": "2026-03-29T01:30:00.000Z",
                          "local": "2026-03-29T03:30:00+02:00", "rule": "shift"})
        self.assertEqual(len(reply.json["warnings"]), 1, reply.json)
        self.assertIn("does not exist", reply.json["warnings"][0])
        too_many = self.server.get("/api/v1/schedule-preview?id=gap"
                                   "&start=2000-01-01T00:00Z&end=2040-01-01T00:00Z")
        self.assertEqual(too_many.status, 400, too_many)
        version = self.server.get("/api/v1/version").json
        self.assertRegex(version["tzdata"], r"^\d{4}[a-z]$")

    def test_an_unknown_zone_is_a_load_error_naming_file_line_and_field(self):
        self.start({"daily.js": DAILY, "bad.js": BAD})
        reply = self.server.post("/api/v1/clear-cache")
        self.assertEqual(reply.status, 200, reply)
        errors = [e for e in reply.json["errors"] if "bad.js" in e]
        self.assertEqual(len(errors), 1, reply.json)
        self.assertTrue(errors[0].startswith("bad.js:3: "), errors[0])
        self.assertIn('field "timeZone": unknown time zone "Europe/Pariss"', errors[0])
        self.assertEqual(reply.json["workflows"], 1)


if __name__ == "__main__":
    unittest.main()
