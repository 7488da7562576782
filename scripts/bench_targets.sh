#!/usr/bin/env bash
# Measures the CNN engine's performance targets (docs/performance.md,
# "Against the targets") on the machine at hand, back to back, and ends
# with a scorecard: each target, the figures measured and whether they
# meet it. In order:
#
#   1. scripts/bench_cnn.sh with ROUNDS rounds: every Omniglot training
#      setting against the PyTorch yardstick (at least 2x in every round),
#      5-way second order on 2 cores (at most 0.12 s), every mini-ImageNet
#      setting (at least 3x the yardstick, at most half its peak memory),
#      and on a machine with more than 2 cores the same settings on all of
#      them (the speedup over 2);
#   2. scripts/bench_sine.sh: the sine MLP, second order, one core (at most
#      0.3 ms and at least 3x the yardstick);
#   3. a whole `trmaml train` of the paper's 5-way model (its config with
#      30 iterations, evaluated every 10) against its training graph alone
#      (`cnnbench -ways 5 -order second`): peak memory within 15%;
#   4. `trmaml eval` of that run on the paper's 10,000 instances (at most
#      40 s on 2 cores).
#
# Steps 3 and 4 need the Omniglot archives (DATA, a directory holding
# omniglot/; default $TRMAML_DATA, else ../shared/data) and are skipped,
# saying so, without them. OpenBLAS picks its own kernels
# (OPENBLAS_CORETYPE is unset, as the targets ask). About 10 minutes on 2
# cores with ROUNDS 3. The 0.12 s and 40 s targets were set for 2 cores of
# an AVX-512 machine (Zen 5 class); elsewhere read them as figures.
#
#   scripts/bench_targets.sh [OUT.log] [ROUNDS (3)]
#
# Needs: apt-get install -y libopenblas-dev python3-torch libopenblas0-pthread
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/dev/null} # tee prints to the terminal as well
rounds=${2:-3}
data=${DATA:-${TRMAML_DATA:-../shared/data}}
unset OPENBLAS_CORETYPE BENCH_ISA
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
GOEXPERIMENT=simd go build -tags openblas -o "$dir/trmaml" ./cmd/trmaml
GOEXPERIMENT=simd go build -tags openblas -o "$dir/cnnbench" ./graph/internal/cnnbench

# peak NAME COMMAND...: runs COMMAND on 2 cores and prints its peak resident
# set in kB, or nothing if it fails (its errors are in $dir/NAME.err).
peak() {
  local name=$1
  shift
  if GOMAXPROCS=2 /usr/bin/time -v -o "$dir/$name.time" "$@" >/dev/null 2>"$dir/$name.err"; then
    awk '/Maximum resident set size/ {print $NF}' "$dir/$name.time"
  fi
}

