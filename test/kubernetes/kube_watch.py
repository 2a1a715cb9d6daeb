"""Watches of the fake Kubernetes API server (GET ...?watch=1), as the API server's watch cache
answers them: a chunked stream of JSON lines, one {"type", "object"} event a line, kept open
until timeoutSeconds (default 1800 s) or until the client goes away.

- resourceVersion "" or "0": the current objects of the selection as ADDED, then every change;
  resourceVersion N: the changes after N. N older than the kept history (a compaction, a
  restart of the fake, more than MAX_EVENTS changes since) is answered with an ERROR event
  carrying a 410 Expired Status, and the stream ends (a real API server's watch cache does the
  same); N newer than the server's is a 504 answer.
- With a label or field selector an object that starts to match is ADDED, one that stops
  matching (a pod that leaves phase Pending) is DELETED, as the watch cache sends them.
- allowWatchBookmarks=true: a BOOKMARK event (an object of the watched kind with only
  metadata.resourceVersion) every Store.bookmark_seconds and just before the stream ends: all
  changes up to that resourceVersion have been sent.
- A watcher that fell so far behind that its changes were compacted away gets the 410 ERROR
  event and its stream ends.
"""

import asyncio
import json

from kube_store import KINDS, ApiError

DEFAULT_TIMEOUT = 1800.0


class WatchStream:
    """One open watch of kind's objects for which wanted(obj) holds, from resourceVersion
    since (None: the current objects first). Created under the store's lock; start() runs on
    the server's event loop."""

    def __init__(self, store, kind, wanted, since, bookmarks, timeout):
        self.store, self.kind, self.wanted = store, kind, wanted
        self.bookmarks, self.timeout = bookmarks, timeout
        self.rv = store.rv if since is None else since
        self.initial = []
        if since is None:
            self.initial = [self.line("ADDED", obj) for _, obj in
                            sorted(store.objects[kind].items()) if wanted(obj)]
        self.loop = self.connection = None
        self.pending = False
        self.timers = []

    def line(self, kind, obj):
        return (json.dumps({"type": kind, "object": obj}) + "\n").encode()

    def start(self, connection):
        self.loop, self.connection = asyncio.get_running_loop(), connection
        with self.store.lock:
            self.store.watchers.add(self)
        self.timers.append(self.loop.call_later(self.timeout, self.finish))
        if self.bookmarks:
            self.timers.append(self.loop.call_later(self.store.bookmark_seconds, self.bookmark))
        self.loop.call_soon(self.flush)

    def notify(self):
        """A change was recorded (any thread, the store's lock held)."""
        if not self.pending and self.loop is not None:
            self.pending = True
            self.loop.call_soon_threadsafe(self.flush)

    def collect(self):
        """The lines of the changes since the last flush (the store's lock held); None after a
        410, whose ERROR line is then the only one."""
        try:
            changes = self.store.changes(self.kind, self.rv)
        except ApiError as e:
            return None, self.line("ERROR", e.status())
        lines = []
        for _, kind, obj, before in changes:
            now, was = self.wanted(obj), before is not None and self.wanted(before)
            send = now
            if kind == "DELETED":
                send = now or was
            elif kind == "MODIFIED" and now != was:
                kind, send = "ADDED" if now else "DELETED", True
            if send:
                lines.append(self.line(kind, obj))
        self.rv = self.store.rv
        return lines, None

    def flush(self):
        if self.connection is None:
            return
        with self.store.lock:
            self.pending = False
            lines, error = self.collect()
        lines = self.initial + (lines or [])
        self.initial = []
        if lines:
            self.connection.write_chunk(b"".join(lines))
        if error is not None:
            self.connection.write_chunk(error)
            self.finish(bookmark=False)  # nothing follows an ERROR event

    def bookmark(self, last=False):
        self.flush()
        if self.connection is None:
            return
        version, api_kind, _ = KINDS[self.kind]
        self.connection.write_chunk(self.line("BOOKMARK", {
            "kind": api_kind, "apiVersion": version,
            "metadata": {"resourceVersion": str(self.rv)}}))
        if not last:
            self.timers.append(self.loop.call_later(self.store.bookmark_seconds, self.bookmark))

    def finish(self, bookmark=True):
        """The stream ends (timeoutSeconds, or after an ERROR event)."""
        if self.connection is None:
            return
        if bookmark and self.bookmarks:
            self.bookmark(last=True)  # its flush may end the stream itself (a 410)
            if self.connection is None:
                return
        connection = self.connection
        self.stop()
        connection.end_stream()

    def stop(self):
        """The client went away (or the stream ended): no more events."""
        self.connection = None
        for timer in self.timers:
            timer.cancel()
        with self.store.lock:
            self.store.watchers.discard(self)


def open_watch(store, kind, wanted, query):
    """The WatchStream a watch request asks for (the store's lock held); ApiError for a bad or
    too new resourceVersion."""
    since = query.get("resourceVersion", "")
    try:
        since = None if since in ("", "0") else int(since)
        timeout = float(query.get("timeoutSeconds") or DEFAULT_TIMEOUT)
    except ValueError:
        raise ApiError(400, "invalid resource version or timeoutSeconds: %s, %s"
                       % (since, query.get("timeoutSeconds")))
    if since is not None and since > store.rv:
        raise ApiError(504, "Too large resource version: %d, current: %d" % (since, store.rv),
                       reason="Timeout")
    bookmarks = query.get("allowWatchBookmarks") in ("1", "t", "T", "true", "True", "TRUE")
    return WatchStream(store, kind, wanted, since, bookmarks, timeout)
