#!/usr/bin/env bash
# Throughput and latency of celos-server's reads under load (issue 4):
#   GET /workflow-slots?id=... (168 slots) and GET /workflow-list, with 1,000 workflows loaded
#   and --autoSchedule 1 stepping all of them every second, measured with wrk.
#
#   bench/server/run_bench.sh [path/to/celos-server] [seconds per run] [connections]
#
# Needs wrk (Debian package `wrk`) and python3. Uses 127.0.0.1 and a temporary directory.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
server=${1:-$here/../../build/release/celos-server/celos-server}
duration=${2:-15}
connections=${3:-32}
[ -x "$server" ] || { echo "run_bench.sh: no celos-server at $server (build it first)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "run_bench.sh: wrk is not installed" >&2; exit 2; }

root=$(mktemp -d /tmp/celos-bench-server-XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$root"
}
trap cleanup EXIT
mkdir -p "$root/workflows" "$root/defaults" "$root/db"

# 1,000 hourly workflows in 100 files. Their trigger is never ready, so that each automatic step
# evaluates every workflow's 168 slots of the window without spawning 1,000 commands a second.
# w0000 has a week of stored SUCCESS states, the shape /workflow-slots usually returns.
python3 - "$root" <<'PY'
import datetime, json, os, sys
root = sys.argv[1]
for f in range(100):
    with open(os.path.join(root, "workflows", "bench-%02d.js" % f), "w") as out:
        for w in range(10):
            out.write('celos.defineWorkflow({"id": "w%04d", "schedule": celos.hourlySchedule(), '
                      '"schedulingStrategy": celos.serialSchedulingStrategy(), '
                      '"trigger": celos.orTrigger(), '
                      '"externalService": celos.commandExternalService("true"), '
                      '"startTime": "2000-01-01T00:00Z"});\n' % (f * 10 + w))
now = datetime.datetime.utcnow().replace(minute=0, second=0, microsecond=0)
for h in range(1, 169):
    t = now - datetime.timedelta(hours=h)
    d = os.path.join(root, "db", "state", "w0000", t.strftime("%Y-%m-%d"))
    os.makedirs(d, exist_ok=True)
    name = t.strftime("%H:%M:%S.000Z")
    with open(os.path.join(d, name), "w") as out:
        json.dump({"time": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "status": "SUCCESS",
                   "externalID": "job-%d" % h, "retryCount": 0}, out)
PY

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$server" --port "$port" --workflows "$root/workflows" --defaults "$root/defaults" \
  --db "$root/db" --create-db --logs "$root/logs" --hadoop-conf "$root" --autoSchedule 1 \
  2>"$root/server.err" &
pid=$!
for _ in $(seq 1 200); do
  curl -sf "http://127.0.0.1:$port/version" >/dev/null && break
  sleep 0.1
done
count=$(curl -sf "http://127.0.0.1:$port/workflow-list" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["ids"]))')
slots=$(curl -sf "http://127.0.0.1:$port/workflow-slots?id=w0000" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["slots"]))')
echo "celos-server on port $port: $count workflows, w0000 has $slots slots; wrk -t2 -c$connections -d${duration}s"

run() {
  echo
  echo "== GET $1"
  wrk -t2 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:$port$1" |
    grep -E "Requests/sec|Latency|50%|90%|99%|requests in|Non-2xx|Socket errors"
}
run "/workflow-slots?id=w0000"
run "/workflow-list"

echo
steps=$(grep -c "step at .* finished" "$root/logs"/celos*.log || true)
echo "automatic steps during the run: $steps; the last ones:"
grep "step at .* finished" "$root/logs"/celos*.log | tail -3 | sed 's/^/  /'
