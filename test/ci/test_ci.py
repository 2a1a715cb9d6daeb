"""celos-ci end to end: a real OpenSSH server on 127.0.0.1 (started here with a private
configuration, host key and authorized key, all ed25519), `file:` targets, and the WebHDFS fake
of test/hadoop when it is there. Every remote path is on this machine, so the tests look at the
result directly on disk."""

import getpass
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_util import free_port  # noqa: E402 (test/e2e_util.py)

HERE = os.path.dirname(os.path.abspath(__file__))
CELOS_CI = os.environ.get("CELOS_CI", os.path.join(HERE, "../../build/dev/celos-ci/celos-ci"))
SSHD = "/usr/sbin/sshd"
HADOOP_TESTS = os.path.join(HERE, "..", "hadoop")
HAVE_WEBHDFS_FAKE = os.path.exists(os.path.join(HADOOP_TESTS, "fake_webhdfs.py"))

LOCAL_CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>file:///</value></property>
</configuration>
"""


def keygen(path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "celos-test", "-f", path],
                   check=True)
    with open(path + ".pub") as f:
        return f.read().strip()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def tree(root):
    """{relative path: content} of every file under root (empty if root is missing)."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            full = os.path.join(dirpath, name)
            out[os.path.relpath(full, root)] = read(full)
    return out


class Sshd:
    """An sshd of our own: 127.0.0.1, a free port, this user, keys in `directory`."""

    def __init__(self, directory, authorized_key):
        self.directory = directory
        self.port = free_port()
        self.host_public_key = keygen(os.path.join(directory, "host_ed25519"))
        write(os.path.join(directory, "authorized_keys"), authorized_key + "\n")
        config = os.path.join(directory, "sshd_config")
        write(config, "\n".join([
            "Port %d" % self.port,
            "ListenAddress 127.0.0.1",
            "HostKey %s/host_ed25519" % directory,
            "AuthorizedKeysFile %s/authorized_keys" % directory,
            "PidFile %s/sshd.pid" % directory,
            "StrictModes no",
            "UsePAM no",
            "PermitRootLogin yes",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "Subsystem sftp internal-sftp",
            "LogLevel VERBOSE",
        ]) + "\n")
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        self.log = open(os.path.join(directory, "sshd.log"), "w")
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", config],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(200):  # bounded: 20 s
            if self.process.poll() is not None:
                raise RuntimeError("sshd exited: " + read(os.path.join(directory, "sshd.log")))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("sshd did not listen on port %d" % self.port)

    def known_hosts_line(self):
        return "[127.0.0.1]:%d %s\n" % (self.port, self.host_public_key)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


