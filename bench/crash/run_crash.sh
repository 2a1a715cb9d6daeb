#!/usr/bin/env bash
# The crash-consistency test of test/server/test_crash.py with many kills (issue 11): 50
# workflows of command jobs, celos-server killed with SIGKILL at random moments of its steps and
# restarted, then the guarantees of docs/operations.md ("What celos guarantees on a crash") are
# checked. CI runs 12 kills; this runs 200 by default (about 8 minutes on 2 cores).
#
#   bench/crash/run_crash.sh [path/to/celos-server] [kills] [seed]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
server=${1:-$here/../../build/dev/celos-server/celos-server}
[ -x "$server" ] || { echo "run_crash.sh: no celos-server at $server (build it first)" >&2; exit 2; }
export CELOS_SERVER=$(cd "$(dirname "$server")" && pwd)/$(basename "$server")
export CELOS_CRASH_KILLS=${2:-200}
[ -n "${3:-}" ] && export CELOS_CRASH_SEED=$3
cd "$here/../../test/server"
exec python3 -m unittest -v test_crash
