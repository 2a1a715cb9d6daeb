#!/usr/bin/env bash
# Three local celos-server nodes on one private PostgreSQL, with the quickstart's workflows:
#
#   samples/cluster/run.sh [path/to/celos-server]      (default: build/dev/celos-server/celos-server)
#
# Nodes on http://127.0.0.1:8081, :8082, :8083 (GET /api/v1/cluster on any of them shows the
# leader). Ctrl-C stops everything and removes the temporary directory. Try:
#   curl -s localhost:8082/api/v1/cluster
#   curl -s -X POST 'localhost:8082/scheduler'                      # forwarded to the leader
#   curl -s -X POST 'localhost:8081/api/v1/cluster/step-down?seconds=60'
#   kill -9 <the leader's pid>: another node leads within --lease-seconds + 5 s
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
server=${1:-$repo/build/dev/celos-server/celos-server}
pgbin=${PGBIN:-/usr/lib/postgresql/15/bin}
[ -x "$server" ] || { echo "no celos-server at $server (build it first)" >&2; exit 2; }
[ -x "$pgbin/initdb" ] || { echo "no PostgreSQL in $pgbin (scripts/setup.sh installs it)" >&2; exit 2; }

work=$(mktemp -d /tmp/celos-cluster-XXXXXX)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then  # initdb refuses root: run PostgreSQL as celos-test
  id celos-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin celos-test
  chown celos-test "$work"
  as_pg=(runuser -u celos-test --)
fi
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

pgport=54329
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U celos --auth=trust -E UTF8 >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $pgport -c unix_socket_directories=$work" start >/dev/null
"$pgbin/createdb" -h "$work" -p "$pgport" -U celos celos
uri="postgresql://celos@127.0.0.1:$pgport/celos"

mkdir -p "$work/jobs-db"   # shared by all nodes: command jobs are found from any of them
for i in 1 2 3; do
  mkdir -p "$work/logs$i"
  "$server" --port "808$i" --workflows "$repo/samples/quickstart/local/workflows" \
    --defaults "$repo/samples/quickstart/local/defaults" --db "$work/jobs-db" \
    --logs "$work/logs$i" --state-db "$uri" --node-id "node$i" --autoSchedule 10 \
    2> "$work/node$i.err" &
  pids+=($!)
  echo "node$i: http://127.0.0.1:808$i (pid $!, log $work/logs$i/celos.log)"
done
sleep 2
curl -s localhost:8081/api/v1/cluster; echo
echo "Ctrl-C stops the three nodes and PostgreSQL."
wait
