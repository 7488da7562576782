//go:build goexperiment.simd

package vec

import "simd/archsimd"

func init() {
	if archsimd.X86.AVX512() {
		impl64 = kernels64{addTo512, relu512, mask512, addScaled512, scale512}
	}
}

// Each loop does the whole vectors of 8 and leaves the tail to the plain
// loop.

func addTo512(dst, src []float64) {
	n := len(dst) &^ 7
	for i := 0; i < n; i += 8 {
		load8(dst[i:]).Add(load8(src[i:])).StoreSlice(dst[i:])
	}
	addToGo(dst[n:], src[n:])
}

func relu512(dst, x []float64) {
	n := len(dst) &^ 7
	zero := archsimd.BroadcastFloat64x8(0)
	for i := 0; i < n; i += 8 {
		// +0 where x <= 0, x elsewhere: max(v, 0) for -0 and NaN too.
		xv := load8(x[i:])
		zero.Merge(xv, xv.LessEqual(zero)).StoreSlice(dst[i:])
	}
	reluGo(dst[n:], x[n:])
}

// mask512 keeps v where x's bits are positive as a signed integer, the
// plain loop's test (x > 0, or a NaN with the sign bit clear).
func mask512(dst, x, v []float64) {
	n := len(dst) &^ 7
	zero := archsimd.BroadcastInt64x8(0)
	for i := 0; i < n; i += 8 {
		load8(v[i:]).Masked(load8(x[i:]).AsInt64x8().Greater(zero)).StoreSlice(dst[i:])
	}
	maskGo(dst[n:], x[n:], v[n:])
}

func addScaled512(dst, x, y []float64, k float64) {
	n := len(dst) &^ 7
	kv := archsimd.BroadcastFloat64x8(k)
	for i := 0; i < n; i += 8 {
		load8(x[i:]).Add(kv.Mul(load8(y[i:]))).StoreSlice(dst[i:])
	}
	addScaledGo(dst[n:], x[n:], y[n:], k)
}

func scale512(dst, x []float64, k float64) {
	n := len(dst) &^ 7
	kv := archsimd.BroadcastFloat64x8(k)
	for i := 0; i < n; i += 8 {
		kv.Mul(load8(x[i:])).StoreSlice(dst[i:])
	}
	scaleGo(dst[n:], x[n:], k)
}

func load8(s []float64) archsimd.Float64x8 { return archsimd.LoadFloat64x8Slice(s) }
