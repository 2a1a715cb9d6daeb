#!/usr/bin/env python3
"""PostgreSQL benchmarks (bench/README.md): the scheduler step on PostgreSQL vs. the file
database, and GET /workflow-slots on a standby. Starts a private PostgreSQL (fsync on, as in
production) from test/pg_util.py.

    bench/postgres/run_bench.py [--build build/dev] [N...]"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test"))
import pg_util  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(HERE, "..", "..", "build", "dev"))
    parser.add_argument("--with-file", action="store_true",
                        help="also run the file database (slow: N x 168 fsynced files)")
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1000])
    args = parser.parse_args()
    bench = os.path.join(args.build, "bench", "celos_scheduler_bench")
    why_not = pg_util.available()
    if why_not:
        sys.exit(why_not)
    pg = pg_util.PrivatePostgres(fsync=True)
    # A private directory: another bench run on the machine must not share /tmp/celos-bench-N.
    scratch = tempfile.mkdtemp(prefix="celos-pg-bench-")
    try:
        for n in args.sizes:
            pg.create_database("bench_%d" % n)
        sizes = ["--dir", scratch] + [str(n) for n in args.sizes]
        if args.with_file:
            print("file database:", flush=True)
            subprocess.run([bench] + sizes, check=True)
        print("PostgreSQL (fsync on, one private server on this machine):", flush=True)
        subprocess.run([bench, "--state-db", pg.uri("bench_{n}")] + sizes, check=True)
    finally:
        pg.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
