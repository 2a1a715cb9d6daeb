#!/usr/bin/env python3
"""A fake Apache Oozie server speaking the workflow part of the Oozie Web Services API v2,
written from the Oozie documentation: job submission (POST <oozie>/v2/jobs with an XML
<configuration>, 201 {"id": ...}), PUT <oozie>/v2/job/<id>?action=start|kill,
GET <oozie>/v2/job/<id>?show=info, the job list GET <oozie>/v2/jobs?jobtype=wf&filter=...
&offset=N&len=N (filters id/status/name/user: AND across names, OR within a name), and errors
carried in the oozie-error-code / oozie-error-message headers.

    fake_oozie.py --port 0 [--state FILE] [--latency-ms N]

--latency-ms delays every API answer by N ms, as a real Oozie's round trip; requests overlap
as on a real server (connections are served concurrently, fake_http.py), and the fake records
how many were in flight at most.

With --state, jobs are kept in FILE, so a restarted fake still knows them (like Oozie's
database). Prints the bound port on the first line of stdout. Serves under any prefix (/oozie/v2/...).
Control endpoints (not part of Oozie):
    POST /_control/status?id=<job>&status=<STATUS>   script a job's status (e.g. SUCCEEDED)
    POST /_control/status?status=<STATUS>            ... of every job not yet ended
    POST /_control/start-status?status=<STATUS>      status a job gets when started (RUNNING)
    GET  /_control/jobs                              {id: {"status", "properties", ...}}
    GET  /_control/requests                          the API requests received (JSON list)
    POST /_control/reset                             forget requests (jobs stay)
    POST /_control/latency?ms=N                      change the latency
    GET  /_control/stats                             {"requests", "maxInFlight", "latencyMs"}
    GET  /_control/notifications                     the job notifications sent (JSON list)

Job notifications as Oozie sends them: a job whose configuration has
oozie.wf.workflow.notification.url gets a GET of that URL, with $jobId and $status replaced,
each time its status changes (start, kill, a scripted status), from a thread of its own; the
answers are recorded.
"""

import argparse
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from email.utils import formatdate

import fake_http

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fake_ledger import Ledger, LedgerRequests  # noqa: E402 (test/fake_ledger.py)

ENDED = {"SUCCEEDED", "KILLED", "FAILED"}
NOTIFICATION_URL = "oozie.wf.workflow.notification.url"
KILLABLE = {"PREP", "RUNNING", "SUSPENDED"}


class State(Ledger):
    def __init__(self, path=None):
        super().__init__()
        self.jobs = {}
        self.next_id = 1
        self.start_status = "RUNNING"
        self.notifications = []  # {"url", "status"}: what the notification URLs answered
        self.stamp = time.strftime("%y%m%d%H%M%S", time.gmtime()) + "000"
        self.path = path
        if path and os.path.exists(path):
            with open(path) as f:
                saved = json.load(f)
            self.jobs, self.next_id, self.stamp = saved["jobs"], saved["next_id"], saved["stamp"]

    def save(self):
        """Called with the lock held after every change of a job."""
        if not self.path:
            return
        with open(self.path + ".tmp", "w") as f:
            json.dump({"jobs": self.jobs, "next_id": self.next_id, "stamp": self.stamp}, f)
        os.replace(self.path + ".tmp", self.path)


def http_date():
    return formatdate(usegmt=True)


def notify(state, job):
    """Oozie's workflow job notification: a GET of the job's notification URL, off the request
    thread (the job's change is not held up by the receiver)."""
    template = job["properties"].get(NOTIFICATION_URL)
    if not template:
        return
    url = template.replace("$jobId", urllib.parse.quote(job["id"])).replace(
        "$status", urllib.parse.quote(job["status"]))

    def send():
        try:
            with urllib.request.urlopen(url, timeout=10) as res:
                status = res.status
        except urllib.error.HTTPError as e:
            status = e.code
        except OSError as e:
            status = str(e)
        with state.lock:
            state.notifications.append({"url": url, "status": status})
    threading.Thread(target=send, daemon=True).start()


