"""/health/ready tells the truth about the file state database (SPEC §13): a directory that was
replaced underneath the server, or remounted read-only, makes readiness 503 naming it, and
readiness comes back to 200 once the directory is whole again. The server keeps answering
/health/live throughout."""

import os
import shutil
import subprocess
import unittest

from server_process import CelosServer
from e2e_util import poll  # noqa: E402 (on the path through server_process)


class MountedServer(CelosServer):
    """celos-server in a mount namespace of its own, its --db a bind mount of itself, so that the
    test can remount just that directory read-only for just that process."""

    def command(self):
        script = 'mount --bind "$1" "$1" && shift && exec "$@"'
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                self.db] + super().command()

    def remount(self, mode):
        subprocess.run(["nsenter", "-t", str(self.process.pid), "-m", "mount", "-o",
                        "remount,%s,bind" % mode, self.db], check=True)


def can_remount():
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount --bind /tmp /tmp"], capture_output=True)
    return probe.returncode == 0


class ReadinessOfTheFileDatabase(unittest.TestCase):
    def ready(self, server):
        reply = server.get("/health/ready")
        return reply.status, reply.json["checks"]["stateDatabase"]

    def ready_becomes(self, server, status):
        """/health/ready answers a background check's last result (every 2 s): a bounded
        poll until it answers `status`; returns (status, why)."""
        return poll(lambda: (lambda r: r if r[0] == status else None)(self.ready(server)),
                    "/health/ready to answer %d" % status, timeout=15)

    def test_a_replaced_directory_is_not_ready_until_it_is_back(self):
        server = CelosServer()
        self.addCleanup(server.close)
        self.assertEqual(self.ready(server), (200, "ok"))

        os.rename(server.db, server.db + ".moved")
        os.mkdir(server.db)
        status, why = self.ready_becomes(server, 503)
        self.assertIn(server.db, why)
        self.assertIn("replaced", why)
        self.assertEqual(server.get("/health/live").status, 200)

        os.rmdir(server.db)
        os.rename(server.db + ".moved", server.db)
        self.assertEqual(self.ready_becomes(server, 200), (200, "ok"))

    @unittest.skipUnless(os.geteuid() == 0 and can_remount(),
                         "needs root and mount namespaces (unshare, nsenter)")
    def test_a_read_only_remount_is_not_ready_until_it_is_writable_again(self):
        server = MountedServer()
        self.addCleanup(server.close)
        self.assertEqual(self.ready(server), (200, "ok"))

        server.remount("ro")
        status, why = self.ready_becomes(server, 503)
        self.assertIn(server.db, why)
        self.assertIn("Read-only file system", why)
        self.assertEqual(server.get("/health/live").status, 200)

        server.remount("rw")
        self.assertEqual(self.ready_becomes(server, 200), (200, "ok"))


if __name__ == "__main__":
    unittest.main()
