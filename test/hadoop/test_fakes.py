"""The fake Oozie and WebHDFS servers answer like the examples of the Apache documentation
(Oozie Web Services API v2, WebHDFS REST API), so that tests against them mean something."""

import json
import threading
import os
import shutil
import tempfile
import unittest
import urllib.parse

from fake_process import FakeServer, request

V1 = "/webhdfs/v1"


class WebHdfsFakeTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="celos-webhdfs-")
        self.nn = FakeServer("fake_webhdfs.py", "--root", self.root)

    def tearDown(self):
        self.nn.stop()
        shutil.rmtree(self.root)

    def call(self, method, path, op, body=None, **params):
        query = urllib.parse.urlencode(dict(op=op, **params))
        return request(method, self.nn.url("%s%s?%s" % (V1, path, query)), body)

    def test_the_ledger_counts_requests_in_flight_and_resets(self):
        self.nn.control("/_control/latency?ms=300")
        threads = [threading.Thread(target=self.call, args=("GET", "/", "GETFILESTATUS"))
                   for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = self.nn.control("/_control/stats", "GET")
        self.assertEqual((stats["requests"], stats["latencyMs"]), (3, 300))
        self.assertGreaterEqual(stats["maxInFlight"], 2)
        self.assertEqual(len(self.nn.control("/_control/requests", "GET")), 3)
        self.nn.control("/_control/reset")
        self.assertEqual(self.nn.control("/_control/stats", "GET")["requests"], 0)
        self.assertEqual(self.nn.control("/_control/requests", "GET"), [])

    def test_a_latency_that_is_no_number_is_refused(self):
        status, _, body = request("POST", self.nn.url("/_control/latency?ms=soon"))
        self.assertEqual(status, 400)
        self.assertIn("whole number", json.loads(body)["error"])

    def test_getfilestatus_of_a_directory_is_a_filestatus_object(self):
        status, headers, body = self.call("GET", "/", "GETFILESTATUS")
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("application/json"))
        fs = json.loads(body)["FileStatus"]
        self.assertEqual(fs["type"], "DIRECTORY")
        self.assertEqual(fs["pathSuffix"], "")
        for key in ("accessTime", "blockSize", "group", "length", "modificationTime", "owner",
                    "permission", "replication"):
            self.assertIn(key, fs)

    def test_a_missing_path_is_a_404_file_not_found_remote_exception(self):
        status, _, body = self.call("GET", "/nope/_READY", "GETFILESTATUS")
        self.assertEqual(status, 404)
        self.assertEqual(json.loads(body), {"RemoteException": {
            "exception": "FileNotFoundException",
            "javaClassName": "java.io.FileNotFoundException",
            "message": "File does not exist: /nope/_READY"}})

    def test_mkdirs_answers_a_boolean_and_makes_the_directory(self):
        status, _, body = self.call("PUT", "/a/b", "MKDIRS", permission="755")
        self.assertEqual((status, json.loads(body)), (200, {"boolean": True}))
        self.assertTrue(os.path.isdir(os.path.join(self.root, "a", "b")))

    def test_create_redirects_to_a_data_node_that_takes_the_data(self):
        status, headers, body = self.call("PUT", "/app/workflow.xml", "CREATE", overwrite="true")
        self.assertEqual(status, 307)
        self.assertEqual(body, "")
        location = headers["Location"]
        self.assertTrue(location.startswith("http://127.0.0.1:%d/webhdfs/v1/app/workflow.xml?"
                                            % self.nn.ports[1]), location)
        self.assertIn("op=CREATE", location)
        status, headers, _ = request("PUT", location, "<workflow-app/>",
                                     {"Content-Type": "application/octet-stream"})
        self.assertEqual(status, 201)
        self.assertEqual(headers["Location"], "hdfs://127.0.0.1:8020/app/workflow.xml")
        with open(os.path.join(self.root, "app", "workflow.xml")) as f:
            self.assertEqual(f.read(), "<workflow-app/>")

    def test_create_without_overwrite_refuses_an_existing_file(self):
        os.makedirs(os.path.join(self.root, "d"))
        open(os.path.join(self.root, "d", "f"), "w").close()
        _, headers, _ = self.call("PUT", "/d/f", "CREATE")
        status, _, body = request("PUT", headers["Location"], "x")
        self.assertEqual(status, 403)
        self.assertIn("FileAlreadyExistsException", body)

    def test_open_redirects_to_a_data_node_that_serves_the_bytes(self):
        with open(os.path.join(self.root, "data.txt"), "w") as f:
            f.write("hello")
        status, headers, _ = self.call("GET", "/data.txt", "OPEN")
        self.assertEqual(status, 307)
        status, headers, body = request("GET", headers["Location"])
        self.assertEqual((status, body), (200, "hello"))
        self.assertEqual(headers["Content-Type"], "application/octet-stream")

    def test_liststatus_lists_entries_with_their_suffixes(self):
        os.makedirs(os.path.join(self.root, "dir", "lib"))
        with open(os.path.join(self.root, "dir", "a.patch"), "w") as f:
            f.write("x" * 10)
        status, _, body = self.call("GET", "/dir", "LISTSTATUS")
        self.assertEqual(status, 200)
        entries = json.loads(body)["FileStatuses"]["FileStatus"]
        self.assertEqual([(e["pathSuffix"], e["type"], e["length"]) for e in entries],
                         [("a.patch", "FILE", 10), ("lib", "DIRECTORY", 0)])

    def test_rename_answers_true_then_false_when_the_source_is_gone(self):
        os.makedirs(os.path.join(self.root, "x"))
        status, _, body = self.call("PUT", "/x", "RENAME", destination="/y")
        self.assertEqual((status, json.loads(body)), (200, {"boolean": True}))
        self.assertTrue(os.path.isdir(os.path.join(self.root, "y")))
        _, _, body = self.call("PUT", "/x", "RENAME", destination="/z")
        self.assertEqual(json.loads(body), {"boolean": False})

    def test_delete_needs_recursive_for_a_non_empty_directory(self):
        os.makedirs(os.path.join(self.root, "t", "u"))
        status, _, body = self.call("DELETE", "/t", "DELETE")
        self.assertEqual(status, 403)
        self.assertIn("PathIsNotEmptyDirectoryException", body)
        status, _, body = self.call("DELETE", "/t", "DELETE", recursive="true")
        self.assertEqual((status, json.loads(body)), (200, {"boolean": True}))
        self.assertFalse(os.path.exists(os.path.join(self.root, "t")))
        _, _, body = self.call("DELETE", "/t", "DELETE", recursive="true")
        self.assertEqual(json.loads(body), {"boolean": False})

    def test_an_unknown_op_is_a_400_illegal_argument(self):
        status, _, body = self.call("GET", "/", "FROBNICATE")
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["RemoteException"]["exception"],
                         "IllegalArgumentException")

    def test_a_standby_name_node_answers_403_standby_exception(self):
        standby = FakeServer("fake_webhdfs.py", "--root", self.root, "--standby")
        try:
            status, _, body = request("GET", standby.url(V1 + "/?op=GETFILESTATUS"))
            self.assertEqual(status, 403)
            exc = json.loads(body)["RemoteException"]
            self.assertEqual(exc["exception"], "StandbyException")
            self.assertEqual(exc["javaClassName"], "org.apache.hadoop.ipc.StandbyException")
            self.assertIn("Operation category READ is not supported in state standby",
                          exc["message"])
            standby.control("/_control/state?standby=false")
            status, _, _ = request("GET", standby.url(V1 + "/?op=GETFILESTATUS"))
            self.assertEqual(status, 200)
        finally:
            standby.stop()

    def test_requests_are_recorded_with_their_user(self):
        self.call("GET", "/", "GETFILESTATUS", **{"user.name": "celos"})
        recorded = self.nn.control("/_control/requests", "GET")
        self.assertEqual(len(recorded), 1)
        self.assertEqual(recorded[0]["op"], "GETFILESTATUS")
        self.assertEqual(recorded[0]["query"]["user.name"], "celos")


