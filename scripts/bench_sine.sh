#!/usr/bin/env bash
# Times trmaml's sine meta-iteration (graph.BenchmarkSineSecondOrder: MLP
# 1-40-40-1, 25 tasks, K = J = 5, one inner step, second order, float64) and
# the PyTorch yardstick scripts/bench_sine.py (the same meta-iteration, tasks
# batched with torch.bmm) back to back, alternating, both on one thread. Each
# round prints both times in ms per meta-iteration (Go: the benchmark's mean;
# PyTorch: the median of its iterations), the process CPU time per iteration
# (means) and the ratios, PyTorch's time over trmaml's; the first lines
# name the CPU and the load average, which the last line repeats. On a shared
# machine compare the ratios of one run, not absolute times across runs.
#
#   scripts/bench_sine.sh [ROUNDS (5)] [OUT.log]
#
# Needs: apt-get install -y libopenblas-dev python3-torch libopenblas0-pthread
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
out=${2:-/dev/null} # tee prints to the terminal as well
bin=$(mktemp -d)/graph.test
GOEXPERIMENT=simd go test -tags openblas -c -o "$bin" ./graph/
export OPENBLAS_NUM_THREADS=1
{
  date -u
  grep -m1 'model name' /proc/cpuinfo
  uptime
  for r in $(seq "$rounds"); do
    go_line=$(cd graph && "$bin" -test.run XXX -test.bench 'SineSecondOrder$' -test.cpu 1 -test.benchtime 2s |
      grep '^BenchmarkSineSecondOrder')
    torch_line=$(/usr/bin/python3 scripts/bench_sine.py --iters 2000)
    awk -v r="$r" -v g="$go_line" -v t="$torch_line" 'BEGIN {
      split(g, gf, " "); gw = gf[3] / 1e6; gc = gf[5]
      match(t, /median [0-9.]+/); tw = substr(t, RSTART + 7, RLENGTH - 7)
      match(t, /cpu [0-9.]+/); tc = substr(t, RSTART + 4, RLENGTH - 4)
      printf "round %d: trmaml %.3f ms (cpu %.3f), pytorch %.3f ms (cpu %.3f), ratio %.2f (cpu %.2f)\n", r, gw, gc, tw, tc, tw / gw, tc / gc
    }'
  done
  uptime
  date -u
} | tee "$out"
