#!/usr/bin/env bash
# Times the CNN engine (graph/internal/cnnbench, OpenBLAS build) and the
# PyTorch yardstick (../shared/peers/torch_conv4) back to back, setting by
# setting, with peak memory from /usr/bin/time -v. The machine may be
# shared: compare each pair of lines, not absolute times. The first lines
# name the machine (cnnbench prints the CPU model, its vector extensions and
# OpenBLAS's kernels) and its single-core GEMM peak, to read each line's
# GFLOP/s against; the load average before and after says how quiet the
# machine was. The last line of a round times the evaluation graph
# (instances per second), which the yardstick has no counterpart of.
#
#   scripts/bench_cnn.sh [OUT.log] [ROUNDS (1)]
#
# On a machine with more than 2 cores, each round adds the 5-way and
# 20-way second-order rows and the evaluation on all of them (nproc).
#
# A table at the end gives per setting trmaml's and PyTorch's median
# times, their ratio, their median CPU seconds per iteration and the ratio
# of those, and the peak memory; with several rounds, each round runs
# every setting again and the table gives the ranges over the rounds (of
# each ratio within its round). On a loaded machine (uptime's load above
# the cores) the wall times measure the neighbours as much as the work:
# quote the CPU ratio of the 1-core rows, with the CPU model and load the
# log begins with (on 2 threads PyTorch's OpenMP threads spin while they
# wait for each other, and on a loaded machine that spinning is most of
# its CPU time: 11.5 against 1.1 s per 5-way iteration on 2 threads and 1).
# The yardstick runs through scripts/torch_cpu.py, which reads the
# process's CPU time beside its own clock.
#
# BENCH_ROWS=omniglot or miniimagenet runs one row set (default both):
# omniglot is the paper's 28x28x1 network with 64 filters and one inner
# step; miniimagenet MAML's 84x84x3 one with 32 filters, 5 inner steps, 15
# query images per class and meta-batch 4, batch norm adapted in the inner
# loop as the yardstick does (1-shot and 5-shot, both orders, 1 and 2
# cores; the yardstick's flags --image 84 --channels 3 --filters 32 --steps
# 5 --query 15 --tasks 4), and the 1-shot second-order setting at
# meta-batch 1 and 2 on 1 and 2 cores (fewer tasks than cores: one task's
# convolutions split over the cores).
#
# OpenBLAS 0.3.21 does not know every AVX-512 CPU (Emerald Rapids, CPU
# model 207, for one) and then runs its SSE3 "Prescott" kernels, at a
# twentieth of the machine's GEMM speed; the script then sets
# OPENBLAS_CORETYPE to the AVX-512 kernels (Cooperlake with AVX-512 BF16,
# else SkylakeX) for both sides and says so.
#
# BENCH_ISA=avx2, avx or sse runs both sides as an older x86 CPU would
# (an AVX2-only one, one with AVX alone, one without AVX), by the settings
# that scripts/isa_env.sh names.
#
# Needs: apt-get install -y libopenblas-dev python3-torch libopenblas0-pthread
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/isa_env.sh
if [ -n "${BENCH_ISA:-}" ] && ! isa_env "$BENCH_ISA"; then
  echo "BENCH_ISA=$BENCH_ISA: allowed are avx2, avx, sse or unset (the machine's own instructions)" >&2
  exit 2
fi
case ${BENCH_ROWS:=all} in
omniglot | miniimagenet | all) ;;
*)
  echo "BENCH_ROWS=$BENCH_ROWS: allowed are omniglot, miniimagenet or unset (both)" >&2
  exit 2
  ;;
