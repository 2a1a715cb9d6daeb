"""Helpers shared by the end-to-end tests (standard library only)."""
import asyncio
import os
import socket
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def poll(predicate, what, timeout=30.0, interval=0.05):
    """Calls predicate() until it returns something truthy and returns that; fails after
    `timeout` seconds. An OSError (connection refused while a server starts) counts as "not
    yet" and is named in the failure if it was the last answer."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
            last_error = None
        except OSError as e:
            last_error = e
        if time.monotonic() > deadline:
            detail = " (last error: %s)" % last_error if last_error else ""
            raise AssertionError("timed out waiting for " + what + detail)
        time.sleep(interval)


def wait_for_command_jobs(db, timeout=120.0):
    """Waits until every command job celos-server started under the state directory `db` has
    ended: each jobs/.../ folder with a `started` file also has its `exit` record."""
    def ended():
        for _, _, files in os.walk(os.path.join(db, "jobs")):
            if "started" in files and "exit" not in files:
                return False
        return True
    poll(ended, "the started jobs to end", timeout=timeout)


def post_all(port, targets, connections=128):
    """POSTs an empty body to every target on 127.0.0.1:`port`, `connections` kept-alive
    connections at a time (asyncio: one thread keeps them all in flight, as many producers
    announcing at once would). Returns [(target, status)] of the answers other than 200."""
    async def run():
        queue = list(reversed(targets))
        refused = []

        async def connection():
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                while queue:
                    target = queue.pop()
                    writer.write(("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                                  "Content-Length: 0\r\n\r\n" % (target, port)).encode())
                    head = await reader.readuntil(b"\r\n\r\n")
                    status = int(head.split(b" ", 2)[1])
                    length = 0
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":", 1)[1])
                    await reader.readexactly(length)
                    if status != 200:
                        refused.append((target, status))
            finally:
                writer.close()
        await asyncio.gather(*(connection() for _ in range(min(connections, len(targets)))))
        return refused
    return asyncio.run(run())
