#!/usr/bin/env bash
# Reproduces the paper's sinusoid results (Table 1 and Figure 1) and the
# figures in docs/: the K=5 and K=10 experiments (MAML and TR-MAML, second and
# first order, seeds 1-3), then the combined table and figures.
#   scripts/reproduce_paper.sh [OUT]          (default OUT: runs)
# About 15 minutes on 2 cores. Re-running resumes: finished runs are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs}
go build -o "$out/trmaml" ./cmd/trmaml
for k in 5 10; do
  "$out/trmaml" experiment -config "configs/experiments/sine_k$k.yaml" -out "$out/sine_k$k" -jobs "${JOBS:-2}"
done
"$out/trmaml" report -out "$out/paper" "$out/sine_k5" "$out/sine_k10"
"$out/trmaml" plot -out "$out/paper" "$out/sine_k5" "$out/sine_k10"
echo "table and figures in $out/paper (docs/ holds the committed copies)"
