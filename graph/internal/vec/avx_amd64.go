//go:build goexperiment.simd

package vec

import (
	"math"
	"simd/archsimd"
)

// The AVX set: for CPUs with AVX but without AVX2 and FMA (Sandy Bridge and
// Ivy Bridge, and virtual machines that hide AVX2 from their guests), where
// the AVX2 set cannot run. It replaces the plain loops that dominate a
// training step there (the pooled batch norm's window search and its
// backward, ReLU, the affine maps and the sums; measured with pprof) and
// leaves the rest plain.
//
// Its Go kernels use 4-lane vectors only: on such a CPU the Go runtime
// saves only the 128-bit halves of the vector registers when it preempts a
// goroutine asynchronously (runtime/preempt_amd64.s saves whole 256-bit
// registers only with AVX2; golang/go#81209, fixed after Go 1.26), so an
// 8-lane value live at a preemption would lose its upper half (seen as
// zeros in TestLanesSameValues). Only archsimd
// operations that are AVX instructions appear: arithmetic, comparisons,
// loads, stores and 4-lane selection (archsimd's Broadcast is emulated
// with AVX2; constants are loaded from memory instead). Without FMA,
// every multiply and add rounds on its own, and the sums run over the rows
// in order, as in the plain loops: the results are the plain loops' bit for
// bit (TestSIMDMatchesPlain), TestAVXSetIsAVX reads the compiled code
// instruction by instruction, and CI runs the tests under QEMU's Sandy
// Bridge model.

type f32x4 = archsimd.Float32x4

