//go:build goexperiment.simd

package vec

import "simd/archsimd"

// The AVX set: for CPUs with AVX but without AVX2 and FMA (Sandy Bridge and
// Ivy Bridge, and virtual machines that hide AVX2 from their guests), where
// the AVX2 set cannot run. It is the SSE set (sse_amd64.go: the window
// kernels, ReLU, its mask and the Winograd transforms in SSE2 assembly,
// which ran as fast as 4-lane archsimd code here or faster) with the
// affine maps, the sums and the scaled adds on 4-lane archsimd code and
// the batch-norm moments and centred sums on 8 lanes in assembly
// (avx_amd64.s); the rest stays plain.
//
// Its Go kernels use 4-lane vectors only: on such a CPU the Go runtime
// saves only the 128-bit halves of the vector registers when it preempts a
// goroutine asynchronously (runtime/preempt_amd64.s saves whole 256-bit
// registers only with AVX2; golang/go#81209, fixed after Go 1.26), so an
// 8-lane value live at a preemption would lose its upper half (seen as
// zeros in TestLanesSameValues). Only archsimd
// operations that are AVX instructions appear: arithmetic, loads and
// stores (archsimd's Broadcast is emulated with AVX2; constants are
// loaded from memory instead). Without FMA,
// every multiply and add rounds on its own, and the sums run over the rows
// in order, as in the plain loops: the results are the plain loops' bit for
// bit (TestSIMDMatchesPlain), TestAVXSetIsAVX reads the compiled code
// instruction by instruction, and CI runs the tests under QEMU's Sandy
// Bridge model.

type f32x4 = archsimd.Float32x4

// avxKernels is the SSE set with the AVX kernels in place.
func avxKernels() kernels {
	k := sseKernels()
	k.affine, k.affine2, k.addTo, k.sumRows = affineAVX, affine2AVX, addToAVX, sumRowsAVX
	k.moments, k.dotCentered = momentsAVX, dotCenteredAVX
	k.addScaled, k.scale = addScaledAVX, scaleAVX
	return k
}

// splat4 broadcasts v through memory (VMOVUPS), not with archsimd's
// Broadcast, which needs AVX2.
func splat4(v float32) f32x4 {
	s := [4]float32{v, v, v, v}
	return archsimd.LoadFloat32x4(&s)
}

func load4(s []float32) f32x4 { return archsimd.LoadFloat32x4Slice(s) }

func affineAVX(dst, x, a, c []float32) {
	f := len(a)
	if f%4 != 0 {
		affineGo(dst, x, a, c)
		return
	}
	for p := 0; p+f <= len(dst); p += f {
		d, xs := dst[p:p+f], x[p:p+f]
		for i := 0; i < f; i += 4 {
			load4(xs[i:]).Mul(load4(a[i:])).Add(load4(c[i:])).StoreSlice(d[i:])
		}
	}
}

func affine2AVX(dst, x, y, a, b, c []float32) {
	f := len(a)
	if f%4 != 0 {
		affine2Go(dst, x, y, a, b, c)
		return
	}
	for p := 0; p+f <= len(dst); p += f {
		d, xs, ys := dst[p:p+f], x[p:p+f], y[p:p+f]
		for i := 0; i < f; i += 4 {
			xa := load4(xs[i:]).Mul(load4(a[i:]))
			xa.Add(load4(ys[i:]).Mul(load4(b[i:]))).Add(load4(c[i:])).StoreSlice(d[i:])
		}
	}
}

func addToAVX(dst, src []float32) {
	n := len(dst) &^ 3
	for i := 0; i < n; i += 4 {
		load4(dst[i:]).Add(load4(src[i:])).StoreSlice(dst[i:])
	}
	addToGo(dst[n:], src[n:])
}

func sumRowsAVX(dst, x []float32) {
	f := len(dst)
	if f%4 != 0 {
		sumRowsGo(dst, x)
		return
	}
	for p := 0; p+f <= len(x); p += f {
		addToAVX(dst, x[p:p+f])
	}
}

// momentsAVX and dotCenteredAVX take 8 channels at a time, or the SSE
// set's 4 where the rows are not a multiple of 8.
func momentsAVX(sum, sq []float64, x, shift []float32) {
	if len(shift)%8 != 0 {
		momentsSSE(sum, sq, x, shift)
		return
	}
	columnMoments(sum, sq, x, shift, 8, momentsColumnAVX)
}

func dotCenteredAVX(acc []float64, g, z, mu []float32) {
	if len(mu)%8 != 0 {
		dotCenteredSSE(acc, g, z, mu)
		return
	}
	columnDots(acc, g, z, mu, 8, dotColumnAVX)
}

//go:noescape
func momentsColumnAVX(sum, sq *float64, x, shift *float32, stride, rows int)

//go:noescape
func dotColumnAVX(acc *float64, grad, z, mu *float32, stride, rows int)

func addScaledAVX(dst, x, y []float32, k float32) {
	n := len(dst) &^ 3
	x, y = x[:len(dst)], y[:len(dst)]
	kv := splat4(k)
	for i := 0; i < n; i += 4 {
		load4(x[i:]).Add(kv.Mul(load4(y[i:]))).StoreSlice(dst[i:])
	}
	addScaledGo(dst[n:], x[n:], y[n:], k)
}

func scaleAVX(dst, x []float32, k float32) {
	n := len(dst) &^ 3
	x = x[:len(dst)]
	kv := splat4(k)
	for i := 0; i < n; i += 4 {
		kv.Mul(load4(x[i:])).StoreSlice(dst[i:])
	}
	scaleGo(dst[n:], x[n:], k)
}
