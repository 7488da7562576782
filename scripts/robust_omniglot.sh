#!/usr/bin/env bash
# Omniglot at CPU scale for docs/robust-methods.md: the 5-way 1-shot grid of
# MAML, TR-MAML, DRO-MAML, DR-MAML and DR-MAML+ (3 seeds, 15 runs), then the
# 10-way 1-shot grid of MAML and TR-MAML (3 seeds, 6 runs), then each
# grid's tables (Average, Worst, CVaR_0.5 over the meta-training and
# meta-test alphabets) and trade-off figure.
#   scripts/robust_omniglot.sh [OUT [DATA]]
#     OUT   default runs/robust_omniglot
#     DATA  the data root holding omniglot/ (default: $TRMAML_DATA)
# Runs JOBS (default 1) cells at a time, MAML and TR-MAML first, seed by seed,
# in the fast build (GOEXPERIMENT=simd, -tags openblas: OpenBLAS installed;
# BUILD="" builds without OpenBLAS, GOEXPERIMENT="" without the SIMD loops;
# the kernel sets differ in rounding, result.json names its run's). The
# cost per run: docs/robust-methods.md. Re-running resumes: finished runs
# are skipped, unfinished ones continue from their last checkpoint (every
# 1,000 iterations).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/robust_omniglot}
data=${2:-${TRMAML_DATA:-}}
export TRMAML_DATA=$data
mkdir -p "$out"
build=${BUILD--tags openblas}
# shellcheck disable=SC2086 # a list of flags
GOEXPERIMENT=${GOEXPERIMENT-simd} go build $build -o "$out/trmaml" ./cmd/trmaml
cells() { # grid first-method last-method seeds: cell indices, seed by seed
	for s in $(seq 0 $(($4 - 1))); do
		for m in $(seq "$2" "$3"); do
			echo "$1 $((m * $4 + s))"
		done
	done
}
# MAML and TR-MAML first: their 5-way runs are also the omniglot_cpu_5way
# grid's (same training; docs/figures/omniglot_* are drawn from them).
{ cells omniglot_cpu_5way_robust 0 1 3; cells omniglot_cpu_5way_robust 2 4 3; cells omniglot_cpu_10way 0 1 3; } | xargs -P "${JOBS:-1}" -L 1 sh -c \
	'"$0/trmaml" experiment -config configs/experiments/$1.yaml -out "$0/$1" -data "$TRMAML_DATA" -cell $2 || exit 255' "$out"
for grid in omniglot_cpu_5way_robust omniglot_cpu_10way; do
	"$out/trmaml" experiment -config "configs/experiments/$grid.yaml" -out "$out/$grid" -data "$data" -report
	"$out/trmaml" tradeoff -out "$out/$grid" "$out/$grid"
done
echo "tables and figures in $out/omniglot_cpu_5way_robust and $out/omniglot_cpu_10way"
