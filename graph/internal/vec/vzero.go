//go:build !(goexperiment.simd && amd64)

package vec

// clearUpper is a no-op where the kernels use no 256- or 512-bit registers
// (the SSE set and the plain loops).
func clearUpper() {}
