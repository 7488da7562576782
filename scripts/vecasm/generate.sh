#!/usr/bin/env bash
# Regenerates the AVX-512 and SSE2 assembly kernels of graph/internal/vec
# from the Python scripts beside this one, which spell out each kernel's
# instructions (the FMA chains of a 3x3 convolution, the Winograd tiles)
# from a few loops. Edit the scripts, not the .s files; then run this,
# `GOEXPERIMENT=simd go test ./graph/internal/vec` and `go test
# ./graph/internal/vec` (the SSE set, in both builds), whose bit-for-bit
# tests compare each kernel with its Go counterpart.
set -euo pipefail
cd "$(dirname "$0")"
out=../../graph/internal/vec
python3 convpool.py >"$out/convpool_amd64.s"
python3 winograd4.py >"$out/winograd4_amd64.s"
python3 convback.py >"$out/convback_amd64.s"
python3 ssewinograd.py >"$out/sse_winograd_amd64.s"
