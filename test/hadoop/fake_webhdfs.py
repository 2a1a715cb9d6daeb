#!/usr/bin/env python3
"""A fake HDFS name node (plus one data node) speaking the WebHDFS REST API, backed by a real
directory. Written from the Apache Hadoop "WebHDFS REST API" documentation: the JSON shapes of
FileStatus, FileStatuses, {"boolean": ...} and RemoteException, CREATE and OPEN redirecting
(307) to a data node, and a standby name node answering 403 StandbyException.

    fake_webhdfs.py --port 0 [--root DIR] [--standby] [--latency-ms N]

--latency-ms delays every WebHDFS answer by N ms (a real name node's round trip); requests
overlap (connections are served concurrently on one event loop, fake_http.py, as cheaply as the
other fakes of this folder: the benchmarks run the fake beside celos-server on the same cores)
and the fake records how many were in flight at most.

prints the name node's port on the first line of stdout and the data node's on the second.
Control endpoints (not part of WebHDFS):
    POST /_control/state?standby=true|false   switch between active and standby
    GET  /_control/requests                   the WebHDFS requests received so far (JSON list)
    POST /_control/reset                      forget the recorded requests
    POST /_control/latency?ms=N               change the latency
    GET  /_control/stats                      {"requests", "maxInFlight", "latencyMs"}
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import urllib.parse

import fake_http

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fake_ledger import Ledger, LedgerRequests  # noqa: E402 (test/fake_ledger.py)

PREFIX = "/webhdfs/v1"
READ_OPS = {"GETFILESTATUS", "LISTSTATUS", "OPEN"}


class State(Ledger):
    def __init__(self, root, standby):
        super().__init__()
        self.root = root
        self.standby = standby
        self.datanode_port = 0

    def local(self, hdfs_path):
        """The directory entry behind an absolute HDFS path (never outside root)."""
        parts = [p for p in hdfs_path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise ValueError("path must not contain ..")
        return os.path.join(self.root, *parts)


def file_status(local_path, suffix):
    st = os.stat(local_path)
    is_dir = os.path.isdir(local_path)
    return {
        "accessTime": 0 if is_dir else int(st.st_atime * 1000),
        "blockSize": 0 if is_dir else 134217728,
        "childrenNum": len(os.listdir(local_path)) if is_dir else 0,
        "fileId": st.st_ino,
        "group": "supergroup",
        "length": 0 if is_dir else st.st_size,
        "modificationTime": int(st.st_mtime * 1000),
        "owner": "celos",
        "pathSuffix": suffix,
        "permission": "755" if is_dir else "644",
        "replication": 0 if is_dir else 3,
        "storagePolicy": 0,
        "type": "DIRECTORY" if is_dir else "FILE",
    }


def remote_exception(exception, java_class, message):
    return {"RemoteException": {"exception": exception, "javaClassName": java_class,
                                 "message": message}}


class Handler(LedgerRequests, fake_http.Handler):
    """HTTP/1.1 with keep-alive, as Jetty; the latency is waited for by fake_http (delay())."""
    server_version = "Jetty(fake)"
    state = None  # set per server
    datanode = False

    # ---- plumbing

    def send(self, status, body=b"", content_type="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def not_found(self, path):
        self.send(404, remote_exception("FileNotFoundException", "java.io.FileNotFoundException",
                                        "File does not exist: " + path))

    def bad_request(self, message):
        self.send(400, remote_exception("IllegalArgumentException",
                                        "java.lang.IllegalArgumentException", message))

    def respond(self):
        if not self.counted:
            return self.control(self.url.path, self.query)
        if self.command not in ("GET", "PUT", "POST", "DELETE", "HEAD"):
            return self.send(501, b"unsupported method " + self.command.encode(), "text/plain")
        if not self.url.path.startswith(PREFIX):
            return self.send(404, b"not a WebHDFS URL", "text/plain")
        hdfs_path = urllib.parse.unquote(self.url.path[len(PREFIX):]) or "/"
        op = self.query.get("op", "").upper()
        return self.serve(op, hdfs_path, self.query, self.body)

    def serve(self, op, hdfs_path, query, data):
        self.state.record({"node": "datanode" if self.datanode else "namenode",
                           "method": self.command, "path": hdfs_path, "op": op,
                           "query": query, "body_length": len(data)})
        try:
            if self.datanode:
                return self.datanode_op(op, hdfs_path, query, data)
            if self.state.standby:
                category = "READ" if op in READ_OPS else "WRITE"
                return self.send(403, remote_exception(
                    "StandbyException", "org.apache.hadoop.ipc.StandbyException",
                    "Operation category %s is not supported in state standby. "
                    "Visit https://s.apache.org/sbnn-error" % category))
            return self.namenode_op(op, hdfs_path, query)
        except ValueError as e:
            return self.bad_request(str(e))

    def control(self, path, query):
        common = self.state.control(self.command, path, query)
        if common:
            return self.send(*common)
        if path == "/_control/state" and self.command == "POST":
            self.state.standby = query.get("standby", "false") == "true"
            return self.send(200, {"standby": self.state.standby})
        return self.send(404, b"unknown control endpoint", "text/plain")

    # ---- the name node

    def expect(self, *methods):
        if self.command not in methods:
            raise ValueError("Invalid value for webhdfs parameter \"op\": op %s is not "
                             "allowed with HTTP %s" % (self.op_name, self.command))

    def namenode_op(self, op, hdfs_path, query):
        self.op_name = op
        local = self.state.local(hdfs_path)
        if op == "GETFILESTATUS":
            self.expect("GET")
            if not os.path.exists(local):
                return self.not_found(hdfs_path)
            return self.send(200, {"FileStatus": file_status(local, "")})
        if op == "LISTSTATUS":
            self.expect("GET")
            if not os.path.exists(local):
                return self.not_found(hdfs_path)
            if os.path.isdir(local):
                entries = [file_status(os.path.join(local, n), n) for n in sorted(os.listdir(local))]
            else:
                entries = [file_status(local, "")]
            return self.send(200, {"FileStatuses": {"FileStatus": entries}})
        if op == "MKDIRS":
            self.expect("PUT")
            if os.path.isfile(local):
                return self.send(403, remote_exception(
                    "FileAlreadyExistsException",
                    "org.apache.hadoop.fs.FileAlreadyExistsException",
                    "Path is not a directory: " + hdfs_path))
            os.makedirs(local, exist_ok=True)
            return self.send(200, {"boolean": True})
        if op == "DELETE":
            self.expect("DELETE")
            if not os.path.exists(local) or local == self.state.root:
                return self.send(200, {"boolean": False})
            if os.path.isdir(local):
                if os.listdir(local) and query.get("recursive", "false") != "true":
                    return self.send(403, remote_exception(
                        "PathIsNotEmptyDirectoryException",
                        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
                        "`%s is non empty': Directory is not empty" % hdfs_path))
                shutil.rmtree(local)
            else:
                os.remove(local)
            return self.send(200, {"boolean": True})
        if op == "RENAME":
            self.expect("PUT")
            destination = query.get("destination")
            if not destination or not destination.startswith("/"):
                raise ValueError("Invalid value for webhdfs parameter \"destination\"")
            target = self.state.local(destination)
            if (not os.path.exists(local) or os.path.exists(target)
                    or not os.path.isdir(os.path.dirname(target))):
                return self.send(200, {"boolean": False})
            os.rename(local, target)
            return self.send(200, {"boolean": True})
        if op in ("CREATE", "OPEN"):
            self.expect("PUT" if op == "CREATE" else "GET")
            if op == "OPEN" and not os.path.isfile(local):
                return self.not_found(hdfs_path)
            if op == "CREATE" and os.path.isdir(local):
                return self.send(403, remote_exception(
                    "FileAlreadyExistsException",
                    "org.apache.hadoop.fs.FileAlreadyExistsException",
                    "%s already exists as a directory" % hdfs_path))
            forwarded = dict(query)
            forwarded["namenoderpcaddress"] = "127.0.0.1:8020"
            location = "http://127.0.0.1:%d%s%s?%s" % (
                self.state.datanode_port, PREFIX, urllib.parse.quote(hdfs_path),
                urllib.parse.urlencode(forwarded))
            return self.send(307, b"", "application/octet-stream", [("Location", location)])
        raise ValueError("Invalid value for webhdfs parameter \"op\": No enum constant "
                         "org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.%s" % op)

    # ---- the data node

    def datanode_op(self, op, hdfs_path, query, data):
        local = self.state.local(hdfs_path)
        if op == "CREATE" and self.command == "PUT":
            if os.path.exists(local) and query.get("overwrite", "false") != "true":
                return self.send(403, remote_exception(
                    "FileAlreadyExistsException",
                    "org.apache.hadoop.fs.FileAlreadyExistsException",
                    "%s for client 127.0.0.1 already exists" % hdfs_path))
            os.makedirs(os.path.dirname(local), exist_ok=True)
            temp = local + "._COPYING_"
            with open(temp, "wb") as f:
                f.write(data)
            os.replace(temp, local)
            return self.send(201, b"", "application/octet-stream",
                             [("Location", "hdfs://127.0.0.1:8020" + hdfs_path)])
        if op == "OPEN" and self.command == "GET":
            if not os.path.isfile(local):
                return self.not_found(hdfs_path)
            with open(local, "rb") as f:
                content = f.read()
            offset = int(query.get("offset", "0"))
            length = query.get("length")
            content = content[offset:] if length is None else content[offset:offset + int(length)]
            return self.send(200, content, "application/octet-stream")
        raise ValueError("data node: unsupported op %s with HTTP %s" % (op, self.command))


def serve(handler_state, datanode, port):
    """Serves the name node (or the data node) from a thread of its own; returns its port."""
    handler = type("NameNode" if not datanode else "DataNode", (Handler,),
                   {"state": handler_state, "datanode": datanode})
    bound = []
    ready = threading.Event()

    def on_bound(p):
        bound.append(p)
        ready.set()
    threading.Thread(target=fake_http.serve, args=(handler, port, on_bound), daemon=True).start()
    if not ready.wait(30):
        raise SystemExit("fake_webhdfs: could not listen on port %d" % port)
    return bound[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--datanode-port", type=int, default=0)
    parser.add_argument("--root", help="the directory behind HDFS / (default: a temp dir)")
    parser.add_argument("--standby", action="store_true", help="start as a standby name node")
    parser.add_argument("--latency-ms", type=int, default=0, help="delay every answer by N ms")
    args = parser.parse_args()
    root = args.root or tempfile.mkdtemp(prefix="fake-hdfs-")
    os.makedirs(root, exist_ok=True)
    state = State(os.path.abspath(root), args.standby)
    state.latency_ms = args.latency_ms
    state.datanode_port = serve(state, True, args.datanode_port)
    print(serve(state, False, args.port), flush=True)
    print(state.datanode_port, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
