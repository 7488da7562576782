//go:build !goexperiment.simd

package vec

// Without the SIMD build (GOEXPERIMENT=simd) the SSE set runs on every
// amd64 CPU: SSE2 is part of the architecture, and the set's values are the
// plain loops' bit for bit.
func init() {
	sseSet = []kernels{sseKernels()}
	impl, lanes, isa = sseSet[0], 4, "SSE"
}
