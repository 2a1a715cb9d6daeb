"""celos-ui and datasets (SPEC §14 "Lineage"): alt-click on a slot highlights the slots that
produced its inputs and those that read its outputs, in headless Chromium against a real
celos-server and celos-ui; /datasets lists producers and consumers."""

import json
import os
import shutil
import sys
import tempfile
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser  # noqa: E402
from test_ui import free_port, poll, request, start_server, start_ui, stop  # noqa: E402

NOW = "2015-09-15T11:30:00.000Z"
T10 = "2015-09-15T10:00:00.000Z"


def workflow(wid, fields):
    return ("""importDefaults("data");
celos.defineWorkflow({id: "%s", startTime: "2015-09-15T09:00Z", schedule: celos.hourlySchedule(),
    schedulingStrategy: celos.serialSchedulingStrategy(),
    externalService: celos.commandExternalService("true"), %s});""" % (wid, fields))


class LineageUiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="celos-ui-lineage-")
        os.makedirs(os.path.join(cls.root, "workflows"))
        os.makedirs(os.path.join(cls.root, "defaults"))
        with open(os.path.join(cls.root, "defaults", "data.js"), "w") as f:
            f.write('var A = celos.dataset("a", {path: "%s/a/${year}${month}${day}${hour}"});\n'
                    'var B = celos.dataset("b", {path: "%s/b/${year}${month}${day}${hour}"});\n'
                    % (cls.root, cls.root))
        files = {
            "producer.js": workflow("producer", 'trigger: celos.alwaysTrigger(), outputs: [A]'),
            "middle.js": workflow("middle", 'inputs: [A], outputs: [B]'),
            "consumer.js": workflow("consumer", 'inputs: [B]'),
            "other.js": workflow("other", 'trigger: celos.alwaysTrigger()'),
        }
        for name, text in files.items():
            with open(os.path.join(cls.root, "workflows", name), "w") as f:
                f.write(text)
        cls.processes = []
        try:
            server, cls.celos = start_server(cls.root, free_port())
            cls.processes.append(server)

            def stepped():
                status, body = request("POST", cls.celos + "/scheduler?time=" + NOW)
                assert status == 200, body
                status, body = request("GET", "%s/slot-state?id=middle&time=%s" % (
                    cls.celos, urllib.parse.quote(T10)))
                return status == 200 and json.loads(body)["status"] == "SUCCESS"
            poll(stepped, "middle@10:00 to succeed", timeout=60)
            ui, cls.ui = start_ui(free_port(), cls.celos)
            cls.processes.append(ui)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for p in reversed(cls.processes):
            stop(p)
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_alt_click_highlights_upstream_and_downstream_slots(self):
        browser = Browser()
        try:
            browser.navigate(self.ui + "/ui?" + urllib.parse.urlencode({"time": NOW}))
            middle = 'tr[data-wf="middle"] td[data-t="%s"]' % T10
            x, y = browser.center_of(middle)
            for kind in ("mousePressed", "mouseReleased"):  # modifiers 1 = Alt
                browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                             clickCount=1, modifiers=1)
            browser.wait_for("document.querySelector(%s).getAttribute('data-lineage') === 'loaded'"
                             % json.dumps(middle))
            marked = browser.evaluate(
                "Array.prototype.map.call(document.querySelectorAll('.upstream, .downstream, "
                ".lineage-selected'), function (td) { return td.parentNode.getAttribute('data-wf')"
                " + '@' + td.getAttribute('data-t') + ' ' + td.className.split(' ').filter(function (c) {"
                " return /upstream|downstream|lineage/.test(c); }).join(' '); }).sort()")
            self.assertEqual(marked, [
                "consumer@%s downstream" % T10,
                "middle@%s lineage-selected" % T10,
                "producer@%s upstream" % T10,
            ])
        finally:
            browser.close()

    def test_datasets_page_lists_producers_and_consumers(self):
        status, body = request("GET", self.ui + "/datasets")
        self.assertEqual(status, 200)
        self.assertIn("<td>producer</td><td>middle</td>", body)
        self.assertIn("<td>middle</td><td>consumer</td>", body)


if __name__ == "__main__":
    unittest.main()
