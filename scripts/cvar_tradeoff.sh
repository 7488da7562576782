#!/usr/bin/env bash
# The trade-off between average and worst-task loss on the paper's K=5 sine
# setting (docs/methods.md, docs/figures/cvar_tradeoff.png): CVaR levels 1, 0.5, 0.2,
# 0.1, 0.05 and 0.01 beside MAML, TR-MAML and entropic TR-MAML, 6 seeds each
# (54 runs of 70,000 iterations), then the table and the figure. Run
# directories of the same experiment already in OUT/runs (say, seeds 1-3
# copied from an earlier sweep) are reused, not retrained: the runner skips
# every finished run whose config.yaml is the one the experiment gives.
#   scripts/cvar_tradeoff.sh [OUT]          (default OUT: runs/sine_k5_cvar)
# About 1.5 minutes per run on one core (JOBS=1, the default here); re-running
# resumes: finished runs are skipped, unfinished ones continue from their
# checkpoints.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/sine_k5_cvar}
mkdir -p "$out"
go build -o "$out/trmaml" ./cmd/trmaml
"$out/trmaml" experiment -config configs/experiments/sine_k5_cvar.yaml -out "$out/runs" -jobs "${JOBS:-1}"
"$out/trmaml" tradeoff -out "$out" "$out/runs"
echo "cvar_tradeoff.png and cvar_table.md in $out (docs/ holds the committed copies)"
