"""`cmake --install` of the build tree, then samples/consumer built against the installed package
with find_package(celos) / celos::celos, and again with pkg-config: other C++ tools can link
libcelos. Nothing of celos is rebuilt: the install copies what ctest's build produced."""

import os
import shutil
import subprocess
import tempfile
import unittest

SOURCE = os.environ["CELOS_SOURCE_DIR"]
BINARY = os.environ["CELOS_BINARY_DIR"]
CMAKE = os.environ.get("CELOS_CMAKE", "cmake")
CXX = os.environ.get("CELOS_CXX", "c++")
CONSUMER = os.path.join(SOURCE, "samples", "consumer")

# Quartz: noon every day; from 13:40 on the 13th the next three noons are the 14th to the 16th.
EXPECTED = ("2015-09-14T12:00:00.000Z\n2015-09-15T12:00:00.000Z\n2015-09-16T12:00:00.000Z\n")


def run(args, **kw):
    result = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
    if result.returncode != 0:
        raise AssertionError("%s exited with %d\n%s\n%s" % (
            " ".join(args), result.returncode, result.stdout, result.stderr))
    return result


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="celos-install-e2e-")
        cls.prefix = os.path.join(cls.root, "prefix")
        run([CMAKE, "--install", BINARY, "--prefix", cls.prefix])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def installed(self, *parts):
        return os.path.join(self.prefix, *parts)

    def test_the_install_puts_programs_library_headers_units_and_docs_in_the_usual_places(self):
        for program in ("celos-server", "celos-ui", "celos-ci", "celos"):
            self.assertTrue(os.access(self.installed("bin", program), os.X_OK), program)
        libdir = next(d for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
                      if os.path.exists(self.installed(d, "libcelos.a")))
        for path in (os.path.join(libdir, "libcelos_duktape.a"),
                     os.path.join(libdir, "cmake/celos/celosConfig.cmake"),
                     os.path.join(libdir, "cmake/celos/celosConfigVersion.cmake"),
                     os.path.join(libdir, "pkgconfig/celos.pc"),
                     "include/celos/cron.h", "include/celos/scheduler.h",
                     "lib/systemd/system/celos-server.service",
                     "share/bash-completion/completions/celos",
                     "share/doc/celos/user-guide.md", "share/doc/celos/operations.md",
                     "share/doc/celos/third_party/swagger-ui/LICENSE",
                     "share/doc/celos/samples/quickstart/local/workflows/wordcount.js"):
            self.assertTrue(os.path.exists(self.installed(path)), path)
        version = run([self.installed("bin", "celos-server"), "--version"]).stdout
        self.assertIn("0.", version)

    def test_a_cmake_consumer_finds_the_package_and_links_celos(self):
        build = os.path.join(self.root, "consumer-cmake")
        run([CMAKE, "-S", CONSUMER, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             "-DCMAKE_CXX_COMPILER=" + CXX, "-DCMAKE_PREFIX_PATH=" + self.prefix])
        run([CMAKE, "--build", build])
        program = os.path.join(build, "celos-next-times")
        out = run([program, "0 0 12 * * ?", "2015-09-13T13:40Z"]).stdout
        self.assertEqual(out, EXPECTED)
        bad = subprocess.run([program, "0 0 25 * * ?"], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("hour", bad.stderr)

    def test_pkg_config_gives_the_flags_to_compile_and_link_a_consumer(self):
        libdir = next(d for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
                      if os.path.exists(self.installed(d, "pkgconfig", "celos.pc")))
        env = dict(os.environ, PKG_CONFIG_PATH=self.installed(libdir, "pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "celos"], env=env).stdout.split()
        self.assertIn("-I" + os.path.realpath(self.installed("include")),
                      [f if not f.startswith("-I") else "-I" + os.path.realpath(f[2:])
                       for f in flags])
        program = os.path.join(self.root, "celos-next-times-pc")
        run([CXX, "-O1", "-o", program, os.path.join(CONSUMER, "main.cc")] + flags)
        out = run([program, "0 0 12 * * ?", "2015-09-13T13:40Z", "1"]).stdout
        self.assertEqual(out, EXPECTED.splitlines(keepends=True)[0])


if __name__ == "__main__":
    unittest.main()
