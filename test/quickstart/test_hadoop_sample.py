"""samples/quickstart/hadoop: celos-ci deploys its deployment directory (to a target whose
HDFS side is the local disk), and celos-server loads the deployed workflows without errors."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

SOURCE = os.environ["CELOS_SOURCE_DIR"]
CI = os.environ.get("CELOS_CI", "celos-ci")
SAMPLE = os.path.join(SOURCE, "samples", "quickstart", "hadoop")
sys.path.insert(0, os.path.join(SOURCE, "test", "server"))
from server_process import CelosServer  # noqa: E402

LOCAL_FS = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>file:///</value></property>
</configuration>
"""


class HadoopSampleTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="celos-hadoop-sample-e2e-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.workflows = os.path.join(self.root, "workflows")
        self.defaults = os.path.join(self.root, "defaults")
        self.app = os.path.join(self.root, "app")
        for d in (self.workflows, self.defaults, self.app):
            os.makedirs(d)
        site = os.path.join(self.root, "core-site.xml")
        with open(site, "w") as f:
            f.write(LOCAL_FS)
        self.target = os.path.join(self.root, "target.json")
        with open(self.target, "w") as f:
            json.dump({"hadoop.core-site.xml": "file://" + site,
                       "hadoop.hdfs-site.xml": "file://" + site,
                       "defaults.dir.uri": "file://" + self.defaults,
                       "workflows.dir.uri": "file://" + self.workflows}, f)

    def test_the_example_target_file_names_every_key_celos_ci_needs(self):
        with open(os.path.join(SAMPLE, "target.json")) as f:
            target = json.load(f)
        self.assertEqual(sorted(target), ["defaults.dir.uri", "hadoop.core-site.xml",
                                          "hadoop.hdfs-site.xml", "workflows.dir.uri"])

    def test_the_oozie_workflow_is_well_formed_xml_with_a_start_and_an_end(self):
        root = ElementTree.parse(os.path.join(SAMPLE, "deploy", "hdfs", "workflow.xml")).getroot()
        self.assertTrue(root.tag.endswith("workflow-app"))
        names = [child.tag.split("}")[1] for child in root]
        self.assertEqual(names[0], "start")
        self.assertIn("end", names)

    def test_celos_ci_deploys_the_sample_and_the_server_loads_both_workflows(self):
        result = subprocess.run(
            [CI, "--mode", "deploy", "--workflowName", "wordcount",
             "--deployDir", os.path.join(SAMPLE, "deploy"), "--target", "file://" + self.target,
             "--hdfsRoot", self.app],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.app, "wordcount", "workflow.xml")))

        def read(path):
            with open(path) as f:
                return f.read()
        server = CelosServer(
            workflows={"wordcount.js": read(os.path.join(self.workflows, "wordcount.js"))},
            defaults={"wordcount.js": read(os.path.join(self.defaults, "wordcount.js"))})
        self.addCleanup(server.close)
        loaded = server.post("/clear-cache")
        self.assertEqual(loaded.status, 200, loaded)
        self.assertEqual(loaded.json, {"workflows": 2, "errors": []})
        self.assertEqual(server.get("/workflow-list").json["ids"],
                         ["wordcount-lax", "wordcount-nyc"])
        slots = server.get("/workflow-slots?id=wordcount-nyc&start=2015-09-13T00:00Z"
                           "&end=2015-09-13T03:00Z")
        self.assertEqual(slots.status, 200, slots)
        self.assertEqual([s["status"] for s in slots.json["slots"]], ["WAITING"] * 3)


if __name__ == "__main__":
    unittest.main()
