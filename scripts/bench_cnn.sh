#!/usr/bin/env bash
# Times the CNN engine (graph/internal/cnnbench, OpenBLAS build) and the
# PyTorch yardstick (../shared/peers/torch_conv4) back to back, setting by
# setting, with peak memory from /usr/bin/time -v. The machine may be
# shared: compare each pair of lines, not absolute times. The first lines
# name the machine (cnnbench prints the CPU model, its vector extensions and
# OpenBLAS's kernels) and its single-core GEMM peak, to read each line's
# GFLOP/s against; the load average before and after says how quiet the
# machine was. The last line times the evaluation graph (instances per
# second), which the yardstick has no counterpart of.
#
#   scripts/bench_cnn.sh [OUT.log]
#
# Needs: apt-get install -y libopenblas-dev python3-torch libopenblas0-pthread
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/dev/stdout}
torch=../shared/peers/torch_conv4/maml_conv4_bench.py
bin=$(mktemp -d)/cnnbench
GOEXPERIMENT=simd go build -tags openblas -o "$bin" ./graph/internal/cnnbench

peak() { grep -o 'Maximum resident set size (kbytes): [0-9]*' | awk '{printf "peak %.0f MiB\n", $NF/1024}'; }
ours() { # GOMAXPROCS, cnnbench flags...
  local procs=$1; shift
  { GOMAXPROCS=$procs /usr/bin/time -v "$bin" "$@" 2>&1 1>&3 | peak; } 3>&1
}
theirs() { # threads, flags...
  local threads=$1; shift
  [ -f "$torch" ] || { echo "yardstick $torch not found"; return; }
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 "$torch" --threads "$threads" "$@" 2>&1 >/dev/null | tail -1
}
{
  date -u
  uptime
  "$bin" -gemm -iters 3
  ours 2 -ways 5 -order second -iters 5;   theirs 2 --ways 5 --shots 1 --tasks 8 --iters 5 --warmup 1
  ours 2 -ways 5 -order first -iters 5;    theirs 2 --ways 5 --shots 1 --tasks 8 --first-order --iters 5 --warmup 1
  ours 1 -ways 5 -order second -iters 3;   theirs 1 --ways 5 --shots 1 --tasks 8 --iters 3 --warmup 1
  ours 1 -ways 5 -order first -iters 3;    theirs 1 --ways 5 --shots 1 --tasks 8 --first-order --iters 3 --warmup 1
  ours 2 -ways 20 -order second -iters 3;  theirs 2 --ways 20 --shots 1 --tasks 8 --iters 2 --warmup 1
  ours 1 -ways 20 -order second -iters 2
  ours 2 -ways 5 -eval -iters 10
  uptime
  date -u
} | tee "$out"
