#!/usr/bin/env bash
# The Slurm quickstart: the wordcount sample of scripts/quickstart.sh with every slot run as a
# Slurm batch job, on a private single-node Slurm cluster that this script starts (munged,
# slurmctld and slurmd on 127.0.0.1, everything under <home>/slurm) and stops again on exit.
# Nothing touches /etc/slurm, /etc/munge or the machine's services. Needs root (slurmd runs jobs
# as their submitter) and Debian's slurm-wlm and munge (scripts/setup.sh installs them).
#
# Usage: samples/quickstart/slurm/run.sh [the options of scripts/quickstart.sh]
#   e.g. samples/quickstart/slurm/run.sh --home /tmp/celos-slurm --port 8080 --ui-port 8081
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../../.." && pwd)
die() { echo "slurm quickstart: $*" >&2; exit 2; }

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
  home=$(mktemp -d "${TMPDIR:-/tmp}/celos-slurm-quickstart.XXXXXX")
  args+=(--home "$home")
fi
mkdir -p "$home"
home=$(cd "$home" && pwd)

[ "${CELOS_SKIP_BUILD:-0}" = 1 ] || "$source_dir/scripts/setup.sh"
[ "$(id -u)" -eq 0 ] || die "the private Slurm cluster needs root (slurmd starts the jobs)"

cluster=$home/slurm
stop_cluster() { python3 "$here/private_slurm.py" stop "$cluster" || true; }
trap stop_cluster EXIT
echo "slurm quickstart: starting a private Slurm cluster in $cluster" >&2
eval "$(python3 "$here/private_slurm.py" start "$cluster")"   # sets SLURM_CONF
export SLURM_CONF

# celos-server inherits SLURM_CONF, so its sbatch/squeue/scontrol talk to the private cluster.
CELOS_QUICKSTART_SAMPLE=$here "$source_dir/scripts/quickstart.sh" "${args[@]}"
