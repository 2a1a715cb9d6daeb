#!/usr/bin/env python3
"""A private single-node Slurm cluster in one directory (standard library only).

munged on a private key and socket, slurmctld and slurmd on 127.0.0.1 with free ports, and a
slurm.conf that keeps every file (state, spool, logs, pids) inside the directory. Nothing
touches /etc/slurm, /etc/munge or the system's services, so it can run beside a real cluster,
in CI, and be removed with the directory.

Used by the end-to-end tests (test/slurm) and by the Slurm quickstart (run.sh):

    private_slurm.py start DIR   # prints `export SLURM_CONF=...` for a shell
    private_slurm.py stop DIR

Slurm commands find the cluster through SLURM_CONF (see Cluster.env()); the socket of munged is
named in slurm.conf (AuthInfo=socket=...), so no MUNGE variable is needed.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

PROGRAMS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel"]


def missing_programs():
    """The programs of slurm-wlm and munge that are not installed (empty: all there)."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    return [p for p in PROGRAMS if shutil.which(p, path=path) is None]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _which(program):
    return shutil.which(program, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def _wait(predicate, what, timeout):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("private Slurm: timed out waiting for " + what)
        time.sleep(0.1)


class Cluster:
    """One private cluster living in `root` (created if needed)."""

    def __init__(self, root, cpus=2, partition="debug", min_job_age=300):
        self.root = os.path.abspath(root)
        self.cpus = cpus
        self.partition = partition
        self.min_job_age = min_job_age
        self.node = socket.gethostname().split(".")[0]
        self.conf = os.path.join(self.root, "slurm.conf")
        self.socket = os.path.join(self.root, "munge", "munge.socket")
        self.processes = {}  # daemons started by this object, by name

    # ---- files -----------------------------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def env(self, base=None):
        """The environment for Slurm commands (and celos-server) talking to this cluster."""
        env = dict(os.environ if base is None else base)
        env["SLURM_CONF"] = self.conf
        return env

    def _write_config(self):
        for d in ("munge", "state", "spool", "log"):
            os.makedirs(self.path(d), mode=0o700, exist_ok=True)
        key = self.path("munge", "munge.key")
        if not os.path.exists(key):
            with open(key, "wb") as f:
                f.write(os.urandom(1024))
            os.chmod(key, 0o400)
        ports_file = self.path("ports")
        if os.path.exists(ports_file):  # a restart keeps its ports (jobs remember them)
            with open(ports_file) as f:
                ctld, slurmd = (int(x) for x in f.read().split())
        else:
            ctld, slurmd = _free_port(), _free_port()
            with open(ports_file, "w") as f:
                f.write("%d %d\n" % (ctld, slurmd))
        plugstack = self.path("plugstack.conf")
        open(plugstack, "a").close()
        lines = [
            "ClusterName=celos-private",
            "SlurmctldHost=%s(127.0.0.1)" % self.node,
            "SlurmctldPort=%d" % ctld,
            "SlurmdPort=%d" % slurmd,
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            "AuthInfo=socket=%s" % self.socket,
            "StateSaveLocation=%s" % self.path("state"),
            "SlurmdSpoolDir=%s" % self.path("spool"),
            "SlurmctldPidFile=%s" % self.path("slurmctld.pid"),
            "SlurmdPidFile=%s" % self.path("slurmd.pid"),
            "SlurmctldLogFile=%s" % self.path("log", "slurmctld.log"),
            "SlurmdLogFile=%s" % self.path("log", "slurmd.log"),
            "PlugStackConfig=%s" % plugstack,
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill",
            "MpiDefault=none",
            "ReturnToService=2",
            "MinJobAge=%d" % self.min_job_age,
            "SlurmctldTimeout=30",
            "SlurmdTimeout=60",
            "KillWait=2",
            "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN" % (self.node, self.cpus),
            "PartitionName=%s Nodes=ALL Default=YES MaxTime=INFINITE State=UP" % self.partition,
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    # ---- processes -------------------------------------------------------------------------
    def start(self, timeout=60):
        """Starts munged, slurmctld and slurmd; returns when the node takes jobs."""
        self._write_config()
        self.start_munged()
        # A cluster started again in the same directory keeps its jobs (and so its job ids: a
        # celos state database may still name them); a new one starts empty.
        self.start_slurmctld(clear=not os.listdir(self.path("state")))
        self.start_slurmd()
        self.wait_idle(timeout)

    def _spawn(self, name, argv):
        log = open(self.path("log", name + ".out"), "ab")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env(),
                                start_new_session=True)
        log.close()
        self.processes[name] = proc
        with open(self.path(name + ".daemon"), "w") as f:
            f.write("%d\n" % proc.pid)
        return proc

    def start_munged(self):
        self._spawn("munged", [
            _which("munged"), "--foreground", "--force",
            "--socket=" + self.socket,
            "--key-file=" + self.path("munge", "munge.key"),
            "--pid-file=" + self.path("munge", "munged.pid"),
            "--log-file=" + self.path("log", "munged.log"),
            "--seed-file=" + self.path("munge", "munged.seed"),
        ])
        _wait(lambda: os.path.exists(self.socket), "munged's socket", 30)

    def start_slurmctld(self, clear=False):
        argv = [_which("slurmctld"), "-D", "-f", self.conf]
        if clear:
            argv.append("-c")
        self._spawn("slurmctld", argv)

    def start_slurmd(self):
        self._spawn("slurmd", [_which("slurmd"), "-D", "-f", self.conf, "-N", self.node])

    def scontrol(self, *args, timeout=10):
        return subprocess.run([_which("scontrol"), *args], env=self.env(), capture_output=True,
                              text=True, timeout=timeout)

    def wait_idle(self, timeout=60):
        def idle():
            try:
                out = self.scontrol("show", "node", self.node, timeout=5).stdout
            except subprocess.TimeoutExpired:
                return False
            return "State=IDLE" in out or "State=MIXED" in out or "State=ALLOCATED" in out
        _wait(idle, "node %s to be idle (logs in %s)" % (self.node, self.path("log")), timeout)

    def stop_daemon(self, name, timeout=20):
        """Stops one daemon this cluster started (by the pid it recorded)."""
        pid_file = self.path(name + ".daemon")
        try:
            with open(pid_file) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        proc = self.processes.pop(name, None)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc is not None:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
                continue
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
            except ChildProcessError:  # not our child (stopped from another process)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
            time.sleep(0.1)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if proc is not None:
                proc.wait()
        os.unlink(pid_file)

    def stop(self):
        """Stops every daemon; the directory stays (remove it with remove())."""
        for name in ("slurmd", "slurmctld", "munged"):
            self.stop_daemon(name)

    def remove(self):
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("start", "stop"):
        print("usage: private_slurm.py start|stop DIR", file=sys.stderr)
        return 2
    cluster = Cluster(argv[2])
    if argv[1] == "stop":
        cluster.stop()
        return 0
    missing = missing_programs()
    if missing:
        print("private_slurm.py: missing %s: install the Debian packages slurm-wlm and munge "
              "(scripts/setup.sh)" % ", ".join(missing), file=sys.stderr)
        return 1
    try:
        cluster.start()
    except RuntimeError as e:
        print(str(e), file=sys.stderr)
        cluster.stop()
        return 1
    print("export SLURM_CONF=%s" % cluster.conf)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
