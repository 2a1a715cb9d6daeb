"""celos-ui's operator features end to end (SPEC §13, §16): a real celos-server with tokens, a
failing command workflow stepped to FAILURE at explicit times, celos-ui with its own token, and
headless Chromium clicking a slot for its details, selecting a range, previewing the rerun (dry
run) and confirming it; celos-server's API then says what was rerun. Screenshots are kept in
${CELOS_BINARY_DIR}/test/ui/artifacts (the paths are printed)."""
import hashlib
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

from browser import Browser
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_util import free_port, poll  # noqa: E402 (test/e2e_util.py)

SERVER = os.environ.get("CELOS_SERVER", "")
UI = os.environ.get("CELOS_UI", "")
ARTIFACTS = os.path.join(os.environ.get("CELOS_BINARY_DIR", tempfile.gettempdir()),
                         "test", "ui", "artifacts")

NOW = "2015-09-15T11:30:00.000Z"
HOURS = ["2015-09-15T%02d:00:00.000Z" % h for h in (8, 9, 10, 11)]
TEST_TOKEN, UI_TOKEN = "test-admin-token", "ui-operator-token"

WORKFLOWS = {
    # Every slot prints markup and fails: the details must show it as text.
    "broken.js": """celos.defineWorkflow({id: "wf-broken", startTime: "2015-09-15T08:00Z",
        schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(4),
        trigger: celos.alwaysTrigger(),
        externalService: celos.commandExternalService("echo 'loading <b>input</b>'; echo 'disk full' >&2; exit 3")});""",
    "other.js": """celos.defineWorkflow({id: "other-daily", startTime: "2015-09-15T08:00Z",
        schedule: celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(),
        trigger: celos.orTrigger(), externalService: celos.commandExternalService("true")});""",
}