CONFIG = ("<configuration>"
          "<property><name>oozie.wf.application.path</name><value>/wc/workflow.xml</value></property>"
          "<property><name>user.name</name><value>celos</value></property>"
          "<property><name>tricky</name><value>a &lt;b&gt; &amp; c</value></property>"
          "</configuration>")
XML = {"Content-Type": "application/xml;charset=UTF-8"}


class OozieFakeTest(unittest.TestCase):
    def setUp(self):
        self.oozie = FakeServer("fake_oozie.py")

    def tearDown(self):
        self.oozie.stop()

    def submit(self, config=CONFIG, query=""):
        return request("POST", self.oozie.url("/oozie/v2/jobs" + query), config, XML)

    def info(self, job_id):
        status, _, body = request("GET", self.oozie.url("/oozie/v2/job/%s?show=info" % job_id))
        self.assertEqual(status, 200)
        return json.loads(body)

    def test_submit_answers_201_with_the_job_id_and_the_job_is_prep(self):
        status, headers, body = self.submit()
        self.assertEqual(status, 201)
        self.assertTrue(headers["Content-Type"].startswith("application/json"))
        job_id = json.loads(body)["id"]
        self.assertRegex(job_id, r"^\d{7}-\d{15}-oozie-oozi-W$")
        info = self.info(job_id)
        self.assertEqual(info["status"], "PREP")
        self.assertEqual(info["id"], job_id)
        self.assertEqual(info["appPath"], "/wc/workflow.xml")
        self.assertEqual(info["user"], "celos")
        for key in ("appName", "conf", "createdTime", "startTime", "endTime", "run", "actions",
                    "consoleUrl", "externalId"):
            self.assertIn(key, info)

    def test_the_submitted_configuration_is_recorded_decoded(self):
        job_id = json.loads(self.submit()[2])["id"]
        jobs = self.oozie.control("/_control/jobs", "GET")
        self.assertEqual(jobs[job_id]["properties"]["tricky"], "a <b> & c")
        recorded = self.oozie.control("/_control/requests", "GET")
        self.assertEqual(recorded[0]["content_type"], "application/xml;charset=UTF-8")
        self.assertEqual(recorded[0]["body"], CONFIG)

    def test_start_runs_a_prep_job_and_kill_kills_it(self):
        job_id = json.loads(self.submit()[2])["id"]
        status, _, _ = request("PUT", self.oozie.url("/oozie/v2/job/%s?action=start" % job_id))
        self.assertEqual(status, 200)
        self.assertEqual(self.info(job_id)["status"], "RUNNING")
        status, _, _ = request("PUT", self.oozie.url("/oozie/v2/job/%s?action=kill" % job_id))
        self.assertEqual(status, 200)
        self.assertEqual(self.info(job_id)["status"], "KILLED")

    def test_killing_an_ended_job_is_an_error_with_oozie_headers(self):
        job_id = json.loads(self.submit()[2])["id"]
        self.oozie.control("/_control/status?id=%s&status=SUCCEEDED" % job_id)
        status, headers, _ = request("PUT", self.oozie.url("/oozie/v2/job/%s?action=kill" % job_id))
        self.assertEqual(status, 400)
        self.assertEqual(headers["oozie-error-code"], "E0725")

    def test_status_can_be_scripted_per_job(self):
        first = json.loads(self.submit()[2])["id"]
        second = json.loads(self.submit()[2])["id"]
        self.oozie.control("/_control/status?id=%s&status=FAILED" % first)
        self.assertEqual(self.info(first)["status"], "FAILED")
        self.assertEqual(self.info(second)["status"], "PREP")

    def test_an_unknown_job_is_a_400_with_error_headers(self):
        status, headers, _ = request("GET", self.oozie.url("/oozie/v2/job/0000009-x-oozie-oozi-W?show=info"))
        self.assertEqual(status, 400)
        self.assertEqual(headers["oozie-error-code"], "E0604")
        self.assertIn("Job does not exist", headers["oozie-error-message"])

    def test_a_submission_without_application_path_is_refused(self):
        status, headers, _ = self.submit(
            "<configuration><property><name>user.name</name><value>u</value></property>"
            "</configuration>")
        self.assertEqual(status, 400)
        self.assertEqual(headers["oozie-error-code"], "E0405")

    def test_a_submission_that_is_not_xml_is_refused(self):
        status, headers, _ = request("POST", self.oozie.url("/oozie/v2/jobs"), "{}",
                                     {"Content-Type": "application/json"})
        self.assertEqual(status, 400)
        self.assertEqual(headers["oozie-error-code"], "E0300")

    def test_the_job_list_filters_by_id_and_pages(self):
        ids = [json.loads(self.submit()[2])["id"] for _ in range(3)]
        self.oozie.control("/_control/status?id=%s&status=SUCCEEDED" % ids[2])
        flt = urllib.parse.quote("id=%s;id=%s" % (ids[0], ids[2]))
        status, _, body = request("GET", self.oozie.url(
            "/oozie/v2/jobs?jobtype=wf&filter=%s&offset=1&len=1" % flt))
        self.assertEqual(status, 200)
        page = json.loads(body)
        self.assertEqual((page["total"], page["offset"], page["len"]), (2, 1, 1))
        self.assertEqual([w["id"] for w in page["workflows"]], [ids[0]])
        status, _, body = request("GET", self.oozie.url(
            "/oozie/v2/jobs?jobtype=wf&filter=%s&offset=2&len=1" % flt))
        self.assertEqual([(w["id"], w["status"]) for w in json.loads(body)["workflows"]],
                         [(ids[2], "SUCCEEDED")])
        status, headers, _ = request("GET", self.oozie.url("/oozie/v2/jobs?filter=colour%3Dred"))
        self.assertEqual((status, headers["oozie-error-code"]), (400, "E0420"))

    def test_latency_delays_answers_that_overlap(self):
        self.oozie.control("/_control/latency?ms=300")
        self.oozie.control("/_control/reset")
        threads = [threading.Thread(target=self.submit) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = self.oozie.control("/_control/stats", "GET")
        self.assertEqual(stats["requests"], 4)
        self.assertEqual(stats["latencyMs"], 300)
        self.assertGreaterEqual(stats["maxInFlight"], 2)

    def test_jobs_survive_a_restart_with_a_state_file(self):
        state_dir = tempfile.mkdtemp(prefix="celos-oozie-")
        try:
            oozie = FakeServer("fake_oozie.py", "--state", os.path.join(state_dir, "jobs.json"))
            status, _, body = request("POST", oozie.url("/oozie/v2/jobs"), CONFIG, XML)
            job_id = json.loads(body)["id"]
            oozie.stop()
            oozie.start()
            status, _, body = request("GET", oozie.url("/oozie/v2/job/%s?show=info" % job_id))
            oozie.stop()
            self.assertEqual((status, json.loads(body)["status"]), (200, "PREP"))
        finally:
            shutil.rmtree(state_dir)


if __name__ == "__main__":
    unittest.main()
