#!/usr/bin/env bash
# The style checks scripts/test.sh runs after the dev build, on the C++ files a change touches
# (the commits since CELOS_LINT_BASE, default HEAD~1, i.e. the last commit, and whatever is not
# committed yet):
#   1. layout: each such file is as clang-format (.clang-format) writes it, in 500 lines or fewer,
#      each function in 60 lines or fewer (scripts/function_length.py);
#   2. bugs: clang-tidy (.clang-tidy, a short list of bug-finding checks) on each such .cc that
#      the dev build compiles (it reads build/dev/compile_commands.json).
# A whole-tree tidy costs about an hour of CPU on this project, hence changed files only.
#
# Usage: scripts/lint.sh            both checks
#        scripts/lint.sh --fix      rewrite the layout of the changed files in place
#        scripts/lint.sh --fix-all  rewrite the layout of every C++ file of ours
# CELOS_LINT_BASE=main scripts/lint.sh checks a whole branch's change.
set -euo pipefail
cd "$(dirname "$0")/.."

# Our C++: the library, the executables, benchmarks, fuzzers, samples; not third_party/.
ours=('libcelos/*.cc' 'libcelos/*.h' 'celos-*/*.cc' 'celos-*/*.h' 'bench/*.cc' 'bench/*.h'
      'fuzz/*.cc' 'fuzz/*.h' 'samples/*.cc' 'samples/*.h')

if [ "${1:-}" = "--fix-all" ]; then
  git ls-files -- "${ours[@]}" | xargs -r clang-format -i
  exit 0
fi

# A Catch2 test whose name starts with "-" is taken for a flag: ctest can never run it.
if git grep -n 'TEST_CASE("-' -- 'libcelos/*.cc' >&2; then
  echo "lint: a test name above starts with '-' (Catch2 reads it as a flag)" >&2
  exit 1
fi
# Catch2's ctest discovery (-DCELOS_TESTS_BY_FILE=OFF) splits a name at ';' into two that
# match no case, which then "pass" without running.
if git grep -nE 'TEST_CASE(_METHOD)?\(([A-Za-z_:]+, *)?"[^"]*;' -- 'libcelos/*.cc' >&2; then
  echo "lint: a test name above holds ';' (ctest's discovery would split it; use a comma)" >&2
  exit 1
fi

base=${CELOS_LINT_BASE:-HEAD~1}
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  # A shallow clone has no parent to compare with: what changed is unknown, so nothing is checked.
  echo "lint: no commit $base here (a shallow clone?): skipped" >&2
  exit 0
fi
changed=$( { git diff --name-only --diff-filter=d "$base" -- "${ours[@]}"
             git ls-files -o --exclude-standard -- "${ours[@]}"; } | sort -u)
[ -n "$changed" ] || { echo "lint: no C++ file changed since $base" >&2; exit 0; }

if [ "${1:-}" = "--fix" ]; then
  echo "$changed" | xargs -r clang-format -i
  exit 0
fi

status=0
echo "lint: clang-format on $(echo "$changed" | wc -l) changed file(s) since $base" >&2
unformatted=$(echo "$changed" | xargs -r clang-format --dry-run 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: .*\[-Wclang-format-violations\]$/\1/p' | sort -u)
if [ -n "$unformatted" ]; then
  echo "lint: not laid out as .clang-format says (scripts/lint.sh --fix rewrites them):" >&2
  printf '  %s\n' $unformatted >&2
  status=1
fi

# Files stay under 500 lines (issue 24; docs/architecture.md): split along a seam a reader would
# name.
long=$(echo "$changed" | xargs -r wc -l | awk '$2 != "total" && $1 > 500 {print "  " $2 " (" $1 " lines)"}')
if [ -n "$long" ]; then
  echo "lint: over 500 lines (split along a seam a reader would name):" >&2
  echo "$long" >&2
  status=1
fi

# Functions stay within 60 lines (issue 24), tests and mains too: the changed files.
# shellcheck disable=SC2086 # one word per file
if ! python3 scripts/function_length.py $changed >&2; then
  echo "lint: functions over 60 lines above (split along a seam a reader would name)" >&2
  status=1
fi

database=build/dev/compile_commands.json
[ -f "$database" ] || { echo "lint: $database is missing: build the dev preset first" >&2; exit 1; }
# clang-tidy is clang: it cannot read GCC's precompiled header (CELOS_PCH) nor knows GCC-only
# warnings, so it reads a copy of the database without them (every file compiles without the
# PCH: CELOS_PCH=OFF builds it so), where each unity file of the build (CELOS_UNITY) is
# replaced by the sources it includes.
tidy_db=$(mktemp -d /tmp/celos-tidy-db-XXXXXX)
trap 'rm -rf "$tidy_db"' EXIT
python3 scripts/clang_compile_db.py "$database" >"$tidy_db/compile_commands.json"
# Translation units the dev build compiles (headers are checked through them: HeaderFilterRegex).
units=$(echo "$changed" | grep '\.cc$' | while read -r f; do
  grep -q "\"file\": \"$PWD/$f\"" "$tidy_db/compile_commands.json" && echo "$f"; done || true)
if [ -n "$units" ]; then
  echo "lint: clang-tidy on $(echo "$units" | wc -l) file(s)" >&2
  out=$tidy_db/tidy.out
  if ! echo "$units" | xargs -r -P "$(nproc)" -n 1 clang-tidy -p "$tidy_db" --quiet \
         --extra-arg=-Wno-unknown-warning-option >"$out" 2>/dev/null; then
    cat "$out" >&2
    echo "lint: clang-tidy found problems (above)" >&2
    status=1
  fi
fi
exit $status
