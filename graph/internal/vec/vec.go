package vec

// SIMD reports whether the full vector set is in use: the AVX2 (or
// AVX-512) kernels, the fused convolution and pooling kernels among them,
// whose speed the graph's choice of fused ops and convolution algorithm
// assumes. The AVX set of a CPU without AVX2 and FMA does not count.
func SIMD() bool { return useSIMD }

// Lanes is the float32 width of the vector kernels in use: 16 where the CPU
// has AVX-512 (and the assembly kernels run), 8 with AVX2 and FMA, 4 with
// AVX alone (the AVX set, for the heaviest loops only; its two assembly
// sums take 8) or without AVX (the SSE set, also that of every amd64 CPU
// without GOEXPERIMENT=simd), 0 with the plain loops (other
// architectures). GODEBUG=cpu.avx512f=off gives an
// AVX-512 machine the 8-lane kernels an AVX2-only CPU would run, and
// cpu.avx2=off,cpu.fma=off the AVX set.
func Lanes() int { return lanes }

// ISA names the instruction set of the vector kernels in use: "AVX-512",
// "AVX2", "AVX", "SSE", or "" for the plain loops.
func ISA() string { return isa }
