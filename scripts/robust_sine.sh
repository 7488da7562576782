#!/usr/bin/env bash
# DR-MAML+'s sinusoid benchmark (its Table 7; docs/robust-methods.md): MAML,
# TR-MAML, DRO-MAML, DR-MAML and DR-MAML+ at K = 5 (meta-batch 50) and
# K = 10 (meta-batch 25), alpha = 0.7, 70,000 iterations, 5 seeds each
# (50 runs), then each K's table (Average, Worst, CVaR_0.7, 95% intervals
# over the seeds) and trade-off figure.
#   scripts/robust_sine.sh [OUT]     (default OUT: runs/robust_sine)
# Runs JOBS (default 1) cells at a time, seed by seed, so that a stopped
# reproduction has all methods of its first seeds. Re-running resumes:
# finished runs are skipped, unfinished ones continue from their
# checkpoints. Each cell is one `trmaml experiment -cell I` command.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/robust_sine}
mkdir -p "$out"
go build -o "$out/trmaml" ./cmd/trmaml
methods=5 seeds=5
for s in $(seq 0 $((seeds - 1))); do
	for k in 5 10; do
		for m in $(seq 0 $((methods - 1))); do
			echo "$k $((m * seeds + s))"
		done
	done
done | xargs -P "${JOBS:-1}" -L 1 sh -c \
	'"$0/trmaml" experiment -config configs/experiments/sine_k$1_robust.yaml -out "$0/k$1" -cell $2 || exit 255' "$out"  # 255: xargs stops at a failed cell
for k in 5 10; do
	"$out/trmaml" experiment -config "configs/experiments/sine_k${k}_robust.yaml" -out "$out/k$k" -report
	"$out/trmaml" tradeoff -out "$out/k$k" "$out/k$k"
done
echo "tables and figures in $out/k5 and $out/k10 (docs/robust-methods.md holds the committed copies)"
