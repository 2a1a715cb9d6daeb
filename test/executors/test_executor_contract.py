"""The executor contract (libcelos/testing/executor_contract.h) against the engines that cannot
run inside a unit test: a real private single-node Slurm (samples/quickstart/slurm/
private_slurm.py), the fake Oozie (test/hadoop/fake_oozie.py) and the fake Kubernetes API
server (test/kubernetes/fake_kube_apiserver.py, whose cluster runs pods as local processes).
Each executor's contract is a hidden Catch2 test case of its room's test binary
("[.slurm-contract]" in celos_slurm_test, "[.oozie-contract]" in celos_hadoop_test,
"[.kubernetes-contract]" in celos_kubernetes_test), run here with the engine's address in the
environment; the command service's contract runs with the unit tests (celos_command_test).

A contract run passes when the binary exits 0 and Catch2 reports its one test case passed (a
filter that matched nothing, or a case that was skipped, fails here)."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("CELOS_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
BINARY = os.environ.get("CELOS_BINARY_DIR", os.path.join(SOURCE, "build", "dev"))
sys.path.insert(0, os.path.join(HERE, "..", "hadoop"))
sys.path.insert(0, os.path.join(SOURCE, "samples", "quickstart", "slurm"))
from fake_process import FakeServer  # noqa: E402
import private_slurm  # noqa: E402


def run_contract(binary, tag, env):
    """Runs the hidden test case `tag` of `binary`; returns Catch2's output."""
    path = os.path.join(BINARY, binary)
    done = subprocess.run([path, tag, "--durations", "yes"], env=dict(os.environ, **env),
                          capture_output=True, text=True, timeout=900)
    output = done.stdout + done.stderr
    return done.returncode, output


class ContractRun(unittest.TestCase):
    def check_passed(self, code, output):
        self.assertEqual(code, 0, output[-6000:])
        # "All tests passed (N assertions in 1 test case)": the filter matched the one case.
        match = re.search(r"All tests passed \((\d+) assertions? in (\d+) test case", output)
        self.assertIsNotNone(match, output[-3000:])
        self.assertEqual(match.group(2), "1", output[-3000:])
        self.assertGreater(int(match.group(1)), 20, output[-3000:])


class OozieContract(ContractRun):
    def test_the_oozie_service_keeps_the_executor_contract(self):
        fake = FakeServer("fake_oozie.py")
        self.addCleanup(fake.stop)
        code, output = run_contract("libcelos/src/io/hadoop/celos_hadoop_test",
                                    "[.oozie-contract]",
                                    {"CELOS_CONTRACT_OOZIE_URL": fake.url("/oozie")})
        self.check_passed(code, output)


class KubernetesContract(ContractRun):
    def test_the_kubernetes_service_keeps_the_executor_contract(self):
        fake = FakeServer(os.path.join("..", "kubernetes", "fake_kube_apiserver.py"),
                          "--token", "contract-token", "--forbidden-namespace", "locked")
        self.addCleanup(fake.stop)
        code, output = run_contract("libcelos/src/io/kubernetes/celos_kubernetes_test",
                                    "[.kubernetes-contract]",
                                    {"CELOS_CONTRACT_KUBE_SERVER": fake.url(),
                                     "CELOS_CONTRACT_KUBE_TOKEN": "contract-token",
                                     "CELOS_CONTRACT_KUBE_FORBIDDEN": "locked"})
        self.check_passed(code, output)


class SlurmContract(ContractRun):
    def test_the_slurm_service_keeps_the_executor_contract(self):
        missing = private_slurm.missing_programs()
        if missing:
            self.skipTest("Slurm is not installed (missing %s): scripts/setup.sh installs "
                          "slurm-wlm and munge" % ", ".join(missing))
        root = tempfile.mkdtemp(prefix="celos-slurm-contract-")
        cluster = private_slurm.Cluster(root)
        self.addCleanup(cluster.remove)
        cluster.start()
        code, output = run_contract("libcelos/src/io/slurm/celos_slurm_test",
                                    "[.slurm-contract]", {"SLURM_CONF": cluster.conf})
        self.check_passed(code, output)


if __name__ == "__main__":
    unittest.main()