esac
out=${1:-/dev/null} # tee prints to the terminal as well
rounds=${2:-1}
cores=$(nproc)
torch=../shared/peers/torch_conv4/maml_conv4_bench.py
dir=$(mktemp -d)
bin=$dir/cnnbench
GOEXPERIMENT=simd go build -tags openblas -o "$bin" ./graph/internal/cnnbench
blasfix=""
if [ -z "${OPENBLAS_CORETYPE+set}" ] && grep -qw avx512f /proc/cpuinfo && [[ $("$bin" -gemm -iters 1) == *"Prescott kernels"* ]]; then
  OPENBLAS_CORETYPE=SkylakeX
  grep -qw avx512_bf16 /proc/cpuinfo && OPENBLAS_CORETYPE=Cooperlake
  export OPENBLAS_CORETYPE
  blasfix="OpenBLAS picked its Prescott (SSE3) kernels on this AVX-512 CPU (model $(awk '/^model\t/ {print $3; exit}' /proc/cpuinfo)): both sides run with OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
fi

# row LABEL PROCS "CNNBENCH FLAGS" ["YARDSTICK FLAGS"]: both lines as they
# print (the yardstick through scripts/torch_cpu.py, which adds its median
# CPU seconds per iteration), then "= LABEL|trmaml s|trmaml MiB|pytorch
# s|pytorch MiB|trmaml CPU s|pytorch CPU s" for the table (empty fields
# where there is no yardstick).
row() {
  local label=$1 procs=$2 ours theirs="" peak t_med="" t_peak="" t_cpu=""
  ours=$({ GOMAXPROCS=$procs /usr/bin/time -v "$bin" $3 2>&1 1>&3 |
    grep -o 'Maximum resident set size (kbytes): [0-9]*' | awk '{printf "peak %.0f MiB\n", $NF/1024}'; } 3>&1)
  echo "$ours"
  if [ -n "${4:-}" ]; then
    if [ -f "$torch" ]; then
      theirs=$(OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/torch_cpu.py "$torch" --threads "$procs" $4 2>&1 >/dev/null | tail -2)
      t_med=$(grep -o 'median [0-9.]*' <<<"$theirs" | head -1 | awk '{print $2}')
      t_peak=$(grep -o 'peak RSS [0-9]*' <<<"$theirs" | awk '{print $3}')
      t_cpu=$(grep -o 'cpu median [0-9.]*' <<<"$theirs" | awk '{print $3}')
    else
      theirs="yardstick $torch not found"
    fi
    echo "$theirs"
  fi
  peak=$(grep -o 'peak [0-9]* MiB' <<<"$ours" | awk '{print $2}')
  echo "= $label|$(grep -o 'median [0-9.]*' <<<"$ours" | awk '{print $2}')|$peak|$t_med|$t_peak|$(grep -o 'CPU [0-9.]*' <<<"$ours" | awk '{print $2}')|$t_cpu" >>"$dir/rows"
}

