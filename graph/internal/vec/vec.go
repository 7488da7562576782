package vec

// SIMD reports whether the vector implementations are in use.
func SIMD() bool { return useSIMD }