// avxKernels is the plain set with the AVX kernels in place.
func avxKernels() kernels {
	k := plain
	k.affine, k.affine2, k.addTo, k.sumRows = affineAVX, affine2AVX, addToAVX, sumRowsAVX
	k.moments, k.dotCentered = momentsAVX, dotCenteredAVX
	k.relu, k.mask, k.addScaled, k.scale = reluAVX, maskAVX, addScaledAVX, scaleAVX
	k.maxAffRow, k.backPoolMax, k.gatherDotMax = maxAffineRowAVX, backPoolMaxRowAVX, gatherDotMaxRowAVX
	k.winograd4In, k.winograd4Out, k.winograd4Grad = winograd4InAVX, winograd4OutAVX, winograd4GradAVX
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

func momentsAVX(sum, sq []float64, x, shift []float32) {
	columnMoments(sum, sq, x, shift, 8, momentsColumnAVX)
}

func dotCenteredAVX(acc []float64, g, z, mu []float32) {
	columnDots(acc, g, z, mu, 8, dotColumnAVX)
}

//go:noescape
func momentsColumnAVX(sum, sq *float64, x, shift *float32, stride, rows int)

//go:noescape
func dotColumnAVX(acc *float64, grad, z, mu *float32, stride, rows int)

func reluAVX(dst, x []float32) {
	n := len(dst) &^ 3
	zero := splat4(0)
	for i := 0; i < n; i += 4 {
		// VMAXPS returns its second operand if either is NaN or both are
		// zeros: x second keeps a NaN, and adding +0 makes max(-0, 0)
		// +0, as Go's max.
		zero.Max(load4(x[i:])).Add(zero).StoreSlice(dst[i:])
	}
	reluGo(dst[n:], x[n:])
}

func maskAVX(dst, x, v []float32) {
	n := len(dst) &^ 3
	zero := splat4(0)
	for i := 0; i < n; i += 4 {
		load4(v[i:]).Masked(load4(x[i:]).Greater(zero)).StoreSlice(dst[i:])
	}
	maskGo(dst[n:], x[n:], v[n:])
}

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

func maxAffineRowAVX(dst, z0, z1, a, c []float32) {
	f := len(a)
	if f%4 != 0 {
		maxAffineRowGo(dst, z0, z1, a, c)
		return
	}
	n := len(dst) / f
	z0, z1, dst, c = z0[:2*n*f], z1[:2*n*f], dst[:n*f], c[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 4 {
			sv := load4(a[ch:])
			i, q := j*f+ch, 2*j*f+ch
			x := atFirstMax4(load4(z0[q:]), load4(z0[q+f:]), load4(z1[q:]), load4(z1[q+f:]), sv)
			x.Mul(sv).Add(load4(c[ch:])).StoreSlice(dst[i:])
		}
	}
}

// firstMax4 is firstMax on 4 lanes as one mask per window position, true
// at the first entry whose product with s is the window's maximum, and at
// the last if a product is NaN, as in firstMax, where Go's max is then NaN
// and equals no entry (VMAXPS would return one of its operands instead,
// which one depending on how the compiler ordered them).
func firstMax4(x00, x01, x10, x11, s f32x4) (p0, p1, p2, p3 archsimd.Mask32x4) {
	v00, v01, v10, v11 := x00.Mul(s), x01.Mul(s), x10.Mul(s), x11.Mul(s)
	nan := v00.IsNaN().Or(v01.IsNaN()).Or(v10.IsNaN()).Or(v11.IsNaN())
	m := splat4(float32(math.NaN())).Merge(v00.Max(v01).Max(v10.Max(v11)), nan)
	n0, n01 := v00.NotEqual(m), v01.NotEqual(m)
	n01 = n01.And(n0)
	return v00.Equal(m), n0.And(v01.Equal(m)), n01.And(v10.Equal(m)), n01.And(v10.NotEqual(m))
}

// atFirstMax4 is the entry of each window at firstMax4's position.
func atFirstMax4(x00, x01, x10, x11, s f32x4) f32x4 {
	p0, p1, p2, _ := firstMax4(x00, x01, x10, x11, s)
	return x00.Merge(x01.Merge(x10.Merge(x11, p2), p1), p0)
}

func backPoolMaxRowAVX(o0, o1, z0, z1, g, u, v, w []float32) {
	c := len(u)
	if c%4 != 0 {
		backPoolMaxRowGo(o0, o1, z0, z1, g, u, v, w)
		return
	}
	n := len(g) / c
	o0, o1, z0, z1, g = o0[:2*n*c], o1[:2*n*c], z0[:2*n*c], z1[:2*n*c], g[:n*c]
	v, w = v[:c], w[:c]
	for j := 0; j < n; j++ {
		for ch := 0; ch < c; ch += 4 {
			i, a := j*c+ch, 2*j*c+ch
			b := a + c
			vv, ww, uu := load4(v[ch:]), load4(w[ch:]), load4(u[ch:])
			x00, x01, x10, x11 := load4(z0[a:]), load4(z0[b:]), load4(z1[a:]), load4(z1[b:])
			p0, p1, p2, p3 := firstMax4(x00, x01, x10, x11, uu)
			// The chosen entry gets y + g*u, the others y itself (adding a
			// masked +0 would turn a -0 into +0).
			gu := load4(g[i:]).Mul(uu)
			y00, y01, y10, y11 := x00.Mul(vv).Add(ww), x01.Mul(vv).Add(ww), x10.Mul(vv).Add(ww), x11.Mul(vv).Add(ww)
			y00.Add(gu).Merge(y00, p0).StoreSlice(o0[a:])
			y01.Add(gu).Merge(y01, p1).StoreSlice(o0[b:])
			y10.Add(gu).Merge(y10, p2).StoreSlice(o1[a:])
			y11.Add(gu).Merge(y11, p3).StoreSlice(o1[b:])
		}
	}
}

// gatherDotMaxRowAVX selects and multiplies on 4 lanes and adds to the
// float64 sums one by one (the conversion to float64 would need 8-lane
// registers).
func gatherDotMaxRowAVX(acc []float64, z0, z1, g, s, mu []float32) {
	f := len(mu)
	if f%4 != 0 {
		gatherDotMaxRowGo(acc, z0, z1, g, s, mu)
		return
	}
	n := len(g) / f
	z0, z1, g, acc = z0[:2*n*f], z1[:2*n*f], g[:n*f], acc[:f]
	var t [4]float32
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 4 {
			i, q := j*f+ch, 2*j*f+ch
			x := atFirstMax4(load4(z0[q:]), load4(z0[q+f:]), load4(z1[q:]), load4(z1[q+f:]), load4(s[ch:]))
			load4(g[i:]).Mul(x.Sub(load4(mu[ch:]))).Store(&t)
			a := acc[ch : ch+4]
			a[0], a[1], a[2], a[3] = a[0]+float64(t[0]), a[1]+float64(t[1]), a[2]+float64(t[2]), a[3]+float64(t[3])
		}
	}
}