@unittest.skipUnless(os.path.exists(SSHD), "needs openssh-server")
class CelosCiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="celos-ci-e2e-")
        cls.home = os.path.join(cls.base, "home")
        os.makedirs(os.path.join(cls.home, ".ssh"), mode=0o700)
        client_key = keygen(os.path.join(cls.home, ".ssh", "id_ed25519"))
        os.makedirs(os.path.join(cls.base, "sshd"))
        cls.sshd = Sshd(os.path.join(cls.base, "sshd"), client_key)
        write(os.path.join(cls.home, ".ssh", "known_hosts"), cls.sshd.known_hosts_line())

    @classmethod
    def tearDownClass(cls):
        cls.sshd.stop()
        shutil.rmtree(cls.base, ignore_errors=True)

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=self.base)
        self.workflows = os.path.join(self.dir, "celos", "workflows")
        self.defaults = os.path.join(self.dir, "celos", "defaults")
        self.hdfs_root = os.path.join(self.dir, "hdfs", "user", "celos", "app")
        for d in (self.workflows, self.defaults, self.hdfs_root):
            os.makedirs(d)
        write(os.path.join(self.dir, "conf", "core-site.xml"), LOCAL_CORE_SITE)
        write(os.path.join(self.dir, "conf", "hdfs-site.xml"), "<configuration/>\n")

    def sftp(self, path):
        return "sftp://127.0.0.1:%d%s" % (self.sshd.port, path)

    def make_target(self, url_of, name="target.json", conf=None):
        conf = conf or os.path.join(self.dir, "conf")
        path = os.path.join(self.dir, name)
        write(path, """{
  "hadoop.hdfs-site.xml": "%s",
  "hadoop.core-site.xml": "%s",
  "defaults.dir.uri": "%s",
  "workflows.dir.uri": "%s",
}
""" % (url_of(conf + "/hdfs-site.xml"), url_of(conf + "/core-site.xml"),
            url_of(self.defaults), url_of(self.workflows)))
        return url_of(path)

    def project(self, version, workflow_js=None, defaults_js=None):
        d = os.path.join(self.dir, "project-" + version)
        shutil.rmtree(d, ignore_errors=True)
        write(os.path.join(d, "workflow.js"), workflow_js or
              "celos.defineWorkflow({id: 'wordcount', version: '%s'});\n" % version)
        write(os.path.join(d, "defaults.js"), defaults_js or "var VERSION = '%s';\n" % version)
        write(os.path.join(d, "hdfs", "workflow.xml"), "<workflow-app name='%s'/>\n" % version)
        write(os.path.join(d, "hdfs", "lib", "job-%s.jar" % version), "jar " + version)
        return d

    def ci(self, *args, env=None, home=None):
        environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
        environment["HOME"] = home or self.home
        environment["CELOS_CI_USERNAME"] = getpass.getuser()
        environment.update(env or {})
        return subprocess.run([CELOS_CI] + list(args), capture_output=True, text=True,
                              env=environment, timeout=120)

    def deploy(self, project, target, hdfs_root=None, *extra, home=None):
        return self.ci("--mode", "deploy", "--workflowName", "wordcount", "--target", target,
                       "--deployDir", project, "--hdfsRoot", hdfs_root or self.hdfs_root,
                       *extra, home=home)

    def undeploy(self, target, hdfs_root=None):
        return self.ci("--mode", "undeploy", "--workflowName", "wordcount", "--target", target,
                       "--hdfsRoot", hdfs_root or self.hdfs_root)

    def assert_deployed(self, version, hdfs_app=None):
        self.assertEqual(read(os.path.join(self.workflows, "wordcount.js")),
                         "celos.defineWorkflow({id: 'wordcount', version: '%s'});\n" % version)
        self.assertEqual(read(os.path.join(self.defaults, "wordcount.js")),
                         "var VERSION = '%s';\n" % version)
        self.assertEqual(tree(hdfs_app or os.path.join(self.hdfs_root, "wordcount")), {
            "workflow.xml": "<workflow-app name='%s'/>\n" % version,
            "lib/job-%s.jar" % version: "jar " + version,
        })

    def assert_ok(self, result):
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def assert_fails(self, result, *fragments):
        self.assertNotEqual(result.returncode, 0, result.stdout)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)

    # ---- the tests

    def test_deploy_and_undeploy_over_sftp_with_a_local_hdfs(self):
        target = self.make_target(self.sftp)
        self.assert_ok(self.deploy(self.project("v1"), target))
        self.assert_deployed("v1")
        self.assert_ok(self.undeploy(target))
        self.assertFalse(os.path.exists(os.path.join(self.workflows, "wordcount.js")))
        self.assertFalse(os.path.exists(os.path.join(self.defaults, "wordcount.js")))
        self.assertFalse(os.path.exists(os.path.join(self.hdfs_root, "wordcount")))

    def test_deploy_and_undeploy_with_file_targets(self):
        target = self.make_target(lambda p: "file://" + p)
        result = self.deploy(self.project("v1"), target)
        self.assert_ok(result)
        self.assertIn("uploaded", result.stdout)  # plain log lines when stdout is not a terminal
        self.assertNotIn("\r", result.stdout)
        self.assert_deployed("v1")
        self.assert_ok(self.undeploy(target))
        self.assertEqual(tree(self.dir + "/celos"), {})

    def test_a_new_version_replaces_the_old_and_redeploying_is_idempotent(self):
        target = self.make_target(self.sftp)
        self.assert_ok(self.deploy(self.project("v1"), target))
        v2 = self.project("v2")
        self.assert_ok(self.deploy(v2, target))
        self.assert_deployed("v2")
        before = (tree(self.dir + "/celos"), tree(self.hdfs_root))
        self.assert_ok(self.deploy(v2, target))
        self.assertEqual((tree(self.dir + "/celos"), tree(self.hdfs_root)), before)
        self.assertEqual(os.listdir(self.hdfs_root), ["wordcount"])  # no temporary leftovers
        self.assertEqual(os.listdir(self.workflows), ["wordcount.js"])

    def test_a_syntax_error_in_either_js_file_leaves_the_old_deployment(self):
        target = self.make_target(self.sftp)
        self.assert_ok(self.deploy(self.project("v1"), target))
        for broken in ("workflow.js", "defaults.js"):
            with self.subTest(broken=broken):
                bad = "var ok = 1;\nvar broken = );\n"
                project = self.project("v2", **{broken.replace(".", "_"): bad})
                result = self.deploy(project, target)
                self.assert_fails(result, broken + ":2:", "SyntaxError")
                self.assertEqual(result.returncode, 2)
                self.assert_deployed("v1")

    def test_a_failure_after_the_hdfs_swap_rolls_everything_back(self):
        self.assert_ok(self.deploy(self.project("v1"), self.make_target(self.sftp)))
        # A second target whose workflows directory lies under a regular file: reading the old
        # wordcount.js finds nothing, the HDFS swap and defaults.js succeed, workflow.js fails.
        blocked = os.path.join(self.dir, "blocked")
        write(blocked, "a file, not a directory")
        path = os.path.join(self.dir, "blocked-target.json")
        write(path, """{"hadoop.hdfs-site.xml": "%s", "hadoop.core-site.xml": "%s",
          "defaults.dir.uri": "%s", "workflows.dir.uri": "%s"}""" % (
            self.sftp(self.dir + "/conf/hdfs-site.xml"),
            self.sftp(self.dir + "/conf/core-site.xml"),
            self.sftp(self.defaults), self.sftp(blocked + "/workflows")))
        result = self.deploy(self.project("v2"), self.sftp(path))
        self.assert_fails(result, "wordcount.js", "previous deployment is in place")
        self.assertIn("installed", result.stdout)  # the failure did come after the swap
        self.assert_deployed("v1")
        self.assertEqual(os.listdir(self.hdfs_root), ["wordcount"])

    def test_a_key_the_server_does_not_accept_is_a_clear_error(self):
        other_home = os.path.join(self.dir, "other-home")
        os.makedirs(os.path.join(other_home, ".ssh"))
        keygen(os.path.join(other_home, ".ssh", "id_ed25519"))
        write(os.path.join(other_home, ".ssh", "known_hosts"), self.sshd.known_hosts_line())
        result = self.deploy(self.project("v1"), self.make_target(self.sftp), home=other_home)
        self.assert_fails(result, "authentication", "id_ed25519")
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    def test_keys_held_by_ssh_agent_are_used(self):
        agent_home = os.path.join(self.dir, "agent-home")
        os.makedirs(os.path.join(agent_home, ".ssh"))
        write(os.path.join(agent_home, ".ssh", "known_hosts"), self.sshd.known_hosts_line())
        socket_path = os.path.join(self.dir, "agent.sock")
        agent = subprocess.Popen(["ssh-agent", "-D", "-a", socket_path],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(agent.wait)
        self.addCleanup(agent.terminate)
        for _ in range(100):  # bounded: 10 s
            if os.path.exists(socket_path):
                break
            time.sleep(0.1)
        env = dict(os.environ, SSH_AUTH_SOCK=socket_path)
        subprocess.run(["ssh-add", "-q", os.path.join(self.home, ".ssh", "id_ed25519")],
                       check=True, env=env, capture_output=True)
        result = self.ci("--mode", "deploy", "--workflowName", "wordcount", "--target",
                         self.make_target(self.sftp), "--deployDir", self.project("v1"),
                         "--hdfsRoot", self.hdfs_root, home=agent_home,
                         env={"SSH_AUTH_SOCK": socket_path})
        self.assert_ok(result)
        self.assert_deployed("v1")

    def test_an_unknown_host_key_is_refused_unless_accepted(self):
        other_home = os.path.join(self.dir, "new-home")
        shutil.copytree(self.home, other_home)
        os.remove(os.path.join(other_home, ".ssh", "known_hosts"))
        target = self.make_target(self.sftp)
        result = self.deploy(self.project("v1"), target, home=other_home)
        self.assert_fails(result, "unknown host key", "--accept-new-host-key", "SHA256:")
        self.assertFalse(os.path.exists(os.path.join(self.workflows, "wordcount.js")))
        self.assert_ok(self.deploy(self.project("v1"), target, None, "--accept-new-host-key",
                                   home=other_home))
        self.assert_deployed("v1")
        self.assert_ok(self.deploy(self.project("v1"), target, home=other_home))  # now known

    def test_a_changed_host_key_is_refused(self):
        other_home = os.path.join(self.dir, "changed-home")
        shutil.copytree(self.home, other_home)
        impostor = keygen(os.path.join(self.dir, "impostor"))
        write(os.path.join(other_home, ".ssh", "known_hosts"),
              "[127.0.0.1]:%d %s\n" % (self.sshd.port, impostor))
        result = self.deploy(self.project("v1"), self.make_target(self.sftp), home=other_home)
        self.assert_fails(result, "HOST KEY CHANGED")

    def test_a_refused_connection_is_a_clear_error(self):
        url = "sftp://127.0.0.1:%d/etc/celos/target.json" % free_port()
        result = self.deploy(self.project("v1"), url)
        self.assert_fails(result, "cannot connect", "refused")

    def test_argument_errors_are_one_line_and_a_non_zero_exit(self):
        target = self.make_target(lambda p: "file://" + p)
        no_hdfs = os.path.join(self.dir, "no-hdfs")
        write(os.path.join(no_hdfs, "workflow.js"), "var a = 1;\n")
        bad_target = os.path.join(self.dir, "bad-target.json")
        write(bad_target, '{"hadoop.hdfs-site.xml": "file:///h", "hadoop.core-site.xml": '
                          '"file:///c", "defaults.dir.uri": "file:///d"}')
        project = self.project("v1")
        cases = [
            (["--mode", "deploy", "--target", target, "--deployDir", project], "--workflowName"),
            (["--mode", "deploy", "--workflowName", "w", "--target", target, "--deployDir",
              project, "--hdfsRoot", "relative/root"], "absolute"),
            (["--mode", "deploy", "--workflowName", "w", "--target", target, "--deployDir",
              project, "--hdfsRoot", "/user/celos/app/"], "/"),
            (["--mode", "deploy", "--workflowName", "w", "--target", target, "--deployDir",
              no_hdfs], "hdfs/"),
            (["--mode", "deploy", "--workflowName", "w", "--target", "file://" + bad_target,
              "--deployDir", project], "workflows.dir.uri"),
            (["--mode", "redeploy", "--workflowName", "w", "--target", target], "redeploy"),
        ]
        for args, fragment in cases:
            with self.subTest(args=args):
                result = self.ci(*args)
                self.assert_fails(result, fragment)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertEqual(tree(self.dir + "/celos"), {})

    def test_help_describes_the_options(self):
        result = self.ci("--help")
        self.assert_ok(result)
        for option in ("--mode", "--workflowName", "--target", "--deployDir", "--hdfsRoot"):
            self.assertIn(option, result.stdout)


@unittest.skipUnless(os.path.exists(SSHD) and HAVE_WEBHDFS_FAKE, "needs sshd and fake_webhdfs.py")
class CelosCiWebHdfsTest(CelosCiTest):
    """The same deploys with HDFS behind the WebHDFS fake (fs.defaultFS hdfs://, the name node's
    HTTP address in hdfs-site.xml)."""

    def setUp(self):
        super().setUp()
        sys.path.insert(0, HADOOP_TESTS)
        from fake_process import FakeServer  # noqa: E402 (test/hadoop, optional)
        self.hdfs_dir = os.path.join(self.dir, "webhdfs")
        os.makedirs(self.hdfs_dir)
        self.webhdfs = FakeServer("fake_webhdfs.py", "--root", self.hdfs_dir)
        self.addCleanup(self.webhdfs.stop)
        self.hdfs_root = "/user/celos/app"
        write(os.path.join(self.dir, "conf", "core-site.xml"), """<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://namenode.invalid:8020</value></property>
</configuration>
""")
        write(os.path.join(self.dir, "conf", "hdfs-site.xml"), """<configuration>
  <property><name>dfs.namenode.http-address</name><value>127.0.0.1:%d</value></property>
</configuration>
""" % self.webhdfs.port)

    def assert_deployed(self, version, hdfs_app=None):
        super().assert_deployed(
            version, hdfs_app or os.path.join(self.hdfs_dir, "user/celos/app/wordcount"))

    def test_a_failed_hdfs_upload_leaves_the_old_deployment(self):
        target = self.make_target(self.sftp)
        self.assert_ok(self.deploy(self.project("v1"), target))
        self.webhdfs.control("/_control/state?standby=true")
        result = self.deploy(self.project("v2"), target)
        self.assert_fails(result, "cannot upload hdfs/", "previous deployment is in place")
        self.webhdfs.control("/_control/state?standby=false")
        self.assert_deployed("v1")

    # Checks whose HDFS side is a local directory; covered by CelosCiTest.
    def test_deploy_and_undeploy_over_sftp_with_a_local_hdfs(self):
        target = self.make_target(self.sftp)
        self.assert_ok(self.deploy(self.project("v1"), target))
        self.assert_deployed("v1")
        self.assert_ok(self.undeploy(target))
        self.assertEqual(tree(os.path.join(self.hdfs_dir, "user/celos/app")), {})

    def test_a_new_version_replaces_the_old_and_redeploying_is_idempotent(self):
        target = self.make_target(self.sftp)
        self.assert_ok(self.deploy(self.project("v1"), target))
        v2 = self.project("v2")
        self.assert_ok(self.deploy(v2, target))
        self.assert_deployed("v2")
        self.assert_ok(self.deploy(v2, target))
        self.assert_deployed("v2")
        self.assertEqual(os.listdir(os.path.join(self.hdfs_dir, "user/celos/app")), ["wordcount"])

    def test_a_failure_after_the_hdfs_swap_rolls_everything_back(self):
        self.skipTest("covered with the local HDFS side")

    def test_deploy_and_undeploy_with_file_targets(self):
        target = self.make_target(lambda p: "file://" + p)
        self.assert_ok(self.deploy(self.project("v1"), target))
        self.assert_deployed("v1")


if __name__ == "__main__":
    unittest.main()
