#!/usr/bin/env bash
# Runs the vector kernels' tests (graph/internal/vec) as other x86 CPUs,
# under QEMU's user-mode emulation (Debian's qemu-user, installed when
# missing; CI machines run as root):
#
#   SandyBridge  AVX without AVX2 and FMA: the AVX set
#   Haswell      AVX2 and FMA without AVX-512: the 8-lane set
#   Westmere     no AVX: the SSE set
#
# and the tests of the build without GOEXPERIMENT=simd, which runs the SSE
# set on every amd64 CPU, as the three CPUs.
#
# QEMU stops the process (SIGILL) at an instruction the modelled CPU lacks,
# most of them but not all (it runs VBROADCASTSS from a register as a
# Sandy Bridge), so TestAVXSetIsAVX and TestSSESetIsSSE2, which read the
# AVX and SSE sets' compiled code instruction by instruction with GNU
# objdump, must run and pass here natively too. TRMAML_WANT_ISA makes
# TestLanesNamesTheSetInUse check that each CPU got its set. About 10 s.
#
# `scripts/test_isa.sh graph` runs the graph package's tests (-short: the
# finite-difference harness, the CNN end to end) as a Sandy Bridge too,
# the AVX set inside the whole engine: about 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
# A plain executable for the oldest CPU modelled: the caller's GOAMD64 or
# -buildmode=pie in GOFLAGS would break the emulated runs or the
# disassembly.
export GOAMD64=v1 GOFLAGS=
need=()
command -v qemu-x86_64 >/dev/null || need+=(qemu-user)
command -v objdump >/dev/null || need+=(binutils)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update && apt-get install -y "${need[@]}"
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
GOEXPERIMENT=simd go test -c -o "$dir/vec.test" ./graph/internal/vec
go test -c -o "$dir/vec-default.test" ./graph/internal/vec

# check NAME COMMAND...: runs a test binary, shows its output on failure
# (without QEMU's warnings about CPU features it does not model).
check() {
  local name=$1
  shift
  if ! "$@" >"$dir/out" 2>&1; then
    grep -v "TCG doesn't support" "$dir/out" >&2 || true
    echo "FAILED: vec tests $name" >&2
    exit 1
  fi
  grep -E '^(--- SKIP|ok|PASS)' "$dir/out" | sed "s/^/$name: /"
}
check "natively, the sets' instructions" "$dir/vec.test" -test.run 'TestAVXSetIsAVX|TestSSESetIsSSE2' -test.v
for t in TestAVXSetIsAVX TestSSESetIsSSE2; do
  if ! grep -q -- "--- PASS: $t" "$dir/out"; then
    echo "FAILED: $t did not run (no AVX, or no objdump?)" >&2
    exit 1
  fi
done
check "default build, natively, the SSE set's instructions" "$dir/vec-default.test" -test.run TestSSESetIsSSE2 -test.v
grep -q -- "--- PASS: TestSSESetIsSSE2" "$dir/out" || { echo "FAILED: TestSSESetIsSSE2 did not run in the default build" >&2; exit 1; }
for cpu in SandyBridge:AVX Haswell:AVX2 Westmere:SSE; do
  TRMAML_WANT_ISA=${cpu#*:} check "as ${cpu%%:*} (QEMU)" qemu-x86_64 -cpu "${cpu%%:*}" "$dir/vec.test" -test.v
  TRMAML_WANT_ISA=SSE check "default build as ${cpu%%:*} (QEMU)" qemu-x86_64 -cpu "${cpu%%:*}" "$dir/vec-default.test" -test.v
done
if [ "${1:-}" = graph ]; then
  GOEXPERIMENT=simd go test -c -o "$dir/graph.test" ./graph
  (cd graph && check "graph tests as SandyBridge (QEMU)" qemu-x86_64 -cpu SandyBridge "$dir/graph.test" -test.short)
fi
