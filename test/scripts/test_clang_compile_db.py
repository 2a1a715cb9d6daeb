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


def write_unity(build, relative, text):
    """A unity file at build/relative with `text`; its path."""
    path = os.path.join(build, *relative.split("/"))
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


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

    def test_a_unity_file_becomes_one_entry_per_source_it_includes(self):
        with tempfile.TemporaryDirectory() as build:
            unity = write_unity(build, "lib/celos_unity/celos/unity_0.cc",
                                '// Generated.\n#include "/src/a.cc"\n#include "/src/b.cc"\n')
            out = convert([{"directory": build, "file": unity,
                            "command": GCC.replace("/src/a.cc", unity)},
                           {"directory": build, "file": "/src/c.cc", "command": GCC}])
            self.assertEqual(out.returncode, 0, out.stderr)
            entries = json.loads(out.stdout)
            self.assertEqual([e["file"] for e in entries], ["/src/a.cc", "/src/b.cc", "/src/c.cc"])
            self.assertTrue(entries[1]["command"].endswith("-o a.o -c /src/b.cc"))
            self.assertNotIn("celos_unity", entries[1]["command"])
            self.assertNotIn("cmake_pch", entries[1]["command"])

    def test_relative_includes_are_resolved_from_the_unity_file(self):
        with tempfile.TemporaryDirectory() as build:
            unity = write_unity(build, "lib/celos_unity/celos/unity_0.cc",
                                '// Generated.\n#include "../../../src/a.cc"\n')
            out = convert([{"directory": build, "file": unity,
                            "command": GCC.replace("/src/a.cc", unity)}])
            self.assertEqual(out.returncode, 0, out.stderr)
            (entry,) = json.loads(out.stdout)
            self.assertEqual(entry["file"], os.path.join(build, "src", "a.cc"))
            self.assertTrue(entry["command"].endswith("-c " + os.path.join(build, "src", "a.cc")))

    def test_a_missing_unity_file_is_an_error_naming_it(self):
        unity = "/nonexistent/lib/celos_unity/x/unity_0.cc"
        out = convert([{"directory": "/b", "file": unity, "command": GCC.replace("/src/a.cc", unity)}])
        self.assertNotEqual(out.returncode, 0)
        self.assertIn(unity, out.stderr)

    def test_an_unreadable_database_is_an_error_naming_it(self):
        out = subprocess.run([sys.executable, SCRIPT, "/nonexistent/compile_commands.json"],
                             capture_output=True, text=True, timeout=60)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("/nonexistent/compile_commands.json", out.stderr)


if __name__ == "__main__":
    unittest.main()
