"""celos-ui end to end: a real celos-server with a few command workflows stepped to known states,
celos-ui in front of it, and headless Chromium reading, clicking and photographing the grid."""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.parse
import urllib.request

from browser import Browser, dump_dom
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_util import free_port, poll  # noqa: E402 (test/e2e_util.py)

SERVER = os.environ.get("CELOS_SERVER", "")
UI = os.environ.get("CELOS_UI", "")
ARTIFACTS = os.path.join(os.environ.get("CELOS_BINARY_DIR", tempfile.gettempdir()),
                         "test", "ui", "artifacts")

NOW = "2015-09-15T11:30:00.000Z"
ESCAPE_ID = "esc<script>alert(1)"

WORKFLOWS = {
    # 08..11 run `true` one after the other.
    "success.js": """celos.defineWorkflow({id: "wf-success", startTime: "2015-09-15T08:00Z",
        schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
        trigger: celos.alwaysTrigger(), externalService: celos.commandExternalService("true")});""",
    # 10 and 11 run `false`: 10 fails first.
    "fail.js": """celos.defineWorkflow({id: "wf-fail", startTime: "2015-09-15T10:00Z",
        schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
        trigger: celos.alwaysTrigger(), externalService: celos.commandExternalService("false")});""",
    # Never ready: an orTrigger of nothing.
    "waiting.js": """celos.defineWorkflow({id: "wf-waiting", startTime: "2015-09-15T09:00Z",
        schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
        trigger: celos.orTrigger(), externalService: celos.commandExternalService("true")});""",
    "escape.js": """celos.defineWorkflow({id: "%s", startTime: "2015-09-15T11:00Z",
        schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
        trigger: celos.alwaysTrigger(), externalService: celos.commandExternalService("true")});"""
    % ESCAPE_ID,
}

CONFIG = {"groups": [{"name": "Main", "workflows": ["wf-success", "wf-fail", "ghost-workflow"]}]}


