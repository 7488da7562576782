#!/usr/bin/env bash
# Reproduces the paper's sinusoid table: the four sine configs (K=5 and K=10,
# MAML and TR-MAML) for the given seeds, JOBS runs at a time, into OUT.
#   scripts/reproduce_sine.sh [OUT] [SEEDS...]      (defaults: runs/paper, seeds 1 2 3)
# Each run takes about 5-10 minutes on one core; finished runs are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/paper}
shift || true
seeds=${*:-1 2 3}
jobs=${JOBS:-2}
go build -o "$out/trmaml" ./cmd/trmaml
for seed in $seeds; do
  for cfg in sine_k5_maml sine_k5_trmaml sine_k10_maml sine_k10_trmaml; do
    dir="$out/$cfg-seed$seed"
    [ -f "$dir/result.json" ] && continue
    echo "$cfg $seed $dir"
  done
done | xargs -P "$jobs" -L 1 sh -c 'rm -rf "$2"; "'"$out"'/trmaml" train -config "configs/$0.yaml" -seed "$1" -out "$2" > "$2.log" 2>&1 && echo "done $2" || echo "FAILED $2 (see $2.log)"'
