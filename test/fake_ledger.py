"""What every fake service of test/ keeps about the requests it serves, and the control
endpoints that read and steer it (not part of any real service's API):

    GET  /_control/requests        the requests received so far (JSON list, the fake's own shape)
    POST /_control/reset           forget them and the counters
    POST /_control/latency?ms=N    delay every API answer by N ms (a real service's round trip)
    GET  /_control/stats           {"requests", "maxInFlight", "latencyMs"}

A fake's state derives from Ledger; its handler wraps each API request in begin()/end() (begin
returns the latency to wait, without holding the lock) and answers /_control/ paths it does not
know itself with control(); LedgerRequests does the wrapping for a fake_http handler.
"""

import threading
import urllib.parse


class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []
        self.latency_ms = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.served = 0

    def begin(self):
        """Counts one API request in flight; returns the seconds to wait before answering."""
        with self.lock:
            self.in_flight += 1
            self.served += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self.latency_ms / 1000.0

    def end(self):
        with self.lock:
            self.in_flight -= 1

    def record(self, entry):
        with self.lock:
            self.requests.append(entry)

    def control(self, method, path, query):
        """The answer (status, JSON body) to a common control request, or None if not one."""
        if path == "/_control/requests":
            with self.lock:
                return 200, list(self.requests)
        if path == "/_control/reset" and method == "POST":
            with self.lock:
                self.requests.clear()
                self.max_in_flight = 0
                self.served = 0
            return 200, {"ok": True}
        if path == "/_control/latency" and method == "POST":
            try:
                ms = int(query.get("ms", ""))
            except ValueError:
                return 400, {"error": "latency wants ms=<whole number>"}
            with self.lock:
                self.latency_ms = ms
            return 200, {"ok": True}
        if path == "/_control/stats":
            with self.lock:
                return 200, {"requests": self.served, "maxInFlight": self.max_in_flight,
                             "latencyMs": self.latency_ms}
        return None


class LedgerRequests:
    """Mixin for a fake_http.Handler whose class has `state` (a Ledger): delay() splits the
    request's URL into self.url and self.query (last value of each name) and counts an API
    request in flight, returning its latency (/_control/ requests: not counted, no latency);
    done() ends the count."""

    def delay(self):
        self.url = urllib.parse.urlsplit(self.path)
        self.query = {k: v[-1] for k, v in
                      urllib.parse.parse_qs(self.url.query, keep_blank_values=True).items()}
        self.counted = not self.url.path.startswith("/_control/")
        return self.state.begin() if self.counted else 0

    def done(self):
        if self.counted:
            self.state.end()
