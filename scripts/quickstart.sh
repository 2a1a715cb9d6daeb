#!/usr/bin/env bash
# The quickstart: builds celos, prepares a celos home with the local wordcount sample
# (samples/quickstart/local) and input for the last few hours, then runs celos-server (stepping
# by itself) and celos-ui on 127.0.0.1 until Ctrl-C. No Hadoop needed.
#
# Usage: scripts/quickstart.sh [--home DIR] [--port N] [--ui-port N] [--hours N]
#                              [--auto-schedule SECONDS] [--stop-after SECONDS] [--no-build]
# Environment (the flags win): CELOS_HOME, CELOS_PORT (8080), CELOS_UI_PORT (8081),
# CELOS_QUICKSTART_HOURS (4), CELOS_AUTO_SCHEDULE (5), CELOS_QUICKSTART_SECONDS (run forever),
# CELOS_SKIP_BUILD=1 (use existing binaries), CELOS_SERVER / CELOS_UI (paths of the binaries).
#
# Idempotent: with the same --home, a second run keeps the state database and the outputs,
# refreshes the sample files and adds input only where it is missing; the build is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$(pwd)

home=${CELOS_HOME:-}
port=${CELOS_PORT:-8080}
ui_port=${CELOS_UI_PORT:-8081}
hours=${CELOS_QUICKSTART_HOURS:-4}
auto_schedule=${CELOS_AUTO_SCHEDULE:-5}
stop_after=${CELOS_QUICKSTART_SECONDS:-}
skip_build=${CELOS_SKIP_BUILD:-0}

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "quickstart: $*" >&2; exit 2; }
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --home) need_value "$@"; home=$2; shift 2 ;;
    --port) need_value "$@"; port=$2; shift 2 ;;
    --ui-port) need_value "$@"; ui_port=$2; shift 2 ;;
    --hours) need_value "$@"; hours=$2; shift 2 ;;
    --auto-schedule) need_value "$@"; auto_schedule=$2; shift 2 ;;
    --stop-after) need_value "$@"; stop_after=$2; shift 2 ;;
    --no-build) skip_build=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

is_number() { [[ "$1" =~ ^[0-9]+$ ]]; }
is_number "$port" || die "port must be a number, got '$port'"
is_number "$ui_port" || die "UI port must be a number, got '$ui_port'"
is_number "$hours" && [ "$hours" -ge 1 ] && [ "$hours" -le 48 ] || die "hours must be 1-48, got '$hours'"
is_number "$auto_schedule" && [ "$auto_schedule" -ge 1 ] || die "auto-schedule must be >= 1 seconds"
[ -z "$stop_after" ] || is_number "$stop_after" || die "stop-after must be seconds, got '$stop_after'"

# ---- build ----------------------------------------------------------------------------------
server=${CELOS_SERVER:-$source_dir/build/dev/celos-server/celos-server}
ui=${CELOS_UI:-$source_dir/build/dev/celos-ui/celos-ui}
cli=${CELOS_CLI:-$source_dir/build/dev/celos-cli/celos}
if [ "$skip_build" != 1 ]; then
  scripts/setup.sh
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
  echo "quickstart: building (build/dev; a second run reuses it)" >&2
  cmake --preset dev >/dev/null
  cmake --build --preset dev --target celos-server celos-ui celos-cli
fi
[ -x "$server" ] || die "no celos-server at $server (build it, or set CELOS_SERVER)"
[ -x "$ui" ] || die "no celos-ui at $ui (build it, or set CELOS_UI)"
command -v curl >/dev/null || die "curl is missing (scripts/setup.sh installs it)"

# ---- the celos home -------------------------------------------------------------------------
if [ -z "$home" ]; then
  home=$(mktemp -d "${TMPDIR:-/tmp}/celos-quickstart.XXXXXX")
fi
mkdir -p "$home"
home=$(cd "$home" && pwd)
case "$home" in *'"'*|*'\'*|*'@'*|*'|'*) die "the home path must not contain \" \\ @ or |" ;; esac
mkdir -p "$home"/{workflows,defaults,db,logs,data/input,data/output}

# Slots start at the top of the hour, (hours - 1) hours ago: exactly the hours given input.
now=$(date -u +%s)
first_hour=$(( now / 3600 * 3600 - (hours - 1) * 3600 ))
start_time=$(date -u -d "@$first_hour" +%Y-%m-%dT%H:%MZ)