class OozieError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class Handler(LedgerRequests, fake_http.Handler):
    server_version = "Apache-Coyote/1.1"
    state = None

    def send(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_answer(status, data, body is not None and "application/json;charset=UTF-8",
                         headers)

    def respond(self):
        if not self.counted:
            return self.control(self.url.path, self.query)
        if self.command not in ("GET", "POST", "PUT"):
            return self.send(501, {"error": "unsupported method " + self.command})
        self.serve(self.url, self.query, self.body)

    def serve(self, url, query, body):
        self.state.record({
            "method": self.command, "path": url.path, "query": query,
            "content_type": self.headers.get("Content-Type"),
            "body": body.decode("utf-8", "replace")})
        try:
            if url.path.endswith("/v2/jobs") and self.command == "POST":
                return self.submit(query, body)
            if url.path.endswith("/v2/jobs") and self.command == "GET":
                return self.list_jobs(query)
            marker = "/v2/job/"
            if marker in url.path:
                job_id = urllib.parse.unquote(url.path.split(marker, 1)[1])
                return self.job(job_id, query)
            raise OozieError(400, "E0300", "E0300: Invalid content-type or resource [%s]" % url.path)
        except OozieError as e:
            # Oozie answers errors with an HTML error page; the machine-readable part is in
            # the headers.
            page = ("<html><body><h1>HTTP Status %d - %s</h1></body></html>"
                    % (e.status, e.message)).encode()
            self.send_response(e.status)
            self.send_header("oozie-error-code", e.code)
            self.send_header("oozie-error-message", e.message)
            self.send_header("Content-Type", "text/html;charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    def submit(self, query, body):
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if content_type != "application/xml":
            raise OozieError(400, "E0300", "E0300: Invalid content-type [%s]" % content_type)
        try:
            root = ET.fromstring(body)
        except ET.ParseError as e:
            raise OozieError(400, "E0301", "E0301: Invalid configuration XML: %s" % e)
        if root.tag != "configuration":
            raise OozieError(400, "E0301", "E0301: Invalid configuration XML: root <%s>" % root.tag)
        properties = {}
        for prop in root.findall("property"):
            properties[prop.findtext("name", "")] = prop.findtext("value", "")
        path = properties.get("oozie.wf.application.path")
        if not path:
            raise OozieError(400, "E0405",
                             "E0405: Submission request doesn't have any application or lib path")
        user = properties.get("user.name") or query.get("user.name")
        if not user:
            raise OozieError(401, "E0401", "E0401: Missing configuration property [user.name]")
        with self.state.lock:
            job_id = "%07d-%s-oozie-oozi-W" % (self.state.next_id, self.state.stamp)
            self.state.next_id += 1
            self.state.jobs[job_id] = {
                "id": job_id, "status": "PREP", "properties": properties, "user": user,
                "appPath": path, "appName": properties.get("celosWorkflowName", "app"),
                "createdTime": http_date(), "startTime": None, "endTime": None,
                "submittedAt": time.time()}
            if query.get("action") == "start":
                self.start_job(self.state.jobs[job_id])
            self.state.save()
        return self.send(201, {"id": job_id})

    def list_jobs(self, query):
        """GET /v2/jobs: workflow jobs matching the filter, oldest first, a page at a time."""
        if query.get("jobtype", "wf") not in ("wf", "workflow", ""):
            raise OozieError(400, "E0303", "E0303: Invalid parameter value, [jobtype] = [%s]"
                             % query.get("jobtype"))
        wanted = {}
        for part in filter(None, query.get("filter", "").split(";")):
            name, sep, value = part.partition("=")
            if not sep or name not in ("id", "status", "name", "user"):
                raise OozieError(400, "E0420", "E0420: Invalid jobs filter [%s], invalid name [%s]"
                                 % (query.get("filter"), name))
            wanted.setdefault(name, set()).add(value)
        try:
            offset, length = int(query.get("offset", "1")), int(query.get("len", "50"))
        except ValueError:
            raise OozieError(400, "E0303", "E0303: Invalid parameter value, [offset/len]")
        fields = {"id": "id", "status": "status", "name": "appName", "user": "user"}
        with self.state.lock:
            # By id: a lookup each (as Oozie's index would), not a scan of every job.
            candidates = ([self.state.jobs[i] for i in sorted(wanted["id"]) if i in self.state.jobs]
                          if "id" in wanted else list(self.state.jobs.values()))
            matching = [j for j in candidates
                        if all(j[fields[n]] in values for n, values in wanted.items())]
            page = [self.info(j) for j in matching[offset - 1:offset - 1 + length]]
        for entry in page:
            entry.pop("conf", None)
            entry.pop("actions", None)
        return self.send(200, {"total": len(matching), "offset": offset, "len": length,
                               "workflows": page})

    def start_job(self, job):
        if job["status"] != "PREP":
            raise OozieError(409, "E1003",
                             "E1003: Invalid coordinator application attributes, job %s is in "
                             "state %s, not PREP" % (job["id"], job["status"]))
        job["status"] = self.state.start_status
        job["startTime"] = http_date()
        notify(self.state, job)

    def job(self, job_id, query):
        with self.state.lock:
            job = self.state.jobs.get(job_id)
            if job is None:
                raise OozieError(400, "E0604", "E0604: Job does not exist [%s]" % job_id)
            if self.command == "PUT":
                action = query.get("action")
                if action == "start":
                    self.start_job(job)
                elif action == "kill":
                    if job["status"] not in KILLABLE:
                        raise OozieError(400, "E0725",
                                         "E0725: Workflow instance can not be killed, %s, "
                                         "Error Code: %s" % (job_id, job["status"]))
                    job["status"] = "KILLED"
                    job["endTime"] = http_date()
                    notify(self.state, job)
                elif action in ("suspend", "resume"):
                    job["status"] = "SUSPENDED" if action == "suspend" else "RUNNING"
                else:
                    raise OozieError(400, "E0303", "E0303: Invalid parameter value, [action] = [%s]"
                                     % action)
                self.state.save()
                return self.send(200)
            if self.command == "GET" and query.get("show", "info") == "info":
                return self.send(200, self.info(job))
            raise OozieError(400, "E0303", "E0303: Invalid parameter value, [show] = [%s]"
                             % query.get("show"))

    @staticmethod
    def info(job):
        conf = "<configuration>\r\n" + "".join(
            "  <property>\r\n    <name>%s</name>\r\n    <value>%s</value>\r\n  </property>\r\n"
            % (n, v) for n, v in sorted(job["properties"].items())) + "</configuration>"
        return {
            "appPath": job["appPath"], "acl": None, "status": job["status"],
            "createdTime": job["createdTime"], "conf": conf, "lastModTime": http_date(),
            "run": 0, "endTime": job["endTime"], "externalId": None, "appName": job["appName"],
            "id": job["id"], "startTime": job["startTime"], "parentId": None,
            "toString": "Workflow id[%s] status[%s]" % (job["id"], job["status"]),
            "group": None, "consoleUrl": "http://127.0.0.1/oozie?job=" + job["id"],
            "user": job["user"], "actions": []}

    def control(self, path, query):
        common = self.state.control(self.command, path, query)
        if common:
            return self.send(*common)
        with self.state.lock:
            if path == "/_control/jobs":
                return self.send(200, self.state.jobs)
            if path == "/_control/notifications":
                return self.send(200, self.state.notifications)
            if path == "/_control/start-status" and self.command == "POST":
                self.state.start_status = query["status"]
                return self.send(200, {"ok": True})
            if path == "/_control/status" and self.command == "POST":
                status = query["status"]
                if "id" in query:
                    if query["id"] not in self.state.jobs:
                        return self.send(404, {"error": "no job " + query["id"]})
                    targets = [self.state.jobs[query["id"]]]
                else:
                    targets = [j for j in self.state.jobs.values() if j["status"] not in ENDED]
                for job in targets:
                    changed = job["status"] != status
                    job["status"] = status
                    if changed:
                        notify(self.state, job)
                self.state.save()
                return self.send(200, {"changed": [j["id"] for j in targets]})
        return self.send(404, {"error": "unknown control endpoint"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state", help="keep jobs in this JSON file across restarts")
    parser.add_argument("--latency-ms", type=int, default=0, help="delay every answer by N ms")
    args = parser.parse_args()
    state = State(args.state)
    state.latency_ms = args.latency_ms
    handler = type("OozieHandler", (Handler,), {"state": state})
    fake_http.serve(handler, args.port, on_bound=lambda port: print(port, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
