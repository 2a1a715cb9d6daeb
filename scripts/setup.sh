#!/usr/bin/env bash
# Installs every Debian 12 package that building, running and testing celos needs.
# Idempotent and quiet when everything is already there. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache git curl python3
  libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev
  duktape-dev libssh2-1-dev libcurl4-openssl-dev libfmt-dev libspdlog-dev libexpected-dev
  catch2 openssh-server openssh-client chromium wrk python3-websocket python3-yaml tmux
  python3-kubernetes python3-jsonschema
  postgresql libpq-dev
  libabsl-dev tzdata
  slurm-wlm munge
  clang libclang-rt-14-dev clang-format clang-tidy lld
)

# The Kubernetes tests run the real kubectl: keep one already on the machine, else Debian's.
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The tests start private PostgreSQL clusters (initdb refuses root): as this unprivileged user.
ensure_test_user() {
  if [ "$(id -u)" -eq 0 ] && ! id celos-test >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin celos-test
  fi
}
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
# Zone rules change several times a year and schedules in local time follow them (issue 26):
# `scripts/setup.sh --tzdata` (cron it, or run it with the host's updates) brings tzdata to the
# newest Debian ships; a running celos-server picks it up at its next reload and logs it.
if [ "${1:-}" = "--tzdata" ]; then
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq -o DPkg::Lock::Timeout=600 >/dev/null
  $sudo apt-get install -y -qq --only-upgrade -o DPkg::Lock::Timeout=600 tzdata >/dev/null
  dpkg-query -W -f='setup: tzdata ${Version}\n' tzdata >&2
fi
if [ ${#missing[@]} -eq 0 ]; then ensure_test_user; exit 0; fi

echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq -o DPkg::Lock::Timeout=600 >/dev/null
$sudo apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
$sudo apt-get install -y -qq --only-upgrade -o DPkg::Lock::Timeout=600 tzdata >/dev/null
ensure_test_user