def request(method, url, token=TEST_TOKEN, timeout=30):
    """(status, body text); HTTP errors are answers too."""
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@unittest.skipUnless(SERVER and UI, "needs CELOS_SERVER and CELOS_UI (run through ctest)")
class CelosUiOperatorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(ARTIFACTS, exist_ok=True)
        cls.root = tempfile.mkdtemp(prefix="celos-ui-operator-")
        cls.processes = []
        try:
            cls._start_server()
            cls._step_until_failed()
            cls._start_ui()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for p in reversed(cls.processes):
            stop(p)
        shutil.rmtree(cls.root, ignore_errors=True)

    @classmethod
    def _start_server(cls):
        dirs = {n: os.path.join(cls.root, n) for n in ("workflows", "defaults", "db", "logs")}
        for d in dirs.values():
            os.makedirs(d, exist_ok=True)
        for name, text in WORKFLOWS.items():
            with open(os.path.join(dirs["workflows"], name), "w") as f:
                f.write(text)
        tokens = os.path.join(cls.root, "tokens.json")
        with open(tokens, "w") as f:
            json.dump({"tokens": [
                {"name": "test", "role": "admin",
                 "sha256": hashlib.sha256(TEST_TOKEN.encode()).hexdigest()},
                {"name": "ui", "role": "operator",
                 "sha256": hashlib.sha256(UI_TOKEN.encode()).hexdigest()}]}, f)
        port = free_port()
        cls.processes.append(subprocess.Popen(
            [SERVER, "--port", str(port), "--workflows", dirs["workflows"], "--defaults",
             dirs["defaults"], "--db", dirs["db"], "--logs", dirs["logs"], "--auth-tokens", tokens],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        cls.celos = "http://127.0.0.1:%d" % port
        poll(lambda: request("GET", cls.celos + "/workflow-list", timeout=2)[0] == 200,
             "celos-server")

    @classmethod
    def slot(cls, slot_time, workflow="wf-broken"):
        status, body = request("GET", "%s/slot-state?id=%s&time=%s" % (
            cls.celos, workflow, urllib.parse.quote(slot_time)))
        return json.loads(body) if status == 200 else None

    @classmethod
    def _step_until_failed(cls):
        def step():
            status, body = request("POST", cls.celos + "/scheduler?time=" + NOW)
            assert status == 200, body
            return all((cls.slot(t) or {}).get("status") == "FAILURE" for t in HOURS)
        poll(step, "the four slots of wf-broken to fail", timeout=90)

    @classmethod
    def _start_ui(cls):
        token_file = os.path.join(cls.root, "ui-token")
        with open(token_file, "w") as f:
            f.write(UI_TOKEN + "\n")
        port = free_port()
        cls.processes.append(subprocess.Popen(
            [UI, "--port", str(port), "--celos", cls.celos, "--celos-token-file", token_file,
             "--hue", "http://hue.example:8888"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        cls.ui = "http://127.0.0.1:%d" % port
        poll(lambda: request("GET", cls.ui + "/nothing-here", None, 2)[0] == 404, "celos-ui")

    def cell(self, slot_time, workflow="wf-broken"):
        return 'tr[data-wf="%s"] td[data-t="%s"]' % (workflow, slot_time)

    def test_bad_refresh_is_a_400_and_the_filter_hides_other_workflows(self):
        status, body = request("GET", self.ui + "/ui?refresh=abc", None)
        self.assertEqual(status, 400)
        self.assertIn("refresh must be", body)
        status, body = request("GET", self.ui + "/ui?time=%s&filter=BROKEN" % NOW, None)
        self.assertEqual(status, 200)
        self.assertIn('data-wf="wf-broken"', body)
        self.assertNotIn('data-wf="other-daily"', body)

    def test_a_day_tile_selects_its_slots_for_a_dry_run(self):
        browser = Browser()
        try:
            browser.navigate(self.ui + "/ui?" + urllib.parse.urlencode(
                {"time": NOW, "zoom": "1440", "filter": "broken"}))
            day = 'tr[data-wf="wf-broken"] td[data-tile="2015-09-15T00:00:00.000Z"]'
            self.assertEqual(browser.evaluate("document.querySelector(%s).textContent"
                                              % json.dumps(day)), "4")
            browser.click(day)
            self.assertEqual(browser.evaluate("document.getElementById('range-start').value"),
                             "2015-09-15T00:00:00.000Z")
            self.assertEqual(browser.evaluate("document.getElementById('range-end').value"),
                             "2015-09-15T11:30:01.000Z")  # the tile, up to the page's time
            self.assertTrue(browser.evaluate("document.querySelector(%s).classList.contains('in-range')"
                                             % json.dumps(day)))
            browser.click("#range-preview")
            browser.wait_for("document.getElementById('range-result').getAttribute('data-state') === 'preview'")
            listed = browser.evaluate("document.querySelectorAll('#range-would li').length")
            self.assertEqual(listed, 4)  # every slot of the day, to rerun or skipped
        finally:
            browser.close()

    def test_the_page_reloads_itself_with_refresh(self):
        browser = Browser()
        try:
            browser.navigate(self.ui + "/ui?" + urllib.parse.urlencode(
                {"time": NOW, "refresh": "5"}))
            self.assertEqual(browser.evaluate("document.getElementById('grid').dataset.refresh"), "5")
            self.assertIn("refresh=5", browser.evaluate("document.getElementById('nav-later').href"))
            browser.evaluate("window.celosMark = 1")
            def reloaded():  # a new document: the mark is gone
                try:
                    return browser.evaluate(
                        "window.celosMark === undefined && !!document.getElementById('grid')")
                except RuntimeError:  # evaluated while the old document went away
                    return False
            poll(reloaded, "the page to reload itself", timeout=30, interval=0.2)
        finally:
            browser.close()

    def test_details_on_click_then_range_preview_and_confirmed_rerun(self):
        browser = Browser()
        try:
            browser.navigate(self.ui + "/ui?" + urllib.parse.urlencode(
                {"time": NOW, "filter": "broken"}))
            self.assertEqual(browser.evaluate("document.querySelectorAll('tr[data-wf]').length"), 1)
            self.assertTrue(browser.evaluate("document.getElementById('details').hidden"))

            browser.click(self.cell(HOURS[0]))  # a plain click: details, not Hue
            browser.wait_for("document.getElementById('details').getAttribute('data-loaded') === %s"
                             % json.dumps("wf-broken@" + HOURS[0]))
            details = os.path.join(ARTIFACTS, "celos-ui-slot-details.png")
            browser.screenshot(details)
            print("screenshot: " + details)
            text = browser.evaluate("document.getElementById('details').innerText")
            self.assertIn("FAILURE", text)
            self.assertIn("History", text)
            self.assertIn("RUNNING", text)  # the history's RUNNING -> FAILURE change
            self.assertIn("disk full", text)  # stderr's tail
            self.assertIn("[ready]", browser.evaluate(
                "document.querySelector('#details pre.trigger').textContent"))
            log = browser.evaluate("document.querySelector('#details pre.log.stdout').textContent")
            self.assertIn("loading <b>input</b>", log)  # shown as text, not markup
            self.assertEqual(browser.evaluate("document.querySelectorAll('#details pre b').length"), 0)
            self.assertTrue(browser.evaluate(
                "document.querySelector('#details a.hue').href.indexOf('http://hue.example:8888/') === 0"))
            self.assertTrue(browser.evaluate("location.href.indexOf('/ui?') > 0"))

            browser.click(self.cell(HOURS[2]), ctrl=True)  # widen the range to 08..10
            self.assertEqual(browser.evaluate("document.getElementById('range-end').value"),
                             "2015-09-15T10:00:01.000Z")
            self.assertEqual(browser.evaluate("document.querySelectorAll('td.in-range').length"), 3)
            browser.click("#range-preview")
            browser.wait_for("document.getElementById('range-result').getAttribute('data-state') === 'preview'")
            would = browser.evaluate(
                "Array.prototype.map.call(document.querySelectorAll('#range-would li.slot'),"
                " function (li) { return li.textContent; })")
            self.assertEqual(len(would), 3, would)
            self.assertTrue(all("FAILURE" in w and "WAITING" in w for w in would), would)
            for t in HOURS:  # a dry run changes nothing
                self.assertEqual(self.slot(t)["status"], "FAILURE", t)
            preview = os.path.join(ARTIFACTS, "celos-ui-range-preview.png")
            browser.screenshot(preview)
            print("screenshot: " + preview)

            browser.click("#range-confirm")
            browser.wait_for("document.getElementById('range-result').getAttribute('data-state') === 'done'")
            self.assertEqual(browser.evaluate("document.querySelector(%s).className"
                                              % json.dumps(self.cell(HOURS[1]))), "slot waiting")
            # The open details of 08:00 are read again and show the rerun.
            browser.wait_for("document.getElementById('details').getAttribute('data-loaded') === %s"
                             " && document.querySelector('#details td.state').textContent === 'WAITING'"
                             % json.dumps("wf-broken@" + HOURS[0]))
            done = os.path.join(ARTIFACTS, "celos-ui-range-rerun.png")
            browser.screenshot(done)
            print("screenshot: " + done)
        finally:
            browser.close()
        self.assertGreater(os.path.getsize(preview), 1000)
        for t in HOURS[:3]:
            self.assertEqual(self.slot(t)["status"], "WAITING", t)
        self.assertEqual(self.slot(HOURS[3])["status"], "FAILURE")  # outside the range
        status, body = request("GET", "%s/api/v1/slot-history?id=wf-broken&time=%s"
                               % (self.celos, urllib.parse.quote(HOURS[1])))
        self.assertEqual(status, 200, body)
        last = json.loads(body)[-1]
        self.assertEqual((last["from"], last["to"]), ("FAILURE", "WAITING"))
        self.assertTrue(last["by"].startswith("api:ui@"), last)  # celos-ui's token


if __name__ == "__main__":
    unittest.main()