# CELOS_QUICKSTART_SAMPLE: another sample of the same story (samples/quickstart/slurm/run.sh).
sample=${CELOS_QUICKSTART_SAMPLE:-$source_dir/samples/quickstart/local}
cp "$sample"/workflows/*.js "$home/workflows/"
sed -e "s|@CELOS_HOME@|$home|g" -e "s|@START_TIME@|$start_time|g" \
  "$sample/defaults/quickstart.js" > "$home/defaults/quickstart.js.tmp"
mv "$home/defaults/quickstart.js.tmp" "$home/defaults/quickstart.js"
cp "$sample/ui.json" "$home/ui.json"

# Input: a few lines of text per data center and hour, then _READY (written last, as a real
# upstream would, so the trigger never fires on a half-written bucket).
lines=("the quick brown fox jumps over the lazy dog"
       "the scheduler runs a slot when its input is ready"
       "every hour brings new data and every slot counts its words")
for dc in nyc lax; do
  for ((i = 0; i < hours; i++)); do
    t=$(( first_hour + i * 3600 ))
    dir=$home/data/input/$dc/$(date -u -d "@$t" +%Y-%m-%d)/$(date -u -d "@$t" +%H)00
    [ -e "$dir/_READY" ] && continue
    mkdir -p "$dir"
    {
      echo "hello from $dc at $(date -u -d "@$t" +%H)00"
      for ((n = 0; n <= i % 3; n++)); do printf '%s\n' "${lines[@]}"; done
    } > "$dir/part-0.txt"
    touch "$dir/_READY"
  done
done

# ---- run ------------------------------------------------------------------------------------
# Something accepts connections on the port (bash's /dev/tcp: no HTTP needed).
port_busy() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
port_busy "$port" && die "port $port is in use (another quickstart still running? use --port or CELOS_PORT)"
port_busy "$ui_port" && die "port $ui_port is in use (use --ui-port or CELOS_UI_PORT)"

server_pid=""
ui_pid=""
stop() {
  trap - INT TERM EXIT
  echo >&2
  echo "quickstart: stopping" >&2
  # SIGTERM: celos-server finishes a running step, then exits; the jobs it started run on.
  for pid in $ui_pid $server_pid; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $ui_pid $server_pid; do wait "$pid" 2>/dev/null || true; done
  echo "quickstart: stopped; the celos home stays in $home" >&2
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap 'stop' EXIT

"$server" --port "$port" --host 127.0.0.1 --workflows "$home/workflows" \
  --defaults "$home/defaults" --db "$home/db" --create-db --logs "$home/logs" \
  --hadoop-conf "$home" --autoSchedule "$auto_schedule" \
  >>"$home/logs/celos-server.out" 2>&1 &
server_pid=$!

wait_for() {  # wait_for URL PID NAME LOG: polls with a bound of 30 s
  for _ in $(seq 1 300); do
    curl -sf -o /dev/null --max-time 1 "$1" && return 0
    kill -0 "$2" 2>/dev/null || { tail -n 20 "$4" >&2; die "$3 exited (log: $4)"; }
    sleep 0.1
  done
  die "$3 does not answer on $1 (log: $4)"
}
wait_for "http://127.0.0.1:$port/version" "$server_pid" celos-server "$home/logs/celos-server.out"

"$ui" --port "$ui_port" --host 127.0.0.1 --celos "http://127.0.0.1:$port" \
  --config "$home/ui.json" >>"$home/logs/celos-ui.out" 2>&1 &
ui_pid=$!
wait_for "http://127.0.0.1:$ui_port/ui" "$ui_pid" celos-ui "$home/logs/celos-ui.out"

cat <<EOF

  celos is running the wordcount sample ($sample), no Hadoop needed.

  UI          http://127.0.0.1:$ui_port/ui
  API         http://127.0.0.1:$port/workflow-list
              curl -s 'http://127.0.0.1:$port/workflow-slots?id=wordcount-nyc'
  CLI         $cli --server http://127.0.0.1:$port status
              $cli --server http://127.0.0.1:$port slots wordcount-nyc
  celos home  $home
    workflows $home/workflows      (edit a .js file: the next step reloads it)
    input     $home/data/input/<dc>/<yyyy-mm-dd>/<HH>00/
    outputs   $home/data/output/<dc>/<yyyy-mm-dd>/<HH>00/part-00000
    state     $home/db             (jobs' stdout/stderr under db/jobs/)
    logs      $home/logs

  celos-server steps every $auto_schedule s: slots go WAITING -> READY -> RUNNING -> SUCCESS
  (green in the UI) within a minute. Rerun one: curl -X POST
  'http://127.0.0.1:$port/rerun?id=wordcount-nyc&time=$start_time'

  Ctrl-C stops both.
EOF

# sleep/wait in the background so that the traps run at once on Ctrl-C.
if [ -n "$stop_after" ]; then
  sleep "$stop_after" &
  wait $! || true
else
  wait "$server_pid" || true
  echo "quickstart: celos-server exited (log: $home/logs/celos-server.out)" >&2
  exit 1
fi