{
  date -u
  lscpu | grep -E '^(Model name|Model|CPU\(s\)):'
  uptime
  [ -z "$blasfix" ] || echo "$blasfix"
  [ -z "${BENCH_ISA:-}" ] || echo "BENCH_ISA=$BENCH_ISA: $GODEBUG OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA"
  "$bin" -gemm -iters 3
  for r in $(seq "$rounds"); do
    [ "$rounds" -gt 1 ] && echo "round $r of $rounds"
    if [ "$BENCH_ROWS" != miniimagenet ]; then
      row "5-way, second order, 2 cores" 2 "-ways 5 -order second -iters 5" "--ways 5 --shots 1 --tasks 8 --iters 5 --warmup 1"
      row "5-way, first order, 2 cores" 2 "-ways 5 -order first -iters 5" "--ways 5 --shots 1 --tasks 8 --first-order --iters 5 --warmup 1"
      row "5-way, second order, 1 core" 1 "-ways 5 -order second -iters 3" "--ways 5 --shots 1 --tasks 8 --iters 3 --warmup 1"
      row "5-way, first order, 1 core" 1 "-ways 5 -order first -iters 3" "--ways 5 --shots 1 --tasks 8 --first-order --iters 3 --warmup 1"
      row "20-way, second order, 2 cores" 2 "-ways 20 -order second -iters 3" "--ways 20 --shots 1 --tasks 8 --iters 2 --warmup 1"
      row "20-way, second order, 1 core" 1 "-ways 20 -order second -iters 2"
      row "evaluation, 8 instances, 2 cores (s per batch)" 2 "-ways 5 -eval -iters 10"
      if [ "$cores" -gt 2 ]; then
        # Scaling: meta-batch 8 and 20-way on every core of a bigger machine.
        row "5-way, second order, $cores cores" "$cores" "-ways 5 -order second -iters 5" "--ways 5 --shots 1 --tasks 8 --iters 5 --warmup 1"
        row "20-way, second order, $cores cores" "$cores" "-ways 20 -order second -iters 3" "--ways 20 --shots 1 --tasks 8 --iters 2 --warmup 1"
        row "evaluation, 8 instances, $cores cores (s per batch)" "$cores" "-ways 5 -eval -iters 10"
      fi
    fi
    if [ "$BENCH_ROWS" != omniglot ]; then
      mini="-image 84 -channels 3 -filters 32 -steps 5 -query 15 -tasks 4 -bn adapt"
      ymini="--image 84 --channels 3 --filters 32 --steps 5 --query 15 --tasks 4"
      for shots in 1 5; do
        for order in second first; do
          yorder=""
          [ $order = first ] && yorder=--first-order
          row "mini-ImageNet 5-way $shots-shot, $order order, 2 cores" 2 "$mini -shots $shots -order $order -iters 3" "$ymini --shots $shots $yorder --iters 3 --warmup 1"
          row "mini-ImageNet 5-way $shots-shot, $order order, 1 core" 1 "$mini -shots $shots -order $order -iters 2" "$ymini --shots $shots $yorder --iters 2 --warmup 1"
        done
      done
      # One task's work on both cores: meta-batch 1 and 2 on 1 and 2 cores.
      for tasks in 1 2; do
        for procs in 1 2; do
          row "mini-ImageNet 5-way 1-shot, second order, meta-batch $tasks, $procs core(s)" $procs "${mini/-tasks 4/-tasks $tasks} -shots 1 -iters 2"
        done
      done
    fi
    uptime
  done
  echo
  echo "| setting | trmaml | PyTorch | ratio | CPU s per iteration (trmaml / PyTorch) | CPU ratio | peak MiB (trmaml / PyTorch) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  sed 's/^= //' "$dir/rows" | awk -F'|' '
    function span(lo, hi, f,   a, b) { a = sprintf(f, lo); b = sprintf(f, hi); return a == b ? a : a "-" b }
    function add(k, v) { v += 0; if (!(k in lo) || v < lo[k]) lo[k] = v; if (!(k in hi) || v > hi[k]) hi[k] = v }
    !($1 in seen) { seen[$1] = 1; order[++n] = $1 }
    {
      add($1 "o", $2); add($1 "m", $3); add($1 "c", $6)
      if ($4 != "") { add($1 "t", $4); add($1 "r", $4 / $2); add($1 "p", $5) }
      if ($7 != "" && $6 > 0) { add($1 "u", $7); add($1 "q", $7 / $6) }
    }
    END {
      for (i = 1; i <= n; i++) {
        k = order[i]
        t = (k "t") in lo ? span(lo[k "t"], hi[k "t"], "%.3f") " s" : ""
        r = (k "r") in lo ? span(lo[k "r"], hi[k "r"], "%.2f") : ""
        u = (k "u") in lo ? " / " span(lo[k "u"], hi[k "u"], "%.3f") : ""
        q = (k "q") in lo ? span(lo[k "q"], hi[k "q"], "%.2f") : ""
        p = (k "p") in lo ? " / " span(lo[k "p"], hi[k "p"], "%d") : ""
        printf "| %s | %s s | %s | %s | %s%s | %s | %s%s |\n", k, span(lo[k "o"], hi[k "o"], "%.3f"), t, r, span(lo[k "c"], hi[k "c"], "%.3f"), u, q, span(lo[k "m"], hi[k "m"], "%d"), p
      }
    }'
  date -u
} | tee "$out"
