#!/usr/bin/env bash
# Automation API benchmark (issue 14): /metrics at 1,000 workflows, and /api/v1/workflow-slots
# with a bearer token against the legacy path without one. Needs wrk (scripts/setup.sh).
# Usage: bench/api/run_bench.sh [build dir]   (default build/release, else build/dev)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/release}; [ -x "$build/celos-server/celos-server" ] || build=$here/build/dev
dir=$(mktemp -d); trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir"/{workflows,defaults,db,logs}
for i in $(seq -w 1 1000); do
  cat > "$dir/workflows/w$i.js" <<JS
celos.defineWorkflow({"id": "w$i", "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(), "trigger": celos.alwaysTrigger(),
  "externalService": celos.commandExternalService("true"), "startTime": "2015-09-01T00:00Z"});
JS
done
token=bench-token-123
printf '{"tokens":[{"name":"bench","role":"viewer","sha256":"%s"}]}' \
  "$(printf %s $token | sha256sum | cut -d' ' -f1)" > "$dir/tokens.json"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$build/celos-server/celos-server" --port "$port" --workflows "$dir/workflows" \
  --defaults "$dir/defaults" --db "$dir/db" --logs "$dir/logs" --hadoop-conf "$dir" \
  --auth-tokens "$dir/tokens.json" 2>/dev/null & pid=$!
url=http://127.0.0.1:$port
until curl -sf "$url/workflow-list" >/dev/null; do sleep 0.2; done
curl -sf -X POST "$url/scheduler?time=2015-09-13T12:00Z" >/dev/null || true
echo "== /metrics at 1,000 workflows (20 scrapes, seconds each)"
for _ in $(seq 20); do curl -s -o /dev/null -w '%{time_total}\n' "$url/metrics"; done | sort -n |
  awk '{a[NR]=$1} END {printf "median %.4f s, max %.4f s\n", a[int((NR+1)/2)], a[NR]}'
q="id=w0500&end=2015-09-13T12:00Z"
echo "== legacy /workflow-slots, no token"
wrk -t2 -c8 -d10s "$url/workflow-slots?$q" | grep -E "Requests/sec|Latency"
echo "== /api/v1/workflow-slots with a token"
wrk -t2 -c8 -d10s -H "Authorization: Bearer $token" "$url/api/v1/workflow-slots?$q" |
  grep -E "Requests/sec|Latency"
