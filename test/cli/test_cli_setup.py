"""End-to-end tests of how `celos` (issue 31) is set up: its token (--token-file, CELOS_TOKEN)
against a real celos-server with --auth-tokens, and its bash completion. The commands
themselves: test_cli.py."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from test_cli import CLI, SOURCE, CliCase, CelosServer, clean_env, workflow


class TokenTest(CliCase):
    """--token-file and CELOS_TOKEN against a server with --auth-tokens."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="celos-cli-tokens-")
        tokens = os.path.join(self.root, "tokens.json")
        with open(tokens, "w") as f:
            json.dump({"tokens": [{"name": "ops", "role": "operator",
                                   "sha256": hashlib.sha256(b"op-secret").hexdigest()}]}, f)
        os.chmod(tokens, 0o600)
        self.token_file = os.path.join(self.root, "token")
        with open(self.token_file, "w") as f:
            f.write("op-secret\n")
        self.server = CelosServer(workflows={"pp.js": workflow("pp", "true")},
                                  args=["--auth-tokens", tokens])

    def tearDown(self):
        self.server.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def test_a_refused_token_exits_1_and_a_given_one_is_sent(self):
        refused = self.celos("pause", "pp")
        self.assertEqual(refused.code, 1, refused)
        self.assertRegex(refused.err, r"^celos pause: celos-server answered 401: \{\"error\":.*\}\n$")
        wrong = self.celos("pause", "pp", env=clean_env(CELOS_TOKEN="not-it"))
        self.assertEqual(wrong.code, 1, wrong)
        self.assertEqual(self.ok("pause", "pp", "--token-file", self.token_file).out,
                         "pp is paused\n")
        self.assertEqual(self.ok("unpause", "pp", env=clean_env(CELOS_TOKEN="op-secret")).out,
                         "pp is not paused\n")
        self.assertEqual(self.celos("pause", "pp", "--token-file", self.token_file + ".nope").code, 2)


class CompletionTest(unittest.TestCase):
    def complete(self, *words):
        script = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _celos; echo "${COMPREPLY[*]}"'
                  % (os.path.join(SOURCE, "celos-cli", "celos.bash-completion"),
                     " ".join("'%s'" % w for w in words), len(words) - 1))
        env = clean_env(PATH=os.path.dirname(os.path.abspath(CLI)) + os.pathsep + os.environ["PATH"])
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                                timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout.split()

    def test_commands_options_and_modes_complete(self):
        self.assertEqual(self.complete("celos", "sl"), ["slots"])
        self.assertIn("step-down", self.complete("celos", "st"))
        self.assertEqual(self.complete("celos", "rerun", "wf", "--dr"), ["--dry-run"])
        self.assertEqual(self.complete("celos", "maintenance", "d"), ["drain"])
        self.assertEqual(self.complete("celos", "-o", "j"), ["json"])


if __name__ == "__main__":
    unittest.main()
