#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds once, checks the style
# (scripts/lint.sh: clang-format and clang-tidy on the C++ files of the last commit and
# uncommitted ones), runs the unit tests, then the end-to-end tests (they start the real
# binaries on 127.0.0.1). Then, as CI does:
# the unit tests (not the end-to-end ones) under the asan and tsan presets, and every fuzzer of
# fuzz/ for a bounded time (CELOS_FUZZ_SECONDS of a core each, default 20, all at once).
#
# Usage: scripts/test.sh          everything (what .ci/run runs)
#        scripts/test.sh PRESET   only PRESET's build and tests (dev, asan, tsan), or `fuzz`
# Works without a terminal (CI=true): no colours, no prompts. With CI=true (.ci/run sets it),
# `all` removes each preset's build once its tests passed (the peak: about 10.3 GB, see check_disk).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}

scripts/setup.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Paths relative to the checkout in ccache's keys: a fresh clone elsewhere reuses the cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
jobs=$(nproc)

full() {  # full PRESET [OTHER...]: every target, the style checks, every test of PRESET
  local preset=$1
  shift
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  scripts/lint.sh
  # The OTHER presets' unit-test builds run beside the tests, at a lower priority: the
  # end-to-end tests leave 44 % of the cores idle (ctest 269 s, 300 s of CPU on 2 cores).
  local side="" side_log="build/side-builds.log"
  if [ $# -gt 0 ]; then
    echo "test.sh: building the unit tests of $* beside $preset's tests (log: $side_log)" >&2
    (renice -n 10 -p "$BASHPID" >/dev/null
      for other in "$@"; do timed "$other (unit-test build, beside)" unit_build "$other"; done
    ) >"$side_log" 2>&1 &
    side=$!
  fi
  # Twice as many tests as cores: the end-to-end tests mostly wait on the servers they start
  # (two of the longest used 40 s of CPU in 126 s), and they pass so on a loaded machine too.
  local status=0
  ctest --preset "$preset" -j "$((jobs * 2))" --timeout 600 || status=$?
  if [ -n "$side" ]; then
    if wait "$side"; then
      grep "^test.sh:" "$side_log" >&2 || true
    else
      cat "$side_log" >&2
      echo "test.sh: the unit-test builds of $* failed (above)" >&2
      status=1
    fi
  fi
  return "$status"
}

unit_build() {  # unit_build PRESET: configures PRESET and builds its unit-test binaries only
  cmake --preset "$1" -DCELOS_BUILD_BENCH=OFF >/dev/null
  local targets
  targets=$(cmake --build --preset "$1" --target help |
    sed -n 's/^\(celos_[a-z0-9_]*_test\): phony$/\1/p')
  [ -n "$targets" ] || { echo "test.sh: no unit-test targets in preset $1" >&2; return 1; }
  # shellcheck disable=SC2086 # one word per target
  cmake --build --preset "$1" -j "$jobs" --target $targets
}

unit() {  # unit PRESET: only the unit-test binaries (no servers, no benchmarks), their tests
  unit_build "$1"
  # Their temporary directories on a tmpfs when there is one: the dev preset's tests already
  # ran on the disk, and here a sync of the disk waits for whatever else writes to it (a build
  # being removed, the page cache of the last link): the file database's contract took 104 s
  # under tsan so, 5 s alone.
  local tmp=""
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    tmp=$(mktemp -d /dev/shm/celos-unit-XXXXXX)
    chmod 1777 "$tmp"  # as /tmp: the test PostgreSQL runs as its own user when we are root
  fi
  local status=0
  TMPDIR=${tmp:-${TMPDIR:-/tmp}} \
    TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}" \
    ctest --preset "$1" -j "$jobs" --timeout 600 -LE e2e || status=$?
  [ -z "$tmp" ] || rm -rf "$tmp"
  return "$status"
}

fuzz() {  # every fuzzer at once, CELOS_FUZZ_SECONDS of a core each, on a copy of its corpus
  local seconds=${CELOS_FUZZ_SECONDS:-20}
  cmake --preset fuzz >/dev/null
  local targets
  targets=$(cd fuzz && ls -d fuzz_*/ | tr -d /)
  # shellcheck disable=SC2086 # one word per target
  cmake --build --preset fuzz -j "$jobs" --target $targets
  local work
  work=$(mktemp -d /tmp/celos-fuzz-XXXXXX)
  # All at once for seconds x fuzzers / cores: each gets its seconds of a core, and no core idles
  # in a last round (five fuzzers two at a time took three rounds, the last on one core).
  local count wall
  count=$(echo "$targets" | wc -w)
  wall=$(((seconds * count + jobs - 1) / jobs))
  local -a names=() pids=()
  for dir in fuzz/fuzz_*/; do
    local name
    name=$(basename "$dir")
    mkdir -p "$work/$name"
    cp -r "$dir/corpus/." "$work/$name/"
    echo "fuzz: $name for ${wall}s, with $((count - 1)) others on $jobs cores" >&2
    (cd "$work" && exec "$OLDPWD/build/fuzz/fuzz/$name" -max_total_time="$wall" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 "$work/$name" 2>"$work/$name.log") &
    names+=("$name") pids+=($!)
  done
  local i failed=0
  for i in "${!pids[@]}"; do
    local name=${names[$i]}
    if ! wait "${pids[$i]}"; then
      tail -n 60 "$work/$name.log" >&2
      echo "fuzz: $name found a problem (reproducer in $work)" >&2
      failed=1
      continue
    fi
    grep -h "stat::number_of_executed_units" "$work/$name.log" | sed "s/^/fuzz: $name /" >&2
  done
  [ "$failed" = 0 ] || return 1
  rm -rf "$work"
}

timed() {  # timed NAME COMMAND...: runs COMMAND and says how long it took (CI time, issue 24)
  local start=$SECONDS
  "${@:2}"
  echo "test.sh: $1 took $((SECONDS - start)) s" >&2
}

# A full dev build takes 4.7 GB, asan's and tsan's unit tests 4.0 and 1.6 GB, fuzz 0.2 GB: the
# dev stage, with the two beside it, 10.3 GB. A disk that fills during a link kills the linker
# with a bus error, which says nothing about the disk.
check_disk() {  # check_disk GB WHAT: warns when less than GB are free under build/ for WHAT
  mkdir -p build
  local free_kb
  free_kb=$(df -Pk build | awk 'NR == 2 {print $4}')
  if [ "$free_kb" -lt $(($1 * 1024 * 1024)) ]; then
    echo "test.sh: warning: only $((free_kb / 1024)) MB free under $PWD/build;" \
      "$2 needs up to $1 GB (a full disk shows as a linker bus error)" >&2
  fi
}

stage() {  # stage PRESET GB NAME COMMAND...: a preset's stage; under CI its build goes once passed
  check_disk "$2" "the $1 stage"
  timed "${@:3}"
  # CI runs each preset once in a fresh clone: its build is not needed after its tests passed,
  # and removing it keeps the peak disk use to the dev stage's (its build and the two beside).
  if [ "${CI:-}" = true ]; then rm -rf "build/$1"; fi
}

case "$what" in
  all)
    stage dev 11 "dev (build, unit and e2e tests; asan, tsan built beside)" full dev asan tsan
    stage asan 1 "asan (unit tests)" unit asan
    stage tsan 1 "tsan (unit tests)" unit tsan
    stage fuzz 1 "fuzz (build, ${CELOS_FUZZ_SECONDS:-20} s of a core per fuzzer)" fuzz
    ;;
  fuzz) fuzz ;;
  dev) full dev ;;
  *) unit "$what" ;;
esac