{
  date -u
  uptime
  "$dir/cnnbench" -gemm -iters 1 | sed -n '1{s/: [0-9.]* GFLOP.*//; s/^single-core sgemm [^,]*, /machine: /; p}'
  echo
  echo "== 1. scripts/bench_cnn.sh $rounds rounds"
  scripts/bench_cnn.sh "$dir/cnn.log" "$rounds" >/dev/null
  cat "$dir/cnn.log"
  echo
  echo "== 2. scripts/bench_sine.sh $rounds rounds"
  scripts/bench_sine.sh "$rounds" "$dir/sine.log" >/dev/null
  cat "$dir/sine.log"
  echo
  if [ -d "$data/omniglot" ]; then
    echo "== 3. whole run against its training graph (Omniglot archives in $data/omniglot)"
    sed -e 's/^  iterations: .*/  iterations: 30/' -e 's/^  every: .*/  every: 10/' \
      -e 's/^  instances: .*/  instances: 25/' -e 's/^  train_instances: .*/  train_instances: 25/' \
      configs/omniglot_5way_1shot_maml.yaml >"$dir/run.yaml"
    if [ "$(grep -cE '^  (iterations: 30|every: 10|instances: 25|train_instances: 25)$' "$dir/run.yaml")" != 4 ]; then
      echo "configs/omniglot_5way_1shot_maml.yaml no longer has the meta.iterations and eval fields this script shortens" >&2
      exit 1
    fi
    run_kb=$(peak train "$dir/trmaml" train -config "$dir/run.yaml" -out "$dir/run" -data "$data")
    graph_kb=$(peak cnnbench "$dir/cnnbench" -ways 5 -order second -iters 30)
    [ -n "$run_kb" ] || { echo "trmaml train failed:"; cat "$dir/train.err"; }
    [ -n "$graph_kb" ] || { echo "cnnbench failed:"; cat "$dir/cnnbench.err"; }
    echo "trmaml train (30 iterations, evaluated every 10): peak ${run_kb:-(failed)} kB; cnnbench -ways 5 -order second -iters 30: peak ${graph_kb:-(failed)} kB"
    echo "= memory|$run_kb|$graph_kb" >>"$dir/score"
    echo
    echo "== 4. trmaml eval -set eval.final_instances=5000 (10,000 instances), 2 cores"
    uptime
    line=
    if [ -n "$run_kb" ]; then
      GOMAXPROCS=2 "$dir/trmaml" eval -run "$dir/run" -data "$data" -set eval.final_instances=5000 >"$dir/eval.out" 2>&1 ||
        { echo "trmaml eval failed:"; cat "$dir/eval.out"; }
      line=$(grep 'instances in' "$dir/eval.out" || true)
    fi
    echo "${line:-no evaluation: the run above did not train}"
    echo "= eval|$(grep -o 'in [0-9.]* s' <<<"$line" | awk '{print $2}')" >>"$dir/score"
  else
    echo "== 3 and 4 skipped: no Omniglot archives in $data/omniglot (set DATA to a directory holding omniglot/)"
  fi
  uptime
  echo
  echo "## Scorecard"
  echo
  echo "| target | measured | met |"
  echo "|---|---|---|"
  # The training rows: bench_cnn.sh's table, "| setting | trmaml | PyTorch | ratio | CPU s |
  # CPU ratio | peak |". A ratio target is met by the wall times' ratio, or "in CPU time"
  # where only the CPU seconds' ratio meets it (a loaded machine).
  awk -F'|' 'function trim(x) { gsub(/^ +| +$/, "", x); return x }
    /^\| [0-9]+-way, / {
      name = trim($2); ratio = trim($5); split(trim($3), t, "-"); lo = t[1] + 0; hi = (t[2] == "" ? lo : t[2] + 0)
      if (ratio ~ /[0-9]/) {
        split(ratio, r, "-"); cpu = trim($7); split(cpu, q, "-")
        printf "| %s: at least 2x PyTorch in every round | ratio %s (CPU %s) | %s |\n", name, ratio, cpu, (r[1] >= 2 ? "yes" : q[1] >= 2 ? "in CPU time" : "no")
      }
      if (name == "5-way, second order, 2 cores")
        printf "| %s: at most 0.12 s | %s | %s |\n", name, trim($3), (hi <= 0.12 ? "yes" : lo <= 0.12 ? "in some rounds" : "no")
      # Scaling: the fastest round on all cores against the fastest on 2.
      if (match(name, /, [0-9]+ cores$/)) {
        c = substr(name, RSTART + 2) + 0; split(name, w, ",")
        if (c == 2) two[w[1] w[2]] = lo
        else if ((w[1] w[2]) in two)
          printf "| %s: the cores used (%.0fx the cores of the 2-core row) | %.3f s against %.3f s on 2: %.2fx | (no threshold) |\n", name, c / 2, lo, two[w[1] w[2]], two[w[1] w[2]] / lo
      }
    }
    /^\| mini-ImageNet / {
      name = trim($2); ratio = trim($5); split(ratio, r, "-"); split(trim($8), m, " / "); cpu = trim($7); split(cpu, q, "-")
      split(m[1], a, "-"); split(m[2], b, "-"); ours = (a[2] == "" ? a[1] : a[2]) + 0; theirs = b[1] + 0
      if (ratio ~ /[0-9]/) {
        printf "| %s: at least 3x PyTorch in every round | ratio %s (CPU %s) | %s |\n", name, ratio, cpu, (r[1] >= 3 ? "yes" : q[1] >= 3 ? "in CPU time" : "no")
        printf "| %s: at most half PyTorch'"'"'s peak memory | %s MiB | %s |\n", name, trim($8), (theirs > 0 && ours <= theirs / 2 ? "yes" : "no")
      }
    }' "$dir/cnn.log"
  awk '/^round [0-9]+: trmaml/ {
      t = $4 + 0; match($0, /ratio [0-9.]+/); r = substr($0, RSTART + 6, RLENGTH - 6) + 0
      if (n == 0 || t > tmax) tmax = t
      if (n == 0 || r < rmin) rmin = r
      n++
    }
    END {
      if (n) printf "| sine, second order, one core: at most 0.3 ms and 3x PyTorch | up to %.3f ms, ratio at least %.2f | %s |\n", tmax, rmin, (tmax <= 0.3 && rmin >= 3 ? "yes" : "no")
    }' "$dir/sine.log"
  if [ -f "$dir/score" ]; then
    awk -F'|' '$1 == "= memory" && ($2 == "" || $3 == "") { print "| whole train within 15% of its training graph | failed (above) | no |"; next }
      $1 == "= memory" { r = $2 / $3; printf "| whole train within 15%% of its training graph | %d / %d kB = %.3f | %s |\n", $2, $3, r, (r <= 1.15 ? "yes" : "no") }
      $1 == "= eval" && $2 == "" { print "| 10,000 evaluation instances, 2 cores: at most 40 s | failed (above) | no |"; next }
      $1 == "= eval" { printf "| 10,000 evaluation instances, 2 cores: at most 40 s | %s s | %s |\n", $2, ($2 <= 40 ? "yes" : "no") }' "$dir/score"
  fi
  date -u
} | tee "$out"
