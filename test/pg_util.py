"""A private PostgreSQL cluster for end-to-end tests (standard library only).

initdb into a temporary directory (as the unprivileged user `celos-test` when the tests run as
root: initdb refuses root; scripts/setup.sh creates the user), listening on 127.0.0.1 only on a
free port, its unix socket in the temporary directory; stopped and removed by close().
Binaries: $CELOS_TEST_POSTGRES_BIN or /usr/lib/postgresql/15/bin."""

import os
import pwd
import shutil
import subprocess
import tempfile

from e2e_util import free_port

BIN = os.environ.get("CELOS_TEST_POSTGRES_BIN", "/usr/lib/postgresql/15/bin")
PASSWORD = "celos-test-secret"


def available():
    """None when PostgreSQL can be started, else why not."""
    if not os.path.exists(os.path.join(BIN, "initdb")):
        return "PostgreSQL binaries not found in %s (install postgresql: scripts/setup.sh)" % BIN
    return None


class PrivatePostgres:
    def __init__(self, fsync=False):
        self.dir = tempfile.mkdtemp(prefix="celos-pg-")
        self.user = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("celos-test")
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                                "/usr/sbin/nologin", "celos-test"], check=True)
            self.user = "celos-test"
            shutil.chown(self.dir, self.user)
        with open(os.path.join(self.dir, "pw"), "w") as f:
            f.write(PASSWORD)
        if self.user:
            shutil.chown(os.path.join(self.dir, "pw"), self.user)
        self.port = None
        self.fsync = fsync
        self._run([os.path.join(BIN, "initdb"), "-D", self.data, "-U", "celos",
                   "--auth-local=trust", "--auth-host=scram-sha-256",
                   "--pwfile=" + os.path.join(self.dir, "pw"), "-E", "UTF8", "--no-sync"])
        self.start()

    @property
    def data(self):
        return os.path.join(self.dir, "data")

    def _run(self, argv, check=True):
        if self.user:
            argv = ["runuser", "-u", self.user, "--"] + argv
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if check and p.returncode != 0:
            log = ""
            if os.path.exists(os.path.join(self.dir, "log")):
                with open(os.path.join(self.dir, "log")) as f:
                    log = f.read()[-3000:]
            raise AssertionError("%s failed: %s\n%s" % (argv, p.stdout, log))
        return p

    def start(self):
        """Starts (again) on the same port once one was chosen."""
        for attempt in range(3):
            port = self.port or free_port()
            opts = ("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s "
                    "-c max_connections=300" % (port, self.dir))
            if not self.fsync:
                opts += " -c fsync=off -c synchronous_commit=off"
            p = self._run([os.path.join(BIN, "pg_ctl"), "-D", self.data, "-l",
                           os.path.join(self.dir, "log"), "-w", "-t", "60", "-o", opts, "start"],
                          check=attempt == 2 or self.port is not None)
            if p.returncode == 0:
                self.port = port
                return

    def stop(self):
        self._run([os.path.join(BIN, "pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop"],
                  check=False)

    def psql(self, database, sql):
        p = subprocess.run([os.path.join(BIN, "psql"), "-v", "ON_ERROR_STOP=1", "-qAt", "-h",
                            self.dir, "-p", str(self.port), "-U", "celos", "-d", database,
                            "-c", sql], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise AssertionError("psql: " + p.stderr)
        return p.stdout.strip()

    def create_database(self, name):
        """An empty database; returns its URI (with the password)."""
        self.psql("postgres", "CREATE DATABASE \"%s\"" % name)
        return self.uri(name)

    def uri(self, name, password=PASSWORD):
        user = "celos:%s" % password if password else "celos"
        return "postgresql://%s@127.0.0.1:%d/%s" % (user, self.port, name)

    def close(self):
        self._run([os.path.join(BIN, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w",
                   "stop"], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
