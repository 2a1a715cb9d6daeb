#!/usr/bin/env bash
# The Kubernetes quickstart: the wordcount sample of scripts/quickstart.sh with every slot run as
# a Kubernetes Job. No cluster is needed: this script starts the test suite's fake API server
# (test/kubernetes/fake_kube_apiserver.py, HTTPS with a throw-away certificate and a bearer
# token, pods run as local processes) under <home>/kube, writes <home>/kube/kubeconfig for it,
# and stops it on exit. kubectl works against it too (see README.md).
#
# Usage: samples/kubernetes/run.sh [the options of scripts/quickstart.sh]
#   e.g. samples/kubernetes/run.sh --home /tmp/celos-kube --port 8080 --ui-port 8081
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
die() { echo "kubernetes quickstart: $*" >&2; exit 2; }

home=${CELOS_HOME:-}
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --home) home=${args[$((i + 1))]:-} ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --no-build) export CELOS_SKIP_BUILD=1 ;;
  esac
done
if [ -z "$home" ]; then
  home=$(mktemp -d "${TMPDIR:-/tmp}/celos-kube-quickstart.XXXXXX")
  args+=(--home "$home")
fi
mkdir -p "$home/kube"
home=$(cd "$home" && pwd)
kube=$home/kube
[ "${CELOS_SKIP_BUILD:-0}" = 1 ] || "$source_dir/scripts/setup.sh"
command -v openssl >/dev/null || die "openssl is needed for the API server's certificate"

[ -s "$kube/cert.pem" ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
  -nodes -keyout "$kube/key.pem" -out "$kube/cert.pem" -days 30 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
[ -s "$kube/token" ] || head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$kube/token"
token=$(cat "$kube/token")

# The fake keeps its Jobs in <home>/kube/state.json, so a second run finds them again.
python3 "$source_dir/test/kubernetes/fake_kube_apiserver.py" --port 0 --token "$token" \
  --tls-cert "$kube/cert.pem" --tls-key "$kube/key.pem" --state "$kube/state.json" \
  > "$kube/port" 2> "$kube/apiserver.log" &
apiserver=$!
stop_apiserver() { kill "$apiserver" 2>/dev/null || true; wait "$apiserver" 2>/dev/null || true; }
trap stop_apiserver EXIT
for _ in $(seq 100); do [ -s "$kube/port" ] && break; sleep 0.1; done
port=$(head -1 "$kube/port")
[ -n "$port" ] || die "the fake API server did not start: $(cat "$kube/apiserver.log")"

cat > "$kube/kubeconfig" <<CONFIG
apiVersion: v1
kind: Config
current-context: quickstart
clusters:
- name: quickstart
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority: cert.pem
contexts:
- name: quickstart
  context:
    cluster: quickstart
    user: celos
    namespace: wordcount
users:
- name: celos
  user:
    token: $token
CONFIG
echo "kubernetes quickstart: API server https://127.0.0.1:$port (KUBECONFIG=$kube/kubeconfig)" >&2

CELOS_QUICKSTART_SAMPLE=$here "$source_dir/scripts/quickstart.sh" "${args[@]}"