def request(method, url, timeout=30):
    """(status, body text); HTTP errors are answers too."""
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def start_server(root, port):
    dirs = {name: os.path.join(root, name) for name in ("workflows", "defaults", "db", "logs")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    process = subprocess.Popen(
        [SERVER, "--port", str(port), "--workflows", dirs["workflows"], "--defaults",
         dirs["defaults"], "--db", dirs["db"], "--logs", dirs["logs"]],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    poll(lambda: request("GET", url + "/workflow-list", timeout=2)[0] == 200, "celos-server")
    return process, url


def start_ui(port, celos_url, *extra):
    process = subprocess.Popen([UI, "--port", str(port), "--celos", celos_url, *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    poll(lambda: request("GET", url + "/nothing-here", timeout=2)[0] == 404, "celos-ui")
    return process, url


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Grid(html.parser.HTMLParser):
    """Rows of the grid: {workflow id: {"class": ..., "cells": [(class, data-t, text, href)]}},
    plus group names, day labels, tile labels and the number of script elements."""

    def __init__(self, text):
        super().__init__()
        self.rows, self.groups, self.days, self.tiles = {}, [], [], []
        self.scripts = 0
        self._row = self._cell = self._th = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        elif tag == "tr" and "data-wf" in a:
            self._row = self.rows.setdefault(a["data-wf"], {"class": a.get("class", ""), "cells": []})
        elif tag == "td" and self._row is not None:
            self._cell = [a.get("class", ""), a.get("data-t"), "", None]
        elif tag == "a" and self._cell is not None:
            self._cell[3] = a.get("href")
        elif tag == "th":
            self._th = [a.get("class", ""), ""]

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            if "note" not in self._cell[0]:
                self._row["cells"].append(tuple(self._cell))
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "th" and self._th is not None:
            cls, text = self._th
            if cls == "group":
                self.groups.append(text.strip())
            elif cls == "day":
                self.days.append(text.strip())
            elif cls == "tile":
                self.tiles.append(text.strip())
            self._th = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[2] += data
        if self._th is not None:
            self._th[1] += data

    def cell(self, workflow, slot_time):
        for c in self.rows[workflow]["cells"]:
            if c[1] == slot_time:
                return c
        raise AssertionError("no tile for %s@%s" % (workflow, slot_time))


@unittest.skipUnless(SERVER and UI, "needs CELOS_SERVER and CELOS_UI (run through ctest)")
class CelosUiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(ARTIFACTS, exist_ok=True)
        cls.root = tempfile.mkdtemp(prefix="celos-ui-e2e-")
        os.makedirs(os.path.join(cls.root, "workflows"))
        for name, text in WORKFLOWS.items():
            with open(os.path.join(cls.root, "workflows", name), "w") as f:
                f.write(text)
        cls.config = os.path.join(cls.root, "ui.json")
        with open(cls.config, "w") as f:
            json.dump(CONFIG, f)
        cls.server, cls.celos = start_server(cls.root, free_port())
        cls.processes = [cls.server]
        try:
            cls._step_to_known_states()
            cls.ui_process, cls.ui = start_ui(free_port(), cls.celos, "--config", cls.config,
                                              "--hue", "http://hue.example:8888")
            cls.processes.append(cls.ui_process)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for p in reversed(cls.processes):
            stop(p)
        shutil.rmtree(cls.root, ignore_errors=True)

    @classmethod
    def slot_status(cls, workflow, slot_time):
        status, body = request("GET", "%s/slot-state?id=%s&time=%s" % (
            cls.celos, urllib.parse.quote(workflow, safe=""), urllib.parse.quote(slot_time)))
        return json.loads(body).get("status") if status == 200 else None

    @classmethod
    def _step_to_known_states(cls):
        status, body = request("POST", "%s/pause?id=%s&paused=true" % (
            cls.celos, urllib.parse.quote(ESCAPE_ID, safe="")))
        assert status == 200, body

        def step_until_done():
            status, body = request("POST", cls.celos + "/scheduler?time=" + NOW)
            assert status == 200, body
            return (cls.slot_status("wf-success", "2015-09-15T08:00:00.000Z") == "SUCCESS" and
                    cls.slot_status("wf-fail", "2015-09-15T10:00:00.000Z") == "FAILURE")
        poll(step_until_done, "slots to succeed and fail", timeout=60)

    def page_url(self, **params):
        params.setdefault("time", NOW)
        return self.ui + "/ui?" + urllib.parse.urlencode(params)

    def test_grid_in_chromium_has_groups_rows_states_and_links(self):
        grid = Grid(dump_dom(self.page_url()))
        self.assertEqual(grid.groups, ["Main", "Unlisted workflows"])
        self.assertEqual(grid.tiles[:3], ["1100", "1000", "0900"])
        self.assertEqual(len(grid.tiles), 48)
        self.assertIn("15", grid.days)
        self.assertIn("14", grid.days)
        self.assertEqual(list(grid.rows)[:3], ["wf-success", "wf-fail", "ghost-workflow"])
        self.assertIn("missing", grid.rows["ghost-workflow"]["class"])
        for wf in ("wf-success", "wf-fail", "wf-waiting"):
            self.assertEqual(len(grid.rows[wf]["cells"]), 48, wf)

        success = grid.cell("wf-success", "2015-09-15T08:00:00.000Z")
        self.assertIn("success", success[0].split())
        self.assertEqual(success[2].strip(), "")
        self.assertTrue(success[3].startswith("http://hue.example:8888/list_oozie_workflow/"))
        failed = grid.cell("wf-fail", "2015-09-15T10:00:00.000Z")
        self.assertIn("failure", failed[0].split())
        self.assertEqual(failed[2], "fail")
        for hour in ("09", "10", "11"):
            waiting = grid.cell("wf-waiting", "2015-09-15T%s:00:00.000Z" % hour)
            self.assertIn("waiting", waiting[0].split())
            self.assertEqual(waiting[2], "wait")

    def test_a_workflow_id_with_markup_is_text_and_paused_is_marked(self):
        grid = Grid(dump_dom(self.page_url()))
        self.assertIn(ESCAPE_ID, grid.rows)
        self.assertIn("paused", grid.rows[ESCAPE_ID]["class"])
        self.assertEqual(grid.scripts, 1)  # only the page's own script

    def test_day_zoom_shows_seven_days(self):
        grid = Grid(dump_dom(self.page_url(zoom="1440")))
        self.assertEqual(len(grid.tiles), 7)
        self.assertEqual(grid.days, ["15", "14", "13", "12", "11", "10", "09"])
        self.assertEqual(len(grid.rows["wf-success"]["cells"]), 7)

    def test_bad_zoom_is_400_and_root_redirects(self):
        status, body = request("GET", self.page_url(zoom="abc"))
        self.assertEqual(status, 400)
        self.assertIn("zoom", body)
        with urllib.request.urlopen(self.ui + "/", timeout=30) as r:
            self.assertTrue(r.geturl().endswith("/ui"))
            self.assertEqual(r.status, 200)

    def test_shift_click_reruns_a_slot_and_hover_explains_waiting(self):
        browser = Browser()
        try:
            browser.navigate(self.page_url())
            browser.screenshot(os.path.join(ARTIFACTS, "celos-ui-grid.png"))

            waiting = 'tr[data-wf="wf-waiting"] td[data-t="2015-09-15T11:00:00.000Z"]'
            browser.hover(waiting)
            title = browser.wait_for(
                "(function(){var t=document.querySelector(%s).title;"
                " return t.indexOf('ready]') >= 0 ? t : null;})()" % json.dumps(waiting))
            self.assertIn("[not ready]", title)

            failed = 'tr[data-wf="wf-fail"] td[data-t="2015-09-15T10:00:00.000Z"]'
            browser.click(waiting)  # a plain click on a tile without a Hue link does nothing
            self.assertEqual(browser.dialogs, [])
            browser.click(failed, shift=True)
            browser.wait_for("document.querySelector(%s).getAttribute('data-rerun') === 'done'"
                             % json.dumps(failed))
            self.assertEqual(len(browser.dialogs), 1)
            self.assertIn("wf-fail@2015-09-15T10:00:00.000Z", browser.dialogs[0])
            self.assertEqual(browser.evaluate("document.querySelector(%s).className"
                                              % json.dumps(failed)), "slot waiting")
            self.assertEqual(self.slot_status("wf-fail", "2015-09-15T10:00:00.000Z"), "WAITING")
            browser.screenshot(os.path.join(ARTIFACTS, "celos-ui-after-rerun.png"))
        finally:
            browser.close()
        self.assertGreater(os.path.getsize(os.path.join(ARTIFACTS, "celos-ui-grid.png")), 1000)

    def test_config_changes_are_picked_up(self):
        changed = {"groups": [{"name": "Renamed", "workflows": ["wf-waiting"]}]}
        with open(self.config, "w") as f:
            json.dump(changed, f)
        try:
            status, body = request("GET", self.page_url())
            self.assertEqual(status, 200)
            grid = Grid(body)
            self.assertEqual(grid.groups, ["Renamed", "Unlisted workflows"])
        finally:
            with open(self.config, "w") as f:
                json.dump(CONFIG, f)


@unittest.skipUnless(SERVER and UI, "needs CELOS_SERVER and CELOS_UI (run through ctest)")
class CelosUiServerDownTest(unittest.TestCase):
    def test_server_down_is_a_readable_502_and_the_ui_recovers(self):
        root = tempfile.mkdtemp(prefix="celos-ui-down-")
        celos_port = free_port()
        ui, ui_url = start_ui(free_port(), "http://127.0.0.1:%d" % celos_port)
        server = None
        try:
            status, body = request("GET", ui_url + "/ui")
            self.assertEqual(status, 502)
            self.assertIn("celos-server is unavailable", body)
            self.assertIn("127.0.0.1:%d" % celos_port, body)
            server, _ = start_server(root, celos_port)
            status, body = request("GET", ui_url + "/ui")
            self.assertEqual(status, 200)
            self.assertIn("<table id=\"grid\"", body)
        finally:
            stop(ui)
            if server:
                stop(server)
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
