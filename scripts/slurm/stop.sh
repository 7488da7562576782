#!/usr/bin/env bash
# Stops the single-node cluster of scripts/slurm/start.sh: cancels its jobs,
# then stops slurmd, slurmctld and munged by the pids they recorded. The
# state directory (logs, config) stays for inspection.
set -uo pipefail

state=${TRMAML_SLURM_STATE:-/var/tmp/trmaml-slurm}
export SLURM_CONF=$state/slurm.conf

stop() { # pidfile name
  [ -e "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  echo "scripts/slurm/stop.sh: $2 (pid $pid) did not stop within 10 s" >&2
}

if [ -e "$state/slurmctld.pid" ] && command -v scancel >/dev/null; then
  scancel --user="$(id -un)" 2>/dev/null || true
fi
stop "$state/slurmd.pid" slurmd
stop "$state/slurmctld.pid" slurmctld
stop "$state/munged.pid" munged
echo "slurm stopped (state kept in $state)"
