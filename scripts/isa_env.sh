# Sourced by scripts/bench_cnn.sh and .ci/run. `isa_env NAME` exports the
# settings that make this machine run as an older x86 CPU would, on both
# trmaml's and PyTorch's side, or returns 2 for an unknown NAME:
#
#   avx2  an AVX2-only CPU (Haswell, Zen 3): Go's CPU detection without
#         AVX-512 (trmaml's 8-lane kernels, no assembly), OpenBLAS's
#         Haswell kernels, PyTorch's AVX2 ATen and oneDNN kernels;
#   avx   AVX without AVX2 and FMA (Sandy Bridge): trmaml's AVX set,
#         OpenBLAS's Sandybridge kernels, PyTorch's default ATen kernels and
#         oneDNN's AVX ones;
#   sse   no AVX (Westmere, and the Pentium and Celeron models without AVX):
#         trmaml's SSE set, OpenBLAS's Nehalem kernels, oneDNN's SSE4.1 ones.
#
# Each shows the instruction set's share; caches and execution units stay
# the machine's own, so it approximates a real CPU of that kind, no more.
isa_env() {
  local godebug core aten onednn
  case $1 in
  avx2) godebug=cpu.avx512f=off core=Haswell aten=avx2 onednn=AVX2 ;;
  avx) godebug=cpu.avx2=off,cpu.fma=off,cpu.avx512f=off core=Sandybridge aten=default onednn=AVX ;;
  sse) godebug=cpu.avx=off,cpu.avx2=off,cpu.fma=off,cpu.avx512f=off core=Nehalem aten=default onednn=SSE41 ;;
  *) return 2 ;;
  esac
  export GODEBUG=${GODEBUG:+$GODEBUG,}$godebug OPENBLAS_CORETYPE=$core ATEN_CPU_CAPABILITY=$aten ONEDNN_MAX_CPU_ISA=$onednn
}
