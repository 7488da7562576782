#!/usr/bin/env bash
# The Omniglot table and figures of finished experiment grids:
#   scripts/omniglot_figures.sh RUNSDIR [RUNSDIR...] OUTDIR
# e.g.
#   nice -n 19 scripts/omniglot_figures.sh runs/omniglot_cpu_5way docs/figures
# writes, in OUTDIR, every file named omniglot_*:
#   omniglot_table.md, .csv        Table 2: meta-training weighted mean (weights
#                                  C(Z_i, N)), mean, worst, std; meta-test mean,
#                                  worst, std; mean over seeds ± 95% CI
#   omniglot_per_task.md, .csv     every alphabet's final accuracy by name
#   omniglot_per_task_seeds.csv    every run's, from which all of the above follows
#   omniglot_figure1.png           Figure 1: mean and worst alphabet accuracy vs
#                                  iteration (meta-training, meta-test), the
#                                  spread over meta-test alphabets, histograms
#                                  of final meta-test and meta-training
#                                  alphabet accuracies
#   omniglot_adversary.png         MAML's sampling distribution beside TR-MAML's
#                                  final p and both algorithms' accuracy, per
#                                  meta-training alphabet by name
# (with several settings, e.g. 5-way and 20-way grids, each setting after the
# first adds omniglot_figure1_20way1shot.png and omniglot_adversary_20way1shot.png).
# Then it checks omniglot_table.csv and omniglot_per_task.csv against an
# independent recomputation from omniglot_per_task_seeds.csv (go test; CHECK=0
# skips it; it leaves out rows marked unfinished, whose runs have no
# per-task values). Unfinished runs enter the table and figures marked as
# such; pass finished run directories for figures meant for docs/. TRMAML=path uses that
# binary instead of building one. Files are written next to OUTDIR first and
# renamed into place, so an interrupted call never leaves a half-written file.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 RUNSDIR [RUNSDIR...] OUTDIR" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
args=("$@")
out=${args[-1]}
unset 'args[-1]'
runs=()
for r in "${args[@]}"; do
  [ -d "$r" ] || { echo "$0: $r is not a directory" >&2; exit 2; }
  runs+=("$(cd "$r" && pwd)")
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d "$out/.omniglot_figures.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

bin=${TRMAML:-}
if [ -z "$bin" ]; then
  bin=$tmp/trmaml
  (cd "$repo" && go build -o "$bin" ./cmd/trmaml)
fi
"$bin" report -out "$tmp/out" "${runs[@]}"
"$bin" plot -out "$tmp/out" "${runs[@]}"
if [ "${CHECK:-1}" != 0 ]; then
  (cd "$repo" && TRMAML_CHECK_REPORT="$tmp/out" go test -count=1 -run '^TestReportRecomputed$' ./cli/)
fi
for f in "$tmp/out"/*; do
  mv -f "$f" "$out/omniglot_$(basename "$f")"
done
ls -1 "$out"/omniglot_*
