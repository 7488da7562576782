#!/usr/bin/env bash
# Starts a single-node Slurm cluster on this machine, as root, for trying and
# testing `trmaml experiment -slurm` (docs/cluster.md): installs Debian's
# slurm-wlm and munge when missing, writes a minimal slurm.conf for this host
# (select/cons_tres, the machine's CPUs and memory), creates the munge key if
# there is none, starts munged, slurmctld and slurmd, and waits until sinfo
# shows the node idle. scripts/slurm/stop.sh stops them.
#
# It works in a container without systemd or a writable cgroup hierarchy:
# processes are tracked by parent (proctrack/linuxproc), no task or cgroup
# plugin binds them, and there is no accounting database (so no sacct).
#
# State (config, spool, logs, pid files) lives in $TRMAML_SLURM_STATE
# (default /var/tmp/trmaml-slurm). /etc/slurm/slurm.conf is made a link to
# the config written there, so that sbatch and squeue find it, unless it is
# already a file this script did not write. Exits 1 with the reason on
# stderr when the daemons cannot start.
set -euo pipefail

state=${TRMAML_SLURM_STATE:-/var/tmp/trmaml-slurm}
conf=$state/slurm.conf
fail() { echo "scripts/slurm/start.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "must run as root (it installs packages and starts the daemons as root)"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
   ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || fail "slurm-wlm and munge are not installed and there is no apt-get to install them"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y slurm-wlm munge >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y slurm-wlm munge >/dev/null; } ||
    fail "apt-get install slurm-wlm munge failed"
fi

if sinfo -h -o %t >/dev/null 2>&1 && [ -e "$state/slurmctld.pid" ] && kill -0 "$(cat "$state/slurmctld.pid")" 2>/dev/null; then
  echo "slurm already running (state in $state)"
  exit 0
fi

mkdir -p "$state"/{ctld,spool,log} /run/munge /var/lib/munge /etc/munge
host=$(hostname -s)
cpus=$(nproc --all)
mem_mb=$(free -m | awk '/^Mem:/ {print $2}')
real_mb=$((mem_mb * 9 / 10)) # slurmd refuses a node announcing more than it has

cat >"$conf" <<CONF
# Written by trmaml scripts/slurm/start.sh: a single-node cluster on $host.
ClusterName=trmaml
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
JobRequeue=1
MinJobAge=3600
KillWait=30
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$real_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

etc=/etc/slurm/slurm.conf
mkdir -p /etc/slurm
if [ -e "$etc" ] && ! [ -L "$etc" ] && ! grep -q 'trmaml scripts/slurm/start.sh' "$etc"; then
  fail "$etc exists and was not written by this script: not replacing it (move it away, or set SLURM_CONF=$conf yourself)"
fi
ln -sfn "$conf" "$etc"
export SLURM_CONF=$conf

if ! [ -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chmod 0400 /etc/munge/munge.key
if ! munge -n </dev/null >/dev/null 2>&1; then
  munged --force --key-file=/etc/munge/munge.key --socket=/run/munge/munge.socket.2 \
    --log-file="$state/log/munged.log" --pid-file="$state/munged.pid" ||
    fail "munged did not start"
fi
for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
munge -n </dev/null | unmunge >/dev/null 2>&1 || fail "munge cannot encode and decode a credential"

slurmctld -f "$conf" || fail "slurmctld did not start: see $state/log/slurmctld.log"
slurmd -f "$conf" || fail "slurmd did not start: see $state/log/slurmd.log"

for _ in $(seq 120); do
  st=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
  case $st in
    idle*) echo "slurm is up: node $host idle with $cpus CPUs and ${real_mb} MB (config $conf)"; exit 0 ;;
  esac
  sleep 0.5
done
fail "node $host not idle after 60 s (sinfo says '${st:-nothing}'): see $state/log/"
