"""A fake OpenLineage collector (what Marquez's POST /api/v1/lineage does, for the tests) and the
check of every event against the standard's own JSON schema (schema/, Apache-2.0, kept with its
LICENSE; validated with python3-jsonschema).

The collector records every event it accepts, counts per run, and can be told to refuse for a
while: with HTTP 503 (the collector is up but failing), or by closing its socket (connection
refused: the collector is down), or with HTTP 400 for the events a predicate picks (a collector that
rejects an event)."""

import datetime
import json
import os
import socket
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema")
FINAL = {"COMPLETE", "FAIL", "ABORT"}


class EventSchema:
    """The RunEvent schema of spec/OpenLineage.json and the facets' schemas, resolved locally."""

    def __init__(self):
        self.store = {}
        self.facets = {}
        paths = [os.path.join(SCHEMA_DIR, "OpenLineage.json")]
        facet_dir = os.path.join(SCHEMA_DIR, "facets")
        paths += [os.path.join(facet_dir, f) for f in sorted(os.listdir(facet_dir))]
        for path in paths:
            with open(path) as f:
                schema = json.load(f)
            self.store[schema["$id"]] = schema
            for name in schema.get("$defs", {}):
                self.facets[name] = schema["$id"]
        self.core = self.store[[k for k in self.store if k.endswith("/OpenLineage.json")][0]]
        cls = jsonschema.validators.validator_for(self.core)
        self.cls = cls
        self.format_checker = cls.FORMAT_CHECKER if hasattr(cls, "FORMAT_CHECKER") \
            else jsonschema.FormatChecker()

    def validator(self, schema_id, definition):
        # RefResolver: what Debian's python3-jsonschema (4.10) has; newer ones warn about it.
        warnings.simplefilter("ignore", DeprecationWarning)
        resolver = jsonschema.RefResolver(base_uri=schema_id, referrer=self.store[schema_id],
                                          store=self.store)
        ref = {"$ref": schema_id + "#/$defs/" + definition}
        return self.cls(ref, resolver=resolver, format_checker=self.format_checker)

    def check(self, event):
        """Raises jsonschema.ValidationError (or AssertionError) when `event` is not a valid
        RunEvent, each facet checked against its own schema too."""
        self.validator(self.core["$id"], "RunEvent").validate(event)
        datetime.datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00"))
        facets = list(event["run"].get("facets", {}).items())
        facets += list(event["job"].get("facets", {}).items())
        for _, facet in facets:
            url = facet["_schemaURL"]
            schema_id, _, pointer = url.partition("#/$defs/")
            assert schema_id in self.store, "facet schema not kept in schema/: " + url
            self.validator(schema_id, pointer).validate(facet)
            for key in ("nominalStartTime", "nominalEndTime"):
                if key in facet:
                    datetime.datetime.fromisoformat(facet[key].replace("Z", "+00:00"))


class Collector:
    """An OpenLineage collector on 127.0.0.1: POST <any path> with a RunEvent."""

    def __init__(self, port=0, latency_ms=0):
        self.lock = threading.Lock()
        self.events = []        # accepted, in arrival order
        self.posts = 0          # every POST received
        self.failing = 0        # answer 503 while > 0 ... (see fail_for)
        self.reject = None      # answer 400 to the events this predicate is true of
        self.rejected = []      # the run ids of the events answered 400
        self.headers = []
        self.connections = set()  # open (kept-alive) connections
        self.server = None
        self.port = port
        self.latency = latency_ms / 1000.0  # before each answer: a real collector's round trip
        self.start()

    def start(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Marquez's Jetty does

            def setup(self):
                super().setup()
                with outer.lock:
                    outer.connections.add(self.connection)

            def finish(self):
                with outer.lock:
                    outer.connections.discard(self.connection)
                super().finish()

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                event = json.loads(body)
                if outer.latency:
                    time.sleep(outer.latency)
                with outer.lock:
                    outer.posts += 1
                    outer.headers.append(dict(self.headers))
                    if outer.failing > 0:
                        outer.failing -= 1
                        status = 503
                    elif outer.reject and outer.reject(event):
                        outer.rejected.append(event["run"]["runId"])
                        status = 400
                    else:
                        outer.events.append(event)
                        status = 201
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):  # what a benchmark in another process asks: {"accepted": n}
                with outer.lock:
                    body = json.dumps({"accepted": len(outer.events)}).encode()
                self.send_response(200 if self.path == "/_accepted" else 404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d/api/v1/lineage" % self.port

    def stop(self):
        """Closes the socket: connections are refused until start() (same port)."""
        self.server.shutdown()
        self.server.server_close()
        with self.lock:  # and the kept-alive connections: a collector that is down answers none
            for connection in self.connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def fail_next(self, n):
        """The next n POSTs are answered 503."""
        with self.lock:
            self.failing = n

    def accepted(self):
        with self.lock:
            return list(self.events)


def runs_of(events, test):
    """{runId: {"START": event, final type: event}}; fails on two different events of one run
    and type (the same event twice is allowed: a retry after a lost answer), on a run with two
    final events, and on a final event before its START."""
    runs = {}
    for e in events:
        run = runs.setdefault(e["run"]["runId"], {})
        kind = e["eventType"]
        if kind in run:
            test.assertEqual(run[kind], e, "run %s: two different %s events" % (
                e["run"]["runId"], kind))
            continue
        if kind in FINAL:
            test.assertIn("START", run, "run %s: %s before START" % (e["run"]["runId"], kind))
            others = FINAL.intersection(run)
            test.assertFalse(others, "run %s: %s and %s" % (e["run"]["runId"], kind, others))
        run[kind] = e
    return runs


if __name__ == "__main__":
    # A collector in a process of its own (bench/lineage): prints its port, serves until killed.
    import argparse
    parser = argparse.ArgumentParser(description="a fake OpenLineage collector")
    parser.add_argument("--latency-ms", type=int, default=0)
    collector = Collector(latency_ms=parser.parse_args().latency_ms)
    print(collector.port, flush=True)
    threading.Event().wait()
