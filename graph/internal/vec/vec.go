package vec

// SIMD reports whether the vector implementations are in use.
func SIMD() bool { return useSIMD }

// Lanes is the float32 width of the vector kernels in use: 16 where the CPU
// has AVX-512 (and the assembly kernels run), 8 with AVX2 and FMA only, 0
// with the plain loops. GODEBUG=cpu.avx512f=off gives an AVX-512 machine
// the 8-lane kernels an AVX2-only CPU would run.
func Lanes() int { return lanes }
