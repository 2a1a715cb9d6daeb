#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds once, runs the unit tests,
# then the end-to-end tests (they start the real binaries on 127.0.0.1).
# Usage: scripts/test.sh [preset]   (default: dev; also asan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}

scripts/setup.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)" --timeout 600
