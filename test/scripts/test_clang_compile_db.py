"""scripts/clang_compile_db.py: a GCC build's compile database as clang-tidy can read it (the
precompiled header of CELOS_PCH dropped, nothing else changed)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.environ.get("CELOS_SOURCE_DIR", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")), "scripts", "clang_compile_db.py")

GCC = ("/usr/bin/c++ -DX=1 -I/src/include -O2 -g -Wall -Wno-restrict -std=c++20 -Winvalid-pch "
       "-include /b/libcelos/CMakeFiles/celos.dir/cmake_pch.hxx -o a.o -c /src/a.cc")


def convert(entries):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(entries, f)
    try:
        return subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True,
                              timeout=60)
    finally:
        os.unlink(f.name)


class ClangCompileDbTest(unittest.TestCase):
    def test_the_precompiled_header_is_dropped_and_nothing_else(self):
        out = convert([{"directory": "/b", "file": "/src/a.cc", "command": GCC}])
        self.assertEqual(out.returncode, 0, out.stderr)
        (entry,) = json.loads(out.stdout)
        self.assertEqual(entry["command"],
                         "/usr/bin/c++ -DX=1 -I/src/include -O2 -g -Wall -Wno-restrict "
                         "-std=c++20 -o a.o -c /src/a.cc")
        self.assertEqual((entry["directory"], entry["file"]), ("/b", "/src/a.cc"))

    def test_arguments_form_and_other_includes_are_kept(self):
        args = ["c++", "-include", "config.h", "-Winvalid-pch", "-include", "/b/x/cmake_pch.hxx",
                "-c", "a.cc"]
        out = convert([{"directory": "/b", "file": "a.cc", "arguments": args}])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)[0]["arguments"],
                         ["c++", "-include", "config.h", "-c", "a.cc"])

    def test_an_unreadable_database_is_an_error_naming_it(self):
        out = subprocess.run([sys.executable, SCRIPT, "/nonexistent/compile_commands.json"],
                             capture_output=True, text=True, timeout=60)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("/nonexistent/compile_commands.json", out.stderr)


if __name__ == "__main__":
    unittest.main()
