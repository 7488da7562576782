//go:build goexperiment.simd

package vec

import "simd/archsimd"

func init() {
	sseSet = []kernels{sseKernels()}
	if archsimd.X86.AVX() {
		avxSet = []kernels{avxKernels()}
	}
	if !(archsimd.X86.AVX2() && archsimd.X86.FMA()) {
		if len(avxSet) > 0 {
			impl, lanes, isa = avxSet[0], 4, "AVX"
		} else {
			impl, lanes, isa = sseSet[0], 4, "SSE"
		}
		return
	}
	impl = kernels{affineSIMD, affine2SIMD, addToSIMD, sumRowsSIMD, momentsSIMD, dotCenteredSIMD,
		gatherSIMD, scatterSIMD, reluSIMD, maskSIMD, addScaledSIMD, scaleSIMD, poolArgScaledSIMD, addAtScaledSIMD,
		winogradInSIMD, winogradOutSIMD, winogradKernelSIMD, winogradGradSIMD, winogradKernelTSIMD,
		backPoolRowSIMD, gatherAffineRowSIMD, poolArgRowSIMD, gatherDotRowSIMD, maxAffineRowSIMD,
		backPoolMaxRowSIMD, gatherDotMaxRowSIMD, conv1SIMD, convPool1SIMD, convBack1SIMD,
		winograd4InSIMD, winograd4OutSIMD, winograd4KernelSIMD, winograd4GradSIMD, winograd4KernelTSIMD,
		patchMomentsSIMD, blockBackRowSIMD, extremeRowSIMD}
	useSIMD, lanes, isa = true, 8, "AVX2"
	simdSets = append(simdSets, impl)
	if archsimd.X86.AVX512() {
		impl.moments, impl.dotCentered = moments512, dotCentered512
		impl.poolArgRow, impl.gatherDotRow = poolArgRow512, gatherDotRow512
		impl.gatherAffRow, impl.backPoolRow, impl.maxAffRow = gatherAffineRow512, backPoolRow512, maxAffineRow512
		impl.winogradIn, impl.winogradOut, impl.winogradGrad = winogradIn512, winogradOut512, winogradGrad512
		impl.backPoolMax, impl.gatherDotMax = backPoolMaxRow512, gatherDotMaxRow512
		impl.conv1, impl.convPool1, impl.convBack1, impl.patchMoments = conv1512, convPool1512, convBack1512, patchMoments512
		impl.blockBackRow, impl.extremeRow = blockBackRow512, extremeRow512
		impl.winograd4In, impl.winograd4Out, impl.winograd4Grad = winograd4In512, winograd4Out512, winograd4Grad512
		impl.winograd4K, impl.winograd4KT = winograd4Kernel512, winograd4KernelT512
		lanes, isa = 16, "AVX-512"
		simdSets = append(simdSets, impl)
	}
}

// The row kernels take the vector path when the rows are whole vectors
// (len(a) a multiple of 8, as with the CNN's 32 or 64 filters) and the
// plain loops otherwise; the element kernels do the whole vectors and leave
// the tail to the plain loops.

type f32x8 = archsimd.Float32x8

// clearUpper clears the upper bits of the vector registers (VZEROUPPER)
// after an archsimd kernel, which leaves them set: Go's compiler emits
// legacy SSE instructions for scalar floating point and the runtime's
// short copies, and on this project's Intel Xeon (Emerald Rapids class,
// under KVM) each such instruction then ran about a hundred times slower
// (a loop of math.Exp: 11 ms per million clean, 1.9-7.7 s after a 512-bit
// add). The exported functions call it after every kernel, the kernels
// before their scalar sums. It changes no value.
func clearUpper() {
	if hasAVX {
		archsimd.ClearAVXUpperBits()
	}
}

// hasAVX tells whether the CPU runs VZEROUPPER.
var hasAVX = archsimd.X86.AVX()

func load(s []float32) f32x8 { return archsimd.LoadFloat32x8Slice(s) }

func affineSIMD(dst, x, a, c []float32) {
	f := len(a)
	if f%8 != 0 {
		affineGo(dst, x, a, c)
		return
	}
	for p := 0; p+f <= len(dst); p += f {
		d, xs := dst[p:p+f], x[p:p+f]
		for i := 0; i < f; i += 8 {
			load(xs[i:]).MulAdd(load(a[i:]), load(c[i:])).StoreSlice(d[i:])
		}
	}
}

func affine2SIMD(dst, x, y, a, b, c []float32) {
	f := len(a)
	if f%8 != 0 {
		affine2Go(dst, x, y, a, b, c)
		return
	}
	for p := 0; p+f <= len(dst); p += f {
		d, xs, ys := dst[p:p+f], x[p:p+f], y[p:p+f]
		for i := 0; i < f; i += 8 {
			yc := load(ys[i:]).MulAdd(load(b[i:]), load(c[i:]))
			load(xs[i:]).MulAdd(load(a[i:]), yc).StoreSlice(d[i:])
		}
	}
}

func addToSIMD(dst, src []float32) {
	n := len(dst) &^ 7
	for i := 0; i < n; i += 8 {
		load(dst[i:]).Add(load(src[i:])).StoreSlice(dst[i:])
	}
	addToGo(dst[n:], src[n:])
}

func sumRowsSIMD(dst, x []float32) {
	f := len(dst)
	if f%8 != 0 {
		sumRowsGo(dst, x)
		return
	}
	for p := 0; p+f <= len(x); p += f {
		addToSIMD(dst, x[p:p+f])
	}
}

func momentsSIMD(sum, sq []float64, x, shift []float32) {
	f := len(shift)
	if f%8 != 0 {
		momentsGo(sum, sq, x, shift)
		return
	}
	rows := len(x) / f
	sum, sq = sum[:f], sq[:f]
	for r0 := 0; r0 < rows; r0 += rowBlock {
		block := x[r0*f : min(rows, r0+rowBlock)*f]
		for i := 0; i < f; i += 8 {
			momentsColumn(sum, sq, block, shift, i, f)
		}
	}
}

// momentsColumn adds the moments of channels i..i+7 of the rows of block
// (f channels each) to sum and sq.
func momentsColumn(sum, sq []float64, block, shift []float32, i, f int) {
	zero := archsimd.BroadcastFloat64x4(0)
	sh := load(shift[i:])
	sl, sh4, ql, qh := zero, zero, zero, zero
	for p := i; p < len(block); p += f {
		d := load(block[p:]).Sub(sh)
		l, h := d.GetLo().ConvertToFloat64(), d.GetHi().ConvertToFloat64()
		sl, sh4 = sl.Add(l), sh4.Add(h)
		ql, qh = l.MulAdd(l, ql), h.MulAdd(h, qh)
	}
	archsimd.LoadFloat64x4Slice(sum[i:]).Add(sl).StoreSlice(sum[i:])
	archsimd.LoadFloat64x4Slice(sum[i+4:]).Add(sh4).StoreSlice(sum[i+4:])
	archsimd.LoadFloat64x4Slice(sq[i:]).Add(ql).StoreSlice(sq[i:])
	archsimd.LoadFloat64x4Slice(sq[i+4:]).Add(qh).StoreSlice(sq[i+4:])
}

func dotCenteredSIMD(acc []float64, g, z, mu []float32) {
	f := len(mu)
	if f%8 != 0 {
		dotCenteredGo(acc, g, z, mu)
		return
	}
	rows := len(z) / f
	acc = acc[:f]
	for r0 := 0; r0 < rows; r0 += rowBlock {
		n := min(rows, r0+rowBlock) * f
		zb, gb := z[r0*f:n], g[r0*f:n]
		for i := 0; i < f; i += 8 {
			dotColumn(acc, gb, zb, mu, i, f)
		}
	}
}

// dotColumn adds the sums of g*(z-mu) of channels i..i+7 of the rows of
// gb and zb (f channels each) to acc.
func dotColumn(acc []float64, gb, zb, mu []float32, i, f int) {
	zero := archsimd.BroadcastFloat64x4(0)
	m := load(mu[i:])
	al, ah := zero, zero
	for p := i; p < len(zb); p += f {
		v := load(gb[p:]).Mul(load(zb[p:]).Sub(m))
		al, ah = al.Add(v.GetLo().ConvertToFloat64()), ah.Add(v.GetHi().ConvertToFloat64())
	}
	archsimd.LoadFloat64x4Slice(acc[i:]).Add(al).StoreSlice(acc[i:])
	archsimd.LoadFloat64x4Slice(acc[i+4:]).Add(ah).StoreSlice(acc[i+4:])
}

func gatherSIMD(dst, pos, r0, r1, r2, r3 []float32) {
	n := len(dst) &^ 7
	one, two, three := archsimd.BroadcastFloat32x8(1), archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for i := 0; i < n; i += 8 {
		p := load(pos[i:])
		v := load(r0[i:])
		v = load(r1[i:]).Merge(v, p.Equal(one))
		v = load(r2[i:]).Merge(v, p.Equal(two))
		v = load(r3[i:]).Merge(v, p.Equal(three))
		v.StoreSlice(dst[i:])
	}
	gatherGo(dst[n:], pos[n:], r0[n:], r1[n:], r2[n:], r3[n:])
}

func scatterSIMD(o0, o1, o2, o3, pos, g []float32) {
	n := len(pos) &^ 7
	zero, one := archsimd.BroadcastFloat32x8(0), archsimd.BroadcastFloat32x8(1)
	two, three := archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for i := 0; i < n; i += 8 {
		p, v := load(pos[i:]), load(g[i:])
		v.Masked(p.Equal(zero)).StoreSlice(o0[i:])
		v.Masked(p.Equal(one)).StoreSlice(o1[i:])
		v.Masked(p.Equal(two)).StoreSlice(o2[i:])
		v.Masked(p.Equal(three)).StoreSlice(o3[i:])
	}
	scatterGo(o0[n:], o1[n:], o2[n:], o3[n:], pos[n:], g[n:])
}

func reluSIMD(dst, x []float32) {
	n := len(dst) &^ 7
	zero := archsimd.BroadcastFloat32x8(0)
	for i := 0; i < n; i += 8 {
		// VMAXPS returns its second operand where either is NaN: x second
		// keeps a NaN activation NaN, as max(v, 0) does, so a diverged run
		// still fails its finiteness check instead of zeroing the channel.
		zero.Max(load(x[i:])).StoreSlice(dst[i:])
	}
	reluGo(dst[n:], x[n:])
}

// addScaledSIMD and scaleSIMD multiply and add in two roundings, as the
// plain loops do, so every implementation gives the same bits.
func addScaledSIMD(dst, x, y []float32, k float32) {
	n := len(dst) &^ 7
	x, y = x[:len(dst)], y[:len(dst)]
	kv := archsimd.BroadcastFloat32x8(k)
	for i := 0; i < n; i += 8 {
		load(x[i:]).Add(kv.Mul(load(y[i:]))).StoreSlice(dst[i:])
	}
	addScaledGo(dst[n:], x[n:], y[n:], k)
}

func scaleSIMD(dst, x []float32, k float32) {
	n := len(dst) &^ 7
	x = x[:len(dst)]
	kv := archsimd.BroadcastFloat32x8(k)
	for i := 0; i < n; i += 8 {
		kv.Mul(load(x[i:])).StoreSlice(dst[i:])
	}
	scaleGo(dst[n:], x[n:], k)
}

func maskSIMD(dst, x, v []float32) {
	n := len(dst) &^ 7
	zero := archsimd.BroadcastFloat32x8(0)
	for i := 0; i < n; i += 8 {
		load(v[i:]).Masked(load(x[i:]).Greater(zero)).StoreSlice(dst[i:])
	}
	maskGo(dst[n:], x[n:], v[n:])
}

func poolArgScaledSIMD(dst, x00, x01, x10, x11, s []float32) {
	n := len(dst) &^ 7
	one := archsimd.BroadcastFloat32x8(1)
	for i := 0; i < n; i += 8 {
		sv := load(s[i:])
		v00, v01, v10, v11 := load(x00[i:]).Mul(sv), load(x01[i:]).Mul(sv), load(x10[i:]).Mul(sv), load(x11[i:]).Mul(sv)
		m := v00.Max(v01).Max(v10.Max(v11))
		n0, n1, n2 := one.Masked(v00.NotEqual(m)), one.Masked(v01.NotEqual(m)), one.Masked(v10.NotEqual(m))
		n0.Mul(n1.MulAdd(n2.Add(one), one)).StoreSlice(dst[i:])
	}
	poolArgScaledGo(dst[n:], x00[n:], x01[n:], x10[n:], x11[n:], s[n:])
}

func addAtScaledSIMD(o0, o1, o2, o3, pos, g, u []float32) {
	n := len(pos) &^ 7
	zero, one := archsimd.BroadcastFloat32x8(0), archsimd.BroadcastFloat32x8(1)
	two, three := archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for i := 0; i < n; i += 8 {
		p, v := load(pos[i:]), load(g[i:]).Mul(load(u[i:]))
		load(o0[i:]).Add(v.Masked(p.Equal(zero))).StoreSlice(o0[i:])
		load(o1[i:]).Add(v.Masked(p.Equal(one))).StoreSlice(o1[i:])
		load(o2[i:]).Add(v.Masked(p.Equal(two))).StoreSlice(o2[i:])
		load(o3[i:]).Add(v.Masked(p.Equal(three))).StoreSlice(o3[i:])
	}
	addAtScaledGo(o0[n:], o1[n:], o2[n:], o3[n:], pos[n:], g[n:], u[n:])
}

func winogradInSIMD(dst []float32, stride int, r0, r1, r2, r3 []float32, c int) {
	if c%8 != 0 {
		winogradInGo(dst, stride, r0, r1, r2, r3, c)
		return
	}
	r0, r1, r2, r3, dst = r0[:4*c], r1[:4*c], r2[:4*c], r3[:4*c], dst[:15*stride+c]
	for ch := 0; ch < c; ch += 8 {
		// d B for the four rows, then Bᵀ over them.
		rowB := func(r []float32) (f32x8, f32x8, f32x8, f32x8) {
			d0, d1, d2, d3 := load(r[ch:]), load(r[c+ch:]), load(r[2*c+ch:]), load(r[3*c+ch:])
			return d0.Sub(d2), d1.Add(d2), d2.Sub(d1), d1.Sub(d3)
		}
		a0, a1, a2, a3 := rowB(r0)
		b0, b1, b2, b3 := rowB(r1)
		c0, c1, c2, c3 := rowB(r2)
		a0.Sub(c0).StoreSlice(dst[ch:])
		a1.Sub(c1).StoreSlice(dst[stride+ch:])
		a2.Sub(c2).StoreSlice(dst[2*stride+ch:])
		a3.Sub(c3).StoreSlice(dst[3*stride+ch:])
		b0.Add(c0).StoreSlice(dst[4*stride+ch:])
		b1.Add(c1).StoreSlice(dst[5*stride+ch:])
		b2.Add(c2).StoreSlice(dst[6*stride+ch:])
		b3.Add(c3).StoreSlice(dst[7*stride+ch:])
		c0.Sub(b0).StoreSlice(dst[8*stride+ch:])
		c1.Sub(b1).StoreSlice(dst[9*stride+ch:])
		c2.Sub(b2).StoreSlice(dst[10*stride+ch:])
		c3.Sub(b3).StoreSlice(dst[11*stride+ch:])
		d0, d1, d2, d3 := rowB(r3)
		b0.Sub(d0).StoreSlice(dst[12*stride+ch:])
		b1.Sub(d1).StoreSlice(dst[13*stride+ch:])
		b2.Sub(d2).StoreSlice(dst[14*stride+ch:])
		b3.Sub(d3).StoreSlice(dst[15*stride+ch:])
	}
}

func winogradOutSIMD(y0, y1, m []float32, stride, c int) {
	if c%8 != 0 {
		winogradOutGo(y0, y1, m, stride, c)
		return
	}
	y0, y1, m = y0[:2*c], y1[:2*c], m[:15*stride+c]
	for ch := 0; ch < c; ch += 8 {
		// m A for the four rows, then Aᵀ over them.
		rowA := func(r int) (f32x8, f32x8) {
			m0, m1, m2, m3 := load(m[4*r*stride+ch:]), load(m[(4*r+1)*stride+ch:]), load(m[(4*r+2)*stride+ch:]), load(m[(4*r+3)*stride+ch:])
			return m0.Add(m1).Add(m2), m1.Sub(m2).Sub(m3)
		}
		z00, z01 := rowA(0)
		z10, z11 := rowA(1)
		z20, z21 := rowA(2)
		z30, z31 := rowA(3)
		z00.Add(z10).Add(z20).StoreSlice(y0[ch:])
		z01.Add(z11).Add(z21).StoreSlice(y0[c+ch:])
		z10.Sub(z20).Sub(z30).StoreSlice(y1[ch:])
		z11.Sub(z21).Sub(z31).StoreSlice(y1[c+ch:])
	}
}

func winogradKernelSIMD(dst *[16][]float32, src *[9][]float32) {
	n := len(dst[0]) &^ 7
	half := archsimd.BroadcastFloat32x8(0.5)
	for i := 0; i < n; i += 8 {
		var t [3][4]f32x8 // k Gᵀ
		for kh := 0; kh < 3; kh++ {
			g0, g1, g2 := load(src[3*kh][i:]), load(src[3*kh+1][i:]), load(src[3*kh+2][i:])
			t[kh] = [4]f32x8{g0, g0.Add(g1).Add(g2).Mul(half), g0.Sub(g1).Add(g2).Mul(half), g2}
		}
		for b := 0; b < 4; b++ { // G (k Gᵀ)
			g0, g1, g2 := t[0][b], t[1][b], t[2][b]
			g0.StoreSlice(dst[b][i:])
			g0.Add(g1).Add(g2).Mul(half).StoreSlice(dst[4+b][i:])
			g0.Sub(g1).Add(g2).Mul(half).StoreSlice(dst[8+b][i:])
			g2.StoreSlice(dst[12+b][i:])
		}
	}
	if n < len(dst[0]) {
		var d [16][]float32
		var s [9][]float32
		for e := range d {
			d[e] = dst[e][n:]
		}
		for e := range s {
			s[e] = src[e][n:]
		}
		winogradKernelGo(&d, &s)
	}
}

func winogradGradSIMD(dst []float32, stride int, g0, g1 []float32, c int) {
	if c%8 != 0 {
		winogradGradGo(dst, stride, g0, g1, c)
		return
	}
	g0, g1, dst = g0[:2*c], g1[:2*c], dst[:15*stride+c]
	zero := archsimd.BroadcastFloat32x8(0)
	// Row r of A g is (h0, h1); row r of (A g) Aᵀ is (h0, h0+h1, h0-h1, -h1).
	row := func(d []float32, h0, h1 f32x8) {
		h0.StoreSlice(d)
		h0.Add(h1).StoreSlice(d[stride:])
		h0.Sub(h1).StoreSlice(d[2*stride:])
		zero.Sub(h1).StoreSlice(d[3*stride:])
	}
	for ch := 0; ch < c; ch += 8 {
		a, b, e, f := load(g0[ch:]), load(g0[c+ch:]), load(g1[ch:]), load(g1[c+ch:])
		row(dst[ch:], a, b)
		row(dst[4*stride+ch:], a.Add(e), b.Add(f))
		row(dst[8*stride+ch:], a.Sub(e), b.Sub(f))
		row(dst[12*stride+ch:], zero.Sub(e), zero.Sub(f))
	}
}

func winogradKernelTSIMD(dst *[9][]float32, src *[16][]float32) {
	n := len(dst[0]) &^ 7
	half := archsimd.BroadcastFloat32x8(0.5)
	for i := 0; i < n; i += 8 {
		var t [4][3]f32x8 // S G
		for a := 0; a < 4; a++ {
			s0, s1, s2, s3 := load(src[4*a][i:]), load(src[4*a+1][i:]), load(src[4*a+2][i:]), load(src[4*a+3][i:])
			p := s1.Add(s2).Mul(half)
			t[a] = [3]f32x8{s0.Add(p), s1.Sub(s2).Mul(half), p.Add(s3)}
		}
		for j := 0; j < 3; j++ { // Gᵀ (S G)
			t0, t1, t2, t3 := t[0][j], t[1][j], t[2][j], t[3][j]
			p := t1.Add(t2).Mul(half)
			t0.Add(p).StoreSlice(dst[j][i:])
			t1.Sub(t2).Mul(half).StoreSlice(dst[3+j][i:])
			p.Add(t3).StoreSlice(dst[6+j][i:])
		}
	}
	if n < len(dst[0]) {
		var d [9][]float32
		var s [16][]float32
		for e := range d {
			d[e] = dst[e][n:]
		}
		for e := range s {
			s[e] = src[e][n:]
		}
		winogradKernelTGo(&d, &s)
	}
}

func backPoolRowSIMD(o0, o1, z0, z1, pos, g, u, v, w []float32) {
	c := len(u)
	if c%8 != 0 {
		backPoolRowGo(o0, o1, z0, z1, pos, g, u, v, w)
		return
	}
	n := len(pos) / c
	o0, o1, z0, z1, g = o0[:2*n*c], o1[:2*n*c], z0[:2*n*c], z1[:2*n*c], g[:n*c]
	v, w = v[:c], w[:c]
	zero, one := archsimd.BroadcastFloat32x8(0), archsimd.BroadcastFloat32x8(1)
	two, three := archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < c; ch += 8 {
			i, a := j*c+ch, 2*j*c+ch
			b := a + c
			vv, ww := load(v[ch:]), load(w[ch:])
			p, gu := load(pos[i:]), load(g[i:]).Mul(load(u[ch:]))
			load(z0[a:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(zero))).StoreSlice(o0[a:])
			load(z0[b:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(one))).StoreSlice(o0[b:])
			load(z1[a:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(two))).StoreSlice(o1[a:])
			load(z1[b:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(three))).StoreSlice(o1[b:])
		}
	}
}

func gatherAffineRowSIMD(dst, pos, z0, z1, a, c []float32) {
	f := len(a)
	if f%8 != 0 {
		gatherAffineRowGo(dst, pos, z0, z1, a, c)
		return
	}
	n := len(dst) / f
	z0, z1, pos, c = z0[:2*n*f], z1[:2*n*f], pos[:n*f], c[:f]
	one, two, three := archsimd.BroadcastFloat32x8(1), archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 8 {
			i, q := j*f+ch, 2*j*f+ch
			p := load(pos[i:])
			x := load(z0[q:])
			x = load(z0[q+f:]).Merge(x, p.Equal(one))
			x = load(z1[q:]).Merge(x, p.Equal(two))
			x = load(z1[q+f:]).Merge(x, p.Equal(three))
			x.MulAdd(load(a[ch:]), load(c[ch:])).StoreSlice(dst[i:])
		}
	}
}

// The AVX-512 sums: 32 channels of a row at a time, widened to float64 in
// one instruction per 8 channels and summed in independent registers, the
// rows of each block in momentsSIMD's and dotCenteredSIMD's order, so the
// results are theirs bit for bit; the channels past a multiple of 32 take
// their column loops.

type f64x8 = archsimd.Float64x8

// addF64x8 adds v[j] to a[8j : 8j+8].
func addF64x8(a []float64, v *[4]f64x8) {
	for j := range v {
		archsimd.LoadFloat64x8Slice(a[8*j:]).Add(v[j]).StoreSlice(a[8*j:])
	}
}

func moments512(sum, sq []float64, x, shift []float32) {
	f := len(shift)
	if f%8 != 0 {
		momentsGo(sum, sq, x, shift)
		return
	}
	wide, rows := f&^31, len(x)/f
	sum, sq = sum[:f], sq[:f]
	zero := archsimd.BroadcastFloat64x8(0)
	for r0 := 0; r0 < rows; r0 += rowBlock {
		block := x[r0*f : min(rows, r0+rowBlock)*f]
		for i := 0; i < wide; i += 32 {
			ha, hb, hc, hd := load(shift[i:]), load(shift[i+8:]), load(shift[i+16:]), load(shift[i+24:])
			s0, s1, s2, s3 := zero, zero, zero, zero
			q0, q1, q2, q3 := zero, zero, zero, zero
			col := block[i:]
			for p := 0; p+32 <= len(col); p += f {
				a := load(col[p:]).Sub(ha).ConvertToFloat64()
				b := load(col[p+8:]).Sub(hb).ConvertToFloat64()
				c := load(col[p+16:]).Sub(hc).ConvertToFloat64()
				d := load(col[p+24:]).Sub(hd).ConvertToFloat64()
				s0, s1, s2, s3 = s0.Add(a), s1.Add(b), s2.Add(c), s3.Add(d)
				q0, q1, q2, q3 = a.MulAdd(a, q0), b.MulAdd(b, q1), c.MulAdd(c, q2), d.MulAdd(d, q3)
			}
			addF64x8(sum[i:], &[4]f64x8{s0, s1, s2, s3})
			addF64x8(sq[i:], &[4]f64x8{q0, q1, q2, q3})
		}
		for i := wide; i < f; i += 8 {
			momentsColumn(sum, sq, block, shift, i, f)
		}
	}
}

func dotCentered512(acc []float64, g, z, mu []float32) {
	f := len(mu)
	if f%8 != 0 {
		dotCenteredGo(acc, g, z, mu)
		return
	}
	wide, rows := f&^31, len(z)/f
	acc = acc[:f]
	zero := archsimd.BroadcastFloat64x8(0)
	for r0 := 0; r0 < rows; r0 += rowBlock {
		n := min(rows, r0+rowBlock) * f
		zb, gb := z[r0*f:n], g[r0*f:n]
		for i := 0; i < wide; i += 32 {
			ma, mb, mc, md := load(mu[i:]), load(mu[i+8:]), load(mu[i+16:]), load(mu[i+24:])
			s0, s1, s2, s3 := zero, zero, zero, zero
			zc, gc := zb[i:], gb[i:len(zb)]
			for p := 0; p+32 <= len(zc); p += f {
				s0 = s0.Add(load(gc[p:]).Mul(load(zc[p:]).Sub(ma)).ConvertToFloat64())
				s1 = s1.Add(load(gc[p+8:]).Mul(load(zc[p+8:]).Sub(mb)).ConvertToFloat64())
				s2 = s2.Add(load(gc[p+16:]).Mul(load(zc[p+16:]).Sub(mc)).ConvertToFloat64())
				s3 = s3.Add(load(gc[p+24:]).Mul(load(zc[p+24:]).Sub(md)).ConvertToFloat64())
			}
			addF64x8(acc[i:], &[4]f64x8{s0, s1, s2, s3})
		}
		for i := wide; i < f; i += 8 {
			dotColumn(acc, gb, zb, mu, i, f)
		}
	}
}

func poolArgRowSIMD(dst, z0, z1, s []float32) {
	f := len(s)
	if f%8 != 0 {
		poolArgRowGo(dst, z0, z1, s)
		return
	}
	n := len(dst) / f
	z0, z1, dst = z0[:2*n*f], z1[:2*n*f], dst[:n*f]
	one := archsimd.BroadcastFloat32x8(1)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 8 {
			sv := load(s[ch:])
			i, q := j*f+ch, 2*j*f+ch
			v00, v01 := load(z0[q:]).Mul(sv), load(z0[q+f:]).Mul(sv)
			v10, v11 := load(z1[q:]).Mul(sv), load(z1[q+f:]).Mul(sv)
			m := v00.Max(v01).Max(v10.Max(v11))
			n0, n1, n2 := one.Masked(v00.NotEqual(m)), one.Masked(v01.NotEqual(m)), one.Masked(v10.NotEqual(m))
			n0.Mul(n1.MulAdd(n2.Add(one), one)).StoreSlice(dst[i:])
		}
	}
}

// gatherDotRowSIMD goes through the windows in order (the images' order in
// memory: going down a column of channels instead misses the cache at
// every window) and adds to the sums in memory, in DotCentered's order.
func gatherDotRowSIMD(acc []float64, pos, z0, z1, g, mu []float32) {
	f := len(mu)
	if f%8 != 0 {
		gatherDotRowGo(acc, pos, z0, z1, g, mu)
		return
	}
	n := len(pos) / f
	z0, z1, pos, g, acc = z0[:2*n*f], z1[:2*n*f], pos[:n*f], g[:n*f], acc[:f]
	one, two, three := archsimd.BroadcastFloat32x8(1), archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 8 {
			m := load(mu[ch:])
			i, q := j*f+ch, 2*j*f+ch
			p := load(pos[i:])
			x := load(z0[q:])
			x = load(z0[q+f:]).Merge(x, p.Equal(one))
			x = load(z1[q:]).Merge(x, p.Equal(two))
			x = load(z1[q+f:]).Merge(x, p.Equal(three))
			v := load(g[i:]).Mul(x.Sub(m))
			archsimd.LoadFloat64x4Slice(acc[ch:]).Add(v.GetLo().ConvertToFloat64()).StoreSlice(acc[ch:])
			archsimd.LoadFloat64x4Slice(acc[ch+4:]).Add(v.GetHi().ConvertToFloat64()).StoreSlice(acc[ch+4:])
		}
	}
}

// The AVX-512 row kernels: 16 channels at a time, with mask registers for
// the window positions; rows of other widths take the AVX2 kernels.

type f32x16 = archsimd.Float32x16

func load16(s []float32) f32x16 { return archsimd.LoadFloat32x16Slice(s) }

func poolArgRow512(dst, z0, z1, s []float32) {
	f := len(s)
	if f%16 != 0 {
		poolArgRowSIMD(dst, z0, z1, s)
		return
	}
	n := len(dst) / f
	z0, z1, dst = z0[:2*n*f], z1[:2*n*f], dst[:n*f]
	one := archsimd.BroadcastFloat32x16(1)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 16 {
			sv := load16(s[ch:])
			i, q := j*f+ch, 2*j*f+ch
			v00, v01 := load16(z0[q:]).Mul(sv), load16(z0[q+f:]).Mul(sv)
			v10, v11 := load16(z1[q:]).Mul(sv), load16(z1[q+f:]).Mul(sv)
			m := v00.Max(v01).Max(v10.Max(v11))
			n0, n1, n2 := one.Masked(v00.NotEqual(m)), one.Masked(v01.NotEqual(m)), one.Masked(v10.NotEqual(m))
			n0.Mul(n1.MulAdd(n2.Add(one), one)).StoreSlice(dst[i:])
		}
	}
}

// gather16 returns the 16 entries at the positions p of the window rows at
// q of z0 and z1 (f channels per pixel).
func gather16(z0, z1 []float32, q, f int, p f32x16) f32x16 {
	one, two, three := archsimd.BroadcastFloat32x16(1), archsimd.BroadcastFloat32x16(2), archsimd.BroadcastFloat32x16(3)
	x := load16(z0[q:])
	x = load16(z0[q+f:]).Merge(x, p.Equal(one))
	x = load16(z1[q:]).Merge(x, p.Equal(two))
	return load16(z1[q+f:]).Merge(x, p.Equal(three))
}

func gatherDotRow512(acc []float64, pos, z0, z1, g, mu []float32) {
	f := len(mu)
	if f%16 != 0 {
		gatherDotRowSIMD(acc, pos, z0, z1, g, mu)
		return
	}
	n := len(pos) / f
	z0, z1, pos, g, acc = z0[:2*n*f], z1[:2*n*f], pos[:n*f], g[:n*f], acc[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 16 {
			i, q := j*f+ch, 2*j*f+ch
			v := load16(g[i:]).Mul(gather16(z0, z1, q, f, load16(pos[i:])).Sub(load16(mu[ch:])))
			archsimd.LoadFloat64x8Slice(acc[ch:]).Add(v.GetLo().ConvertToFloat64()).StoreSlice(acc[ch:])
			archsimd.LoadFloat64x8Slice(acc[ch+8:]).Add(v.GetHi().ConvertToFloat64()).StoreSlice(acc[ch+8:])
		}
	}
}

func gatherAffineRow512(dst, pos, z0, z1, a, c []float32) {
	f := len(a)
	if f%16 != 0 {
		gatherAffineRowSIMD(dst, pos, z0, z1, a, c)
		return
	}
	n := len(dst) / f
	z0, z1, pos, c = z0[:2*n*f], z1[:2*n*f], pos[:n*f], c[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 16 {
			i, q := j*f+ch, 2*j*f+ch
			gather16(z0, z1, q, f, load16(pos[i:])).MulAdd(load16(a[ch:]), load16(c[ch:])).StoreSlice(dst[i:])
		}
	}
}

func backPoolRow512(o0, o1, z0, z1, pos, g, u, v, w []float32) {
	c := len(u)
	if c%16 != 0 {
		backPoolRowSIMD(o0, o1, z0, z1, pos, g, u, v, w)
		return
	}
	n := len(pos) / c
	o0, o1, z0, z1, g = o0[:2*n*c], o1[:2*n*c], z0[:2*n*c], z1[:2*n*c], g[:n*c]
	v, w = v[:c], w[:c]
	zero, one := archsimd.BroadcastFloat32x16(0), archsimd.BroadcastFloat32x16(1)
	two, three := archsimd.BroadcastFloat32x16(2), archsimd.BroadcastFloat32x16(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < c; ch += 16 {
			i, a := j*c+ch, 2*j*c+ch
			b := a + c
			vv, ww := load16(v[ch:]), load16(w[ch:])
			p, gu := load16(pos[i:]), load16(g[i:]).Mul(load16(u[ch:]))
			load16(z0[a:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(zero))).StoreSlice(o0[a:])
			load16(z0[b:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(one))).StoreSlice(o0[b:])
			load16(z1[a:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(two))).StoreSlice(o1[a:])
			load16(z1[b:]).MulAdd(vv, ww).Add(gu.Masked(p.Equal(three))).StoreSlice(o1[b:])
		}
	}
}

func winogradIn512(dst []float32, stride int, r0, r1, r2, r3 []float32, c int) {
	if c%16 != 0 {
		winogradInSIMD(dst, stride, r0, r1, r2, r3, c)
		return
	}
	r0, r1, r2, r3, dst = r0[:4*c], r1[:4*c], r2[:4*c], r3[:4*c], dst[:15*stride+c]
	for ch := 0; ch < c; ch += 16 {
		// d B for the four rows, then Bᵀ over them (winogradInSIMD's).
		rowB := func(r []float32) (f32x16, f32x16, f32x16, f32x16) {
			d0, d1, d2, d3 := load16(r[ch:]), load16(r[c+ch:]), load16(r[2*c+ch:]), load16(r[3*c+ch:])
			return d0.Sub(d2), d1.Add(d2), d2.Sub(d1), d1.Sub(d3)
		}
		a0, a1, a2, a3 := rowB(r0)
		b0, b1, b2, b3 := rowB(r1)
		c0, c1, c2, c3 := rowB(r2)
		a0.Sub(c0).StoreSlice(dst[ch:])
		a1.Sub(c1).StoreSlice(dst[stride+ch:])
		a2.Sub(c2).StoreSlice(dst[2*stride+ch:])
		a3.Sub(c3).StoreSlice(dst[3*stride+ch:])
		b0.Add(c0).StoreSlice(dst[4*stride+ch:])
		b1.Add(c1).StoreSlice(dst[5*stride+ch:])
		b2.Add(c2).StoreSlice(dst[6*stride+ch:])
		b3.Add(c3).StoreSlice(dst[7*stride+ch:])
		c0.Sub(b0).StoreSlice(dst[8*stride+ch:])
		c1.Sub(b1).StoreSlice(dst[9*stride+ch:])
		c2.Sub(b2).StoreSlice(dst[10*stride+ch:])
		c3.Sub(b3).StoreSlice(dst[11*stride+ch:])
		d0, d1, d2, d3 := rowB(r3)
		b0.Sub(d0).StoreSlice(dst[12*stride+ch:])
		b1.Sub(d1).StoreSlice(dst[13*stride+ch:])
		b2.Sub(d2).StoreSlice(dst[14*stride+ch:])
		b3.Sub(d3).StoreSlice(dst[15*stride+ch:])
	}
}

func winogradOut512(y0, y1, m []float32, stride, c int) {
	if c%16 != 0 {
		winogradOutSIMD(y0, y1, m, stride, c)
		return
	}
	y0, y1, m = y0[:2*c], y1[:2*c], m[:15*stride+c]
	for ch := 0; ch < c; ch += 16 {
		// m A for the four rows, then Aᵀ over them (winogradOutSIMD's).
		rowA := func(r int) (f32x16, f32x16) {
			m0, m1, m2, m3 := load16(m[4*r*stride+ch:]), load16(m[(4*r+1)*stride+ch:]), load16(m[(4*r+2)*stride+ch:]), load16(m[(4*r+3)*stride+ch:])
			return m0.Add(m1).Add(m2), m1.Sub(m2).Sub(m3)
		}
		z00, z01 := rowA(0)
		z10, z11 := rowA(1)
		z20, z21 := rowA(2)
		z30, z31 := rowA(3)
		z00.Add(z10).Add(z20).StoreSlice(y0[ch:])
		z01.Add(z11).Add(z21).StoreSlice(y0[c+ch:])
		z10.Sub(z20).Sub(z30).StoreSlice(y1[ch:])
		z11.Sub(z21).Sub(z31).StoreSlice(y1[c+ch:])
	}
}

func winogradGrad512(dst []float32, stride int, g0, g1 []float32, c int) {
	if c%16 != 0 {
		winogradGradSIMD(dst, stride, g0, g1, c)
		return
	}
	g0, g1, dst = g0[:2*c], g1[:2*c], dst[:15*stride+c]
	zero := archsimd.BroadcastFloat32x16(0)
	// winogradGradSIMD's rows.
	row := func(d []float32, h0, h1 f32x16) {
		h0.StoreSlice(d)
		h0.Add(h1).StoreSlice(d[stride:])
		h0.Sub(h1).StoreSlice(d[2*stride:])
		zero.Sub(h1).StoreSlice(d[3*stride:])
	}
	for ch := 0; ch < c; ch += 16 {
		a, b, e, f := load16(g0[ch:]), load16(g0[c+ch:]), load16(g1[ch:]), load16(g1[c+ch:])
		row(dst[ch:], a, b)
		row(dst[4*stride+ch:], a.Add(e), b.Add(f))
		row(dst[8*stride+ch:], a.Sub(e), b.Sub(f))
		row(dst[12*stride+ch:], zero.Sub(e), zero.Sub(f))
	}
}

// maxAffineRowSIMD picks, per channel, the first entry whose scaled value
// is the window's maximum (the last if none is, as with a NaN), as
// poolArgScaledSIMD's positions do, and maps it as gatherAffineRowSIMD.
func maxAffineRowSIMD(dst, z0, z1, a, c []float32) {
	f := len(a)
	if f%8 != 0 {
		maxAffineRowGo(dst, z0, z1, a, c)
		return
	}
	n := len(dst) / f
	z0, z1, dst, c = z0[:2*n*f], z1[:2*n*f], dst[:n*f], c[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 8 {
			sv := load(a[ch:])
			i, q := j*f+ch, 2*j*f+ch
			x00, x01, x10, x11 := load(z0[q:]), load(z0[q+f:]), load(z1[q:]), load(z1[q+f:])
			v00, v01, v10, v11 := x00.Mul(sv), x01.Mul(sv), x10.Mul(sv), x11.Mul(sv)
			m := v00.Max(v01).Max(v10.Max(v11))
			x := x10.Merge(x11, v10.Equal(m))
			x = x01.Merge(x, v01.Equal(m))
			x = x00.Merge(x, v00.Equal(m))
			x.MulAdd(sv, load(c[ch:])).StoreSlice(dst[i:])
		}
	}
}

func maxAffineRow512(dst, z0, z1, a, c []float32) {
	f := len(a)
	if f%16 != 0 {
		maxAffineRowSIMD(dst, z0, z1, a, c)
		return
	}
	n := len(dst) / f
	z0, z1, dst, c = z0[:2*n*f], z1[:2*n*f], dst[:n*f], c[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 16 {
			sv := load16(a[ch:])
			i, q := j*f+ch, 2*j*f+ch
			x00, x01, x10, x11 := load16(z0[q:]), load16(z0[q+f:]), load16(z1[q:]), load16(z1[q+f:])
			v00, v01, v10, v11 := x00.Mul(sv), x01.Mul(sv), x10.Mul(sv), x11.Mul(sv)
			m := v00.Max(v01).Max(v10.Max(v11))
			x := x10.Merge(x11, v10.Equal(m))
			x = x01.Merge(x, v01.Equal(m))
			x = x00.Merge(x, v00.Equal(m))
			x.MulAdd(sv, load16(c[ch:])).StoreSlice(dst[i:])
		}
	}
}

func extremeRowSIMD(dst, z0, z1, s []float32) {
	f := len(s)
	if f%8 != 0 {
		extremeRowGo(dst, z0, z1, s)
		return
	}
	n := len(dst) / f
	z0, z1, dst = z0[:2*n*f], z1[:2*n*f], dst[:n*f]
	zero := archsimd.BroadcastFloat32x8(0)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 8 {
			q := 2*j*f + ch
			x00, x01, x10, x11 := load(z0[q:]), load(z0[q+f:]), load(z1[q:]), load(z1[q+f:])
			mx, mn := x00.Max(x01).Max(x10.Max(x11)), x00.Min(x01).Min(x10.Min(x11))
			mn.Merge(mx, load(s[ch:]).Less(zero)).StoreSlice(dst[j*f+ch:])
		}
	}
}

func extremeRow512(dst, z0, z1, s []float32) {
	f := len(s)
	if f%16 != 0 {
		extremeRowSIMD(dst, z0, z1, s)
		return
	}
	n := len(dst) / f
	z0, z1, dst = z0[:2*n*f], z1[:2*n*f], dst[:n*f]
	zero := archsimd.BroadcastFloat32x16(0)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 16 {
			q := 2*j*f + ch
			x00, x01, x10, x11 := load16(z0[q:]), load16(z0[q+f:]), load16(z1[q:]), load16(z1[q+f:])
			mx, mn := x00.Max(x01).Max(x10.Max(x11)), x00.Min(x01).Min(x10.Min(x11))
			mn.Merge(mx, load16(s[ch:]).Less(zero)).StoreSlice(dst[j*f+ch:])
		}
	}
}

// posMax8 and posMax16 are poolArgScaledSIMD's positions of a window's
// four entries scaled by s.
func posMax8(x00, x01, x10, x11, s f32x8) f32x8 {
	one := archsimd.BroadcastFloat32x8(1)
	v00, v01, v10, v11 := x00.Mul(s), x01.Mul(s), x10.Mul(s), x11.Mul(s)
	m := v00.Max(v01).Max(v10.Max(v11))
	n0, n1, n2 := one.Masked(v00.NotEqual(m)), one.Masked(v01.NotEqual(m)), one.Masked(v10.NotEqual(m))
	return n0.Mul(n1.MulAdd(n2.Add(one), one))
}

func posMax16(x00, x01, x10, x11, s f32x16) f32x16 {
	one := archsimd.BroadcastFloat32x16(1)
	v00, v01, v10, v11 := x00.Mul(s), x01.Mul(s), x10.Mul(s), x11.Mul(s)
	m := v00.Max(v01).Max(v10.Max(v11))
	n0, n1, n2 := one.Masked(v00.NotEqual(m)), one.Masked(v01.NotEqual(m)), one.Masked(v10.NotEqual(m))
	return n0.Mul(n1.MulAdd(n2.Add(one), one))
}

func backPoolMaxRowSIMD(o0, o1, z0, z1, g, u, v, w []float32) {
	c := len(u)
	if c%8 != 0 {
		backPoolMaxRowGo(o0, o1, z0, z1, g, u, v, w)
		return
	}
	n := len(g) / c
	o0, o1, z0, z1, g = o0[:2*n*c], o1[:2*n*c], z0[:2*n*c], z1[:2*n*c], g[:n*c]
	v, w = v[:c], w[:c]
	zero, one := archsimd.BroadcastFloat32x8(0), archsimd.BroadcastFloat32x8(1)
	two, three := archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < c; ch += 8 {
			i, a := j*c+ch, 2*j*c+ch
			b := a + c
			vv, ww, uu := load(v[ch:]), load(w[ch:]), load(u[ch:])
			x00, x01, x10, x11 := load(z0[a:]), load(z0[b:]), load(z1[a:]), load(z1[b:])
			p, gu := posMax8(x00, x01, x10, x11, uu), load(g[i:]).Mul(uu)
			x00.MulAdd(vv, ww).Add(gu.Masked(p.Equal(zero))).StoreSlice(o0[a:])
			x01.MulAdd(vv, ww).Add(gu.Masked(p.Equal(one))).StoreSlice(o0[b:])
			x10.MulAdd(vv, ww).Add(gu.Masked(p.Equal(two))).StoreSlice(o1[a:])
			x11.MulAdd(vv, ww).Add(gu.Masked(p.Equal(three))).StoreSlice(o1[b:])
		}
	}
}

func backPoolMaxRow512(o0, o1, z0, z1, g, u, v, w []float32) {
	c := len(u)
	if c%16 != 0 {
		backPoolMaxRowSIMD(o0, o1, z0, z1, g, u, v, w)
		return
	}
	n := len(g) / c
	o0, o1, z0, z1, g = o0[:2*n*c], o1[:2*n*c], z0[:2*n*c], z1[:2*n*c], g[:n*c]
	v, w = v[:c], w[:c]
	zero, one := archsimd.BroadcastFloat32x16(0), archsimd.BroadcastFloat32x16(1)
	two, three := archsimd.BroadcastFloat32x16(2), archsimd.BroadcastFloat32x16(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < c; ch += 16 {
			i, a := j*c+ch, 2*j*c+ch
			b := a + c
			vv, ww, uu := load16(v[ch:]), load16(w[ch:]), load16(u[ch:])
			x00, x01, x10, x11 := load16(z0[a:]), load16(z0[b:]), load16(z1[a:]), load16(z1[b:])
			p, gu := posMax16(x00, x01, x10, x11, uu), load16(g[i:]).Mul(uu)
			x00.MulAdd(vv, ww).Add(gu.Masked(p.Equal(zero))).StoreSlice(o0[a:])
			x01.MulAdd(vv, ww).Add(gu.Masked(p.Equal(one))).StoreSlice(o0[b:])
			x10.MulAdd(vv, ww).Add(gu.Masked(p.Equal(two))).StoreSlice(o1[a:])
			x11.MulAdd(vv, ww).Add(gu.Masked(p.Equal(three))).StoreSlice(o1[b:])
		}
	}
}

func gatherDotMaxRowSIMD(acc []float64, z0, z1, g, s, mu []float32) {
	f := len(mu)
	if f%8 != 0 {
		gatherDotMaxRowGo(acc, z0, z1, g, s, mu)
		return
	}
	n := len(g) / f
	z0, z1, g, acc = z0[:2*n*f], z1[:2*n*f], g[:n*f], acc[:f]
	one, two, three := archsimd.BroadcastFloat32x8(1), archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 8 {
			i, q := j*f+ch, 2*j*f+ch
			x00, x01, x10, x11 := load(z0[q:]), load(z0[q+f:]), load(z1[q:]), load(z1[q+f:])
			p := posMax8(x00, x01, x10, x11, load(s[ch:]))
			x := x01.Merge(x00, p.Equal(one))
			x = x10.Merge(x, p.Equal(two))
			x = x11.Merge(x, p.Equal(three))
			v := load(g[i:]).Mul(x.Sub(load(mu[ch:])))
			archsimd.LoadFloat64x4Slice(acc[ch:]).Add(v.GetLo().ConvertToFloat64()).StoreSlice(acc[ch:])
			archsimd.LoadFloat64x4Slice(acc[ch+4:]).Add(v.GetHi().ConvertToFloat64()).StoreSlice(acc[ch+4:])
		}
	}
}

func gatherDotMaxRow512(acc []float64, z0, z1, g, s, mu []float32) {
	f := len(mu)
	if f%16 != 0 {
		gatherDotMaxRowSIMD(acc, z0, z1, g, s, mu)
		return
	}
	n := len(g) / f
	z0, z1, g, acc = z0[:2*n*f], z1[:2*n*f], g[:n*f], acc[:f]
	one, two, three := archsimd.BroadcastFloat32x16(1), archsimd.BroadcastFloat32x16(2), archsimd.BroadcastFloat32x16(3)
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch += 16 {
			i, q := j*f+ch, 2*j*f+ch
			x00, x01, x10, x11 := load16(z0[q:]), load16(z0[q+f:]), load16(z1[q:]), load16(z1[q+f:])
			p := posMax16(x00, x01, x10, x11, load16(s[ch:]))
			x := x01.Merge(x00, p.Equal(one))
			x = x10.Merge(x, p.Equal(two))
			x = x11.Merge(x, p.Equal(three))
			v := load16(g[i:]).Mul(x.Sub(load16(mu[ch:])))
			archsimd.LoadFloat64x8Slice(acc[ch:]).Add(v.GetLo().ConvertToFloat64()).StoreSlice(acc[ch:])
			archsimd.LoadFloat64x8Slice(acc[ch+8:]).Add(v.GetHi().ConvertToFloat64()).StoreSlice(acc[ch+8:])
		}
	}
}

// conv1Width bounds the padded rows of conv1SIMD and conv1512 (images of
// up to 64 columns), whose vectors of spread values live on the stack.
const conv1Width = 66

// conv1SIMD and conv1512 are conv1Go for whole vectors of channels: every
// value of three padded rows is spread over a vector once (a ring of rows,
// one new row per output row), the nine kernel vectors of 8 or 16
// channels stay in registers for a row, and four pixels' chains of nine
// products run interleaved, each in conv1Go's order. The loads go through
// array pointers, whose constant bounds need no checks in the loop.
func conv1SIMD(dst, pad []float32, h, w int, k []float32) {
	f, pw := len(k)/9, w+2
	if f%8 != 0 || pw > conv1Width {
		conv1Go(dst, pad, h, w, k)
		return
	}
	var ring [3][conv1Width * 8]float32 // three padded rows, each value spread over a vector
	spread := func(e *[conv1Width * 8]float32, r []float32) {
		for i, v := range r[:pw] {
			archsimd.BroadcastFloat32x8(v).Store((*[8]float32)(e[8*i:]))
		}
	}
	spread(&ring[0], pad[:pw])
	spread(&ring[1], pad[pw:2*pw])
	for y := 0; y < h; y++ {
		spread(&ring[(y+2)%3], pad[(y+2)*pw:(y+3)*pw])
		e0, e1, e2 := ring[y%3][:pw*8], ring[(y+1)%3][:pw*8], ring[(y+2)%3][:pw*8]
		row := dst[y*w*f : (y+1)*w*f]
		for ch := 0; ch < f; ch += 8 {
			w0, w1, w2 := archsimd.LoadFloat32x8Slice(k[ch:]), archsimd.LoadFloat32x8Slice(k[f+ch:]), archsimd.LoadFloat32x8Slice(k[2*f+ch:])
			w3, w4, w5 := archsimd.LoadFloat32x8Slice(k[3*f+ch:]), archsimd.LoadFloat32x8Slice(k[4*f+ch:]), archsimd.LoadFloat32x8Slice(k[5*f+ch:])
			w6, w7, w8 := archsimd.LoadFloat32x8Slice(k[6*f+ch:]), archsimd.LoadFloat32x8Slice(k[7*f+ch:]), archsimd.LoadFloat32x8Slice(k[8*f+ch:])
			x := 0
			for ; x+4 <= w; x += 4 { // four pixels' chains interleaved
				o := 8 * x
				q0, q1, q2 := (*[6 * 8]float32)(e0[o:]), (*[6 * 8]float32)(e1[o:]), (*[6 * 8]float32)(e2[o:])
				v0, v1, v2 := archsimd.LoadFloat32x8((*[8]float32)(q0[0:8])), archsimd.LoadFloat32x8((*[8]float32)(q0[8:16])), archsimd.LoadFloat32x8((*[8]float32)(q0[16:24]))
				v3, v4, v5 := archsimd.LoadFloat32x8((*[8]float32)(q0[24:32])), archsimd.LoadFloat32x8((*[8]float32)(q0[32:40])), archsimd.LoadFloat32x8((*[8]float32)(q0[40:48]))
				a0, a1, a2, a3 := v0.Mul(w0), v1.Mul(w0), v2.Mul(w0), v3.Mul(w0)
				a0, a1, a2, a3 = v1.MulAdd(w1, a0), v2.MulAdd(w1, a1), v3.MulAdd(w1, a2), v4.MulAdd(w1, a3)
				a0, a1, a2, a3 = v2.MulAdd(w2, a0), v3.MulAdd(w2, a1), v4.MulAdd(w2, a2), v5.MulAdd(w2, a3)
				v0, v1, v2 = archsimd.LoadFloat32x8((*[8]float32)(q1[0:8])), archsimd.LoadFloat32x8((*[8]float32)(q1[8:16])), archsimd.LoadFloat32x8((*[8]float32)(q1[16:24]))
				v3, v4, v5 = archsimd.LoadFloat32x8((*[8]float32)(q1[24:32])), archsimd.LoadFloat32x8((*[8]float32)(q1[32:40])), archsimd.LoadFloat32x8((*[8]float32)(q1[40:48]))
				a0, a1, a2, a3 = v0.MulAdd(w3, a0), v1.MulAdd(w3, a1), v2.MulAdd(w3, a2), v3.MulAdd(w3, a3)
				a0, a1, a2, a3 = v1.MulAdd(w4, a0), v2.MulAdd(w4, a1), v3.MulAdd(w4, a2), v4.MulAdd(w4, a3)
				a0, a1, a2, a3 = v2.MulAdd(w5, a0), v3.MulAdd(w5, a1), v4.MulAdd(w5, a2), v5.MulAdd(w5, a3)
				v0, v1, v2 = archsimd.LoadFloat32x8((*[8]float32)(q2[0:8])), archsimd.LoadFloat32x8((*[8]float32)(q2[8:16])), archsimd.LoadFloat32x8((*[8]float32)(q2[16:24]))
				v3, v4, v5 = archsimd.LoadFloat32x8((*[8]float32)(q2[24:32])), archsimd.LoadFloat32x8((*[8]float32)(q2[32:40])), archsimd.LoadFloat32x8((*[8]float32)(q2[40:48]))
				a0, a1, a2, a3 = v0.MulAdd(w6, a0), v1.MulAdd(w6, a1), v2.MulAdd(w6, a2), v3.MulAdd(w6, a3)
				a0, a1, a2, a3 = v1.MulAdd(w7, a0), v2.MulAdd(w7, a1), v3.MulAdd(w7, a2), v4.MulAdd(w7, a3)
				a0, a1, a2, a3 = v2.MulAdd(w8, a0), v3.MulAdd(w8, a1), v4.MulAdd(w8, a2), v5.MulAdd(w8, a3)
				out := row[x*f+ch:]
				a0.Store((*[8]float32)(out))
				a1.Store((*[8]float32)(out[f:]))
				a2.Store((*[8]float32)(out[2*f:]))
				a3.Store((*[8]float32)(out[3*f:]))
			}
			for ; x < w; x++ {
				o := 8 * x
				q0, q1, q2 := (*[3 * 8]float32)(e0[o:]), (*[3 * 8]float32)(e1[o:]), (*[3 * 8]float32)(e2[o:])
				a := archsimd.LoadFloat32x8((*[8]float32)(q0[0:8])).Mul(w0)
				a = archsimd.LoadFloat32x8((*[8]float32)(q0[8:16])).MulAdd(w1, a)
				a = archsimd.LoadFloat32x8((*[8]float32)(q0[16:24])).MulAdd(w2, a)
				a = archsimd.LoadFloat32x8((*[8]float32)(q1[0:8])).MulAdd(w3, a)
				a = archsimd.LoadFloat32x8((*[8]float32)(q1[8:16])).MulAdd(w4, a)
				a = archsimd.LoadFloat32x8((*[8]float32)(q1[16:24])).MulAdd(w5, a)
				a = archsimd.LoadFloat32x8((*[8]float32)(q2[0:8])).MulAdd(w6, a)
				a = archsimd.LoadFloat32x8((*[8]float32)(q2[8:16])).MulAdd(w7, a)
				a = archsimd.LoadFloat32x8((*[8]float32)(q2[16:24])).MulAdd(w8, a)
				a.Store((*[8]float32)(row[x*f+ch:]))
			}
		}
	}
}

func conv1512(dst, pad []float32, h, w int, k []float32) {
	f, pw := len(k)/9, w+2
	if f%16 != 0 || pw > conv1Width {
		conv1SIMD(dst, pad, h, w, k)
		return
	}
	var ring [3][conv1Width * 16]float32 // three padded rows, each value spread over a vector
	spread := func(e *[conv1Width * 16]float32, r []float32) {
		for i, v := range r[:pw] {
			archsimd.BroadcastFloat32x16(v).Store((*[16]float32)(e[16*i:]))
		}
	}
	spread(&ring[0], pad[:pw])
	spread(&ring[1], pad[pw:2*pw])
	for y := 0; y < h; y++ {
		spread(&ring[(y+2)%3], pad[(y+2)*pw:(y+3)*pw])
		e0, e1, e2 := ring[y%3][:pw*16], ring[(y+1)%3][:pw*16], ring[(y+2)%3][:pw*16]
		row := dst[y*w*f : (y+1)*w*f]
		for ch := 0; ch < f; ch += 16 {
			w0, w1, w2 := archsimd.LoadFloat32x16Slice(k[ch:]), archsimd.LoadFloat32x16Slice(k[f+ch:]), archsimd.LoadFloat32x16Slice(k[2*f+ch:])
			w3, w4, w5 := archsimd.LoadFloat32x16Slice(k[3*f+ch:]), archsimd.LoadFloat32x16Slice(k[4*f+ch:]), archsimd.LoadFloat32x16Slice(k[5*f+ch:])
			w6, w7, w8 := archsimd.LoadFloat32x16Slice(k[6*f+ch:]), archsimd.LoadFloat32x16Slice(k[7*f+ch:]), archsimd.LoadFloat32x16Slice(k[8*f+ch:])
			x := 0
			for ; x+4 <= w; x += 4 { // four pixels' chains interleaved
				o := 16 * x
				q0, q1, q2 := (*[6 * 16]float32)(e0[o:]), (*[6 * 16]float32)(e1[o:]), (*[6 * 16]float32)(e2[o:])
				v0, v1, v2 := archsimd.LoadFloat32x16((*[16]float32)(q0[0:16])), archsimd.LoadFloat32x16((*[16]float32)(q0[16:32])), archsimd.LoadFloat32x16((*[16]float32)(q0[32:48]))
				v3, v4, v5 := archsimd.LoadFloat32x16((*[16]float32)(q0[48:64])), archsimd.LoadFloat32x16((*[16]float32)(q0[64:80])), archsimd.LoadFloat32x16((*[16]float32)(q0[80:96]))
				a0, a1, a2, a3 := v0.Mul(w0), v1.Mul(w0), v2.Mul(w0), v3.Mul(w0)
				a0, a1, a2, a3 = v1.MulAdd(w1, a0), v2.MulAdd(w1, a1), v3.MulAdd(w1, a2), v4.MulAdd(w1, a3)
				a0, a1, a2, a3 = v2.MulAdd(w2, a0), v3.MulAdd(w2, a1), v4.MulAdd(w2, a2), v5.MulAdd(w2, a3)
				v0, v1, v2 = archsimd.LoadFloat32x16((*[16]float32)(q1[0:16])), archsimd.LoadFloat32x16((*[16]float32)(q1[16:32])), archsimd.LoadFloat32x16((*[16]float32)(q1[32:48]))
				v3, v4, v5 = archsimd.LoadFloat32x16((*[16]float32)(q1[48:64])), archsimd.LoadFloat32x16((*[16]float32)(q1[64:80])), archsimd.LoadFloat32x16((*[16]float32)(q1[80:96]))
				a0, a1, a2, a3 = v0.MulAdd(w3, a0), v1.MulAdd(w3, a1), v2.MulAdd(w3, a2), v3.MulAdd(w3, a3)
				a0, a1, a2, a3 = v1.MulAdd(w4, a0), v2.MulAdd(w4, a1), v3.MulAdd(w4, a2), v4.MulAdd(w4, a3)
				a0, a1, a2, a3 = v2.MulAdd(w5, a0), v3.MulAdd(w5, a1), v4.MulAdd(w5, a2), v5.MulAdd(w5, a3)
				v0, v1, v2 = archsimd.LoadFloat32x16((*[16]float32)(q2[0:16])), archsimd.LoadFloat32x16((*[16]float32)(q2[16:32])), archsimd.LoadFloat32x16((*[16]float32)(q2[32:48]))
				v3, v4, v5 = archsimd.LoadFloat32x16((*[16]float32)(q2[48:64])), archsimd.LoadFloat32x16((*[16]float32)(q2[64:80])), archsimd.LoadFloat32x16((*[16]float32)(q2[80:96]))
				a0, a1, a2, a3 = v0.MulAdd(w6, a0), v1.MulAdd(w6, a1), v2.MulAdd(w6, a2), v3.MulAdd(w6, a3)
				a0, a1, a2, a3 = v1.MulAdd(w7, a0), v2.MulAdd(w7, a1), v3.MulAdd(w7, a2), v4.MulAdd(w7, a3)
				a0, a1, a2, a3 = v2.MulAdd(w8, a0), v3.MulAdd(w8, a1), v4.MulAdd(w8, a2), v5.MulAdd(w8, a3)
				out := row[x*f+ch:]
				a0.Store((*[16]float32)(out))
				a1.Store((*[16]float32)(out[f:]))
				a2.Store((*[16]float32)(out[2*f:]))
				a3.Store((*[16]float32)(out[3*f:]))
			}
			for ; x < w; x++ {
				o := 16 * x
				q0, q1, q2 := (*[3 * 16]float32)(e0[o:]), (*[3 * 16]float32)(e1[o:]), (*[3 * 16]float32)(e2[o:])
				a := archsimd.LoadFloat32x16((*[16]float32)(q0[0:16])).Mul(w0)
				a = archsimd.LoadFloat32x16((*[16]float32)(q0[16:32])).MulAdd(w1, a)
				a = archsimd.LoadFloat32x16((*[16]float32)(q0[32:48])).MulAdd(w2, a)
				a = archsimd.LoadFloat32x16((*[16]float32)(q1[0:16])).MulAdd(w3, a)
				a = archsimd.LoadFloat32x16((*[16]float32)(q1[16:32])).MulAdd(w4, a)
				a = archsimd.LoadFloat32x16((*[16]float32)(q1[32:48])).MulAdd(w5, a)
				a = archsimd.LoadFloat32x16((*[16]float32)(q2[0:16])).MulAdd(w6, a)
				a = archsimd.LoadFloat32x16((*[16]float32)(q2[16:32])).MulAdd(w7, a)
				a = archsimd.LoadFloat32x16((*[16]float32)(q2[32:48])).MulAdd(w8, a)
				a.Store((*[16]float32)(row[x*f+ch:]))
			}
		}
	}
}

// convPool1SIMD is convPool1Go with the AVX2 kernels.
func convPool1SIMD(dst, z, pad []float32, w int, k, a, c []float32) {
	f := len(a)
	n := len(dst) / f
	conv1SIMD(z, pad, 2, w, k)
	maxAffineRowSIMD(dst, z[:2*n*f], z[w*f:][:2*n*f], a, c)
	reluSIMD(dst, dst)
}

// fusedRow reports whether the assembly of convPool1512 and convBack1512
// takes a row of n windows of f channels, padded rows pw values wide:
// whole vectors of 16 channels, and no wider than conv1512 takes, since
// wider rows get Conv1's plain loop, which rounds z differently. Both
// kernels ask this one question, so the forward and backward passes
// always see the same z; n <= 32 follows (one of blockBackRow512's
// segments).
func fusedRow(f, n, pw int) bool {
	return f%16 == 0 && n > 0 && pw <= conv1Width
}

// convPool1512 computes, 16 channels at a time, a pair of windows' eight
// values of z in registers and pools them there (convPool1Kernel, in
// assembly: Go's compiler keeps 15 vector registers and spills the
// window's reused values): conv1512's products in its order,
// maxAffineRow512's selection and reluSIMD's maximum, so the values are
// those of the three kernels, without writing z and reading it back twice.
// Other rows (fusedRow) take convPool1SIMD.
func convPool1512(dst, z, pad []float32, w int, k, sc, off []float32) {
	f, pw := len(sc), w+2
	n := len(dst) / f
	if !fusedRow(f, n, pw) {
		convPool1SIMD(dst, z, pad, w, k, sc, off)
		return
	}
	_, _, _, _ = dst[n*f-1], pad[4*pw-1], k[9*f-1], off[f-1] // the kernel's reach
	if 2*n > w {
		panic("vec: ConvPool1: more windows than the row has")
	}
	convPool1Kernel(&dst[0], &pad[0], pw, &k[0], &sc[0], &off[0], f, n)
}

// convPool1Kernel (convpool_amd64.s) is convPool1512's loop over f/16
// blocks of channels and n windows.
//
//go:noescape
func convPool1Kernel(dst, pad *float32, pw int, k, sc, off *float32, f, n int)

// convBack1SIMD is convBack1Go with the AVX2 kernels.
func convBack1SIMD(acc []float64, z, pad []float32, w int, k, out, g, s, mu []float32) {
	f := len(s)
	n := len(g) / f
	conv1SIMD(z, pad, 2, w, k)
	blockBackRowSIMD(acc, z[:2*n*f], z[w*f:][:2*n*f], pad, w+2, out, g, s, mu)
}

// convBack1512 computes, 16 channels at a time, each window's four values
// of z in registers and adds its terms of blockBackRow512's sums there
// (convBack1Kernel, in assembly, as convPool1512): conv1512's products in
// its order, and the sums in blockBackRow512's order (a row of at most 32
// windows, one of its segments), so acc gets the bits of the two kernels.
// Other rows (fusedRow) take convBack1SIMD.
func convBack1512(acc []float64, z, pad []float32, w int, k, out, g, s, mu []float32) {
	f, pw := len(s), w+2
	n := len(g) / f
	if !fusedRow(f, n, pw) {
		convBack1SIMD(acc, z, pad, w, k, out, g, s, mu)
		return
	}
	_, _, _, _, _ = acc[11*f-1], pad[4*pw-1], k[9*f-1], out[n*f-1], mu[f-1] // the kernel's reach
	if 2*n > w {
		panic("vec: ConvBack1: more windows than the row has")
	}
	convBack1Kernel(&acc[0], &pad[0], pw, &k[0], &out[0], &g[0], &s[0], &mu[0], f, n)
}

// convBack1Kernel (convback_amd64.s) is convBack1512's loop over f/16
// blocks of channels and n windows.
//
//go:noescape
func convBack1Kernel(acc *float64, pad *float32, pw int, k, out, grad, s, mu *float32, f, n int)

// patchTerms are the terms of PatchMoments that some rows r of pad give:
// sum[b] the sum of P[r][x+b] and prod[dy][3b+d] that of P[r][x+b] *
// P[r+dy][x+d], over the pixels x < w (prod[0] for b <= d only, the rest
// being their mirror), with P[r] pad's row r.
type patchTerms struct {
	sum  [3]float64
	prod [3][9]float64
}

// patchMomentsByRows is PatchMoments from rows' terms (rows sets t to
// those of pad's rows r0..r1-1 at dy < dys): the patch row a of pixel row
// y is pad row y+a, so patch rows a and a+dy give the terms of pad rows
// a..a+h-1 at dy. Rows 0 and h+1 are zeros, so each patch row's are the
// sum of those of row 1, rows 2..h-1 and row h: 24 products per pixel
// instead of 81. The sums round differently from patchMomentsGo's, by the
// last bits of float64. h >= 2.
func patchMomentsByRows(s *[9]float64, m *[81]float64, pad []float64, h, w int,
	rows func(t *patchTerms, pad []float64, w, r0, r1, dys int)) {
	var first, mid, last patchTerms
	rows(&first, pad, w, 1, 2, 3)
	rows(&mid, pad, w, 2, h, 3)
	rows(&last, pad, w, h, h+1, 2) // row h+2 is past pad; a >= 1 reads dy <= 1
	segments := [3][]*patchTerms{{&first, &mid}, {&first, &mid, &last}, {&mid, &last}}
	for a, seg := range segments {
		for b := 0; b < 3; b++ {
			i := 3*a + b
			for _, t := range seg {
				s[i] += t.sum[b]
			}
			for j := i; j < 9; j++ { // m is symmetric: j >= i, then the mirror
				dy, d := j/3-a, j%3 // at most 2-a: row h at dy = 0, 1 only
				v := 0.0
				for _, t := range seg {
					v += t.prod[dy][3*b+d]
				}
				m[9*i+j] += v
				if j != i {
					m[9*j+i] += v
				}
			}
		}
	}
}

// patchMomentsSIMD is patchMoments512 for four pixels at a time (AVX2).
func patchMomentsSIMD(s *[9]float64, m *[81]float64, pad []float64, h, w int) {
	if w < 4 || h < 2 {
		patchMomentsGo(s, m, pad, h, w)
		return
	}
	patchMomentsByRows(s, m, pad, h, w, patchRowsSIMD)
}

// patchRowsSIMD is patchRows512 for four pixels at a time (AVX2).
func patchRowsSIMD(t *patchTerms, pad []float64, w, r0, r1, dys int) {
	pw := w + 2
	z := archsimd.BroadcastFloat64x4(0)
	s0, s1, s2, p00, p01, p02, p11, p12, p22 := z, z, z, z, z, z, z, z, z
	for r := r0; r < r1; r++ {
		row := pad[r*pw:][:pw]
		for x := 0; x < w; x += 4 {
			x0, x1, x2 := shifts4(row, x, w)
			s0, s1, s2 = s0.Add(x0), s1.Add(x1), s2.Add(x2)
			p00, p01, p02 = x0.MulAdd(x0, p00), x0.MulAdd(x1, p01), x0.MulAdd(x2, p02)
			p11, p12, p22 = x1.MulAdd(x1, p11), x1.MulAdd(x2, p12), x2.MulAdd(x2, p22)
		}
	}
	t.sum = [3]float64{hsum4(s0), hsum4(s1), hsum4(s2)}
	t.prod[0] = [9]float64{0: hsum4(p00), 1: hsum4(p01), 2: hsum4(p02), 4: hsum4(p11), 5: hsum4(p12), 8: hsum4(p22)}
	for dy := 1; dy < dys; dy++ {
		q0, q1, q2, q3, q4, q5, q6, q7, q8 := z, z, z, z, z, z, z, z, z
		for r := r0; r < r1; r++ {
			row, below := pad[r*pw:][:pw], pad[(r+dy)*pw:][:pw]
			for x := 0; x < w; x += 4 {
				x0, x1, x2 := shifts4(row, x, w)
				y0, y1, y2 := shifts4(below, x, w)
				q0, q1, q2 = x0.MulAdd(y0, q0), x0.MulAdd(y1, q1), x0.MulAdd(y2, q2)
				q3, q4, q5 = x1.MulAdd(y0, q3), x1.MulAdd(y1, q4), x1.MulAdd(y2, q5)
				q6, q7, q8 = x2.MulAdd(y0, q6), x2.MulAdd(y1, q7), x2.MulAdd(y2, q8)
			}
		}
		t.prod[dy] = [9]float64{hsum4(q0), hsum4(q1), hsum4(q2), hsum4(q3), hsum4(q4), hsum4(q5), hsum4(q6), hsum4(q7), hsum4(q8)}
	}
}

// shifts4 is shifts8 for four values.
func shifts4(row []float64, x, w int) (archsimd.Float64x4, archsimd.Float64x4, archsimd.Float64x4) {
	return archsimd.LoadFloat64x4SlicePart(row[x:w]), archsimd.LoadFloat64x4SlicePart(row[x+1 : w+1]),
		archsimd.LoadFloat64x4SlicePart(row[x+2 : w+2])
}

// hsum4 returns the sum of v's lanes.
func hsum4(v archsimd.Float64x4) float64 {
	var l [4]float64
	v.Store(&l)
	archsimd.ClearAVXUpperBits() // the scalar adds below are SSE (clearUpper)
	return (l[0] + l[1]) + (l[2] + l[3])
}

// patchMoments512 is patchMomentsGo from the terms of the rows
// (patchMomentsByRows), eight pixels at a time. Rows of fewer than eight
// pixels, and images of one row, take the plain loop.
func patchMoments512(s *[9]float64, m *[81]float64, pad []float64, h, w int) {
	if w < 8 || h < 2 {
		patchMomentsGo(s, m, pad, h, w)
		return
	}
	patchMomentsByRows(s, m, pad, h, w, patchRows512)
}

// patchRows512 sets t to the terms of pad's rows r0..r1-1 at dy < dys, a
// pass over the rows per dy with its accumulators in registers (Go
// allocates 15 vector registers): at dy = 0 the three sums and six
// products, at dy = 1 and 2 the nine products and the six shifted rows.
// The last vector of a row loads zeros past the row's w pixels.
func patchRows512(t *patchTerms, pad []float64, w, r0, r1, dys int) {
	pw := w + 2
	z := archsimd.BroadcastFloat64x8(0)
	s0, s1, s2, p00, p01, p02, p11, p12, p22 := z, z, z, z, z, z, z, z, z
	for r := r0; r < r1; r++ {
		row := pad[r*pw:][:pw]
		for x := 0; x < w; x += 8 {
			x0, x1, x2 := shifts8(row, x, w)
			s0, s1, s2 = s0.Add(x0), s1.Add(x1), s2.Add(x2)
			p00, p01, p02 = x0.MulAdd(x0, p00), x0.MulAdd(x1, p01), x0.MulAdd(x2, p02)
			p11, p12, p22 = x1.MulAdd(x1, p11), x1.MulAdd(x2, p12), x2.MulAdd(x2, p22)
		}
	}
	t.sum = [3]float64{hsum(s0), hsum(s1), hsum(s2)}
	t.prod[0] = [9]float64{0: hsum(p00), 1: hsum(p01), 2: hsum(p02), 4: hsum(p11), 5: hsum(p12), 8: hsum(p22)}
	for dy := 1; dy < dys; dy++ {
		q0, q1, q2, q3, q4, q5, q6, q7, q8 := z, z, z, z, z, z, z, z, z
		for r := r0; r < r1; r++ {
			row, below := pad[r*pw:][:pw], pad[(r+dy)*pw:][:pw]
			for x := 0; x < w; x += 8 {
				x0, x1, x2 := shifts8(row, x, w)
				y0, y1, y2 := shifts8(below, x, w)
				q0, q1, q2 = x0.MulAdd(y0, q0), x0.MulAdd(y1, q1), x0.MulAdd(y2, q2)
				q3, q4, q5 = x1.MulAdd(y0, q3), x1.MulAdd(y1, q4), x1.MulAdd(y2, q5)
				q6, q7, q8 = x2.MulAdd(y0, q6), x2.MulAdd(y1, q7), x2.MulAdd(y2, q8)
			}
		}
		t.prod[dy] = [9]float64{hsum(q0), hsum(q1), hsum(q2), hsum(q3), hsum(q4), hsum(q5), hsum(q6), hsum(q7), hsum(q8)}
	}
}

// shifts8 returns row's eight values from x, x+1 and x+2 on, those past
// w, w+1 and w+2 zero.
func shifts8(row []float64, x, w int) (f64x8, f64x8, f64x8) {
	return archsimd.LoadFloat64x8SlicePart(row[x:w]), archsimd.LoadFloat64x8SlicePart(row[x+1 : w+1]),
		archsimd.LoadFloat64x8SlicePart(row[x+2 : w+2])
}

// hsum returns the sum of v's lanes.
func hsum(v f64x8) float64 {
	var l [8]float64
	v.Store(&l)
	archsimd.ClearAVXUpperBits() // the scalar adds below are SSE (clearUpper)
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

// blockBackRowSIMD is blockBackRow512 for 8 channels at a time (AVX2).
func blockBackRowSIMD(acc []float64, z0, z1, pad []float32, pw int, out, g, s, mu []float32) {
	f := len(s)
	if f%8 != 0 {
		blockBackRowGo(acc, z0, z1, pad, pw, out, g, s, mu)
		return
	}
	n := len(g) / f
	z0, z1, out, g, acc = z0[:2*n*f], z1[:2*n*f], out[:n*f], g[:n*f], acc[:11*f]
	zero, one := archsimd.BroadcastFloat32x8(0), archsimd.BroadcastFloat32x8(1)
	two, three := archsimd.BroadcastFloat32x8(2), archsimd.BroadcastFloat32x8(3)
	bc := archsimd.BroadcastFloat32x8
	var gps, pos [32 * 8]float32 // per window of a segment: gp and the positions
	for ch := 0; ch < f; ch += 8 {
		for j0 := 0; j0 < n; j0 += 32 {
			m := min(32, n-j0)
			sv, mv := load(s[ch:]), load(mu[ch:])
			ab, ad := zero, zero
			for j := 0; j < m; j++ {
				i, q := (j0+j)*f+ch, 2*(j0+j)*f+ch
				x00, x01, x10, x11 := load(z0[q:]), load(z0[q+f:]), load(z1[q:]), load(z1[q+f:])
				p := posMax8(x00, x01, x10, x11, sv)
				gp := load(g[i:]).Masked(load(out[i:]).Greater(zero))
				x := x01.Merge(x00, p.Equal(one))
				x = x10.Merge(x, p.Equal(two))
				x = x11.Merge(x, p.Equal(three))
				ab = ab.Add(gp)
				ad = x.Sub(mv).MulAdd(gp, ad)
				gp.Store((*[8]float32)(gps[8*j:]))
				p.Store((*[8]float32)(pos[8*j:]))
			}
			addWide8(acc[9*f+ch:], ad)
			addWide8(acc[10*f+ch:], ab)
			for kh := 0; kh < 3; kh++ {
				top, bot := pad[kh*pw+2*j0:][:2*m+2], pad[(kh+1)*pw+2*j0:][:2*m+2]
				a0, a1, a2 := zero, zero, zero
				for j := 0; j < m; j++ {
					gp, p := archsimd.LoadFloat32x8((*[8]float32)(gps[8*j:])), archsimd.LoadFloat32x8((*[8]float32)(pos[8*j:]))
					dy, dx := p.GreaterEqual(two), p.Equal(one).Or(p.Equal(three))
					t, u := (*[4]float32)(top[2*j:]), (*[4]float32)(bot[2*j:])
					r0, r1, r2, r3 := bc(u[0]).Merge(bc(t[0]), dy), bc(u[1]).Merge(bc(t[1]), dy), bc(u[2]).Merge(bc(t[2]), dy), bc(u[3]).Merge(bc(t[3]), dy)
					a0, a1, a2 = r1.Merge(r0, dx).MulAdd(gp, a0), r2.Merge(r1, dx).MulAdd(gp, a1), r3.Merge(r2, dx).MulAdd(gp, a2)
				}
				addWide8(acc[3*kh*f+ch:], a0)
				addWide8(acc[(3*kh+1)*f+ch:], a1)
				addWide8(acc[(3*kh+2)*f+ch:], a2)
			}
		}
	}
}

// addWide8 adds the 8 values of v to d[:8] in float64.
func addWide8(d []float64, v f32x8) {
	archsimd.LoadFloat64x4Slice(d).Add(v.GetLo().ConvertToFloat64()).StoreSlice(d)
	archsimd.LoadFloat64x4Slice(d[4:]).Add(v.GetHi().ConvertToFloat64()).StoreSlice(d[4:])
}

// blockBackRow512 is blockBackRowGo for 16 channels at a time, their sums
// over up to 32 windows in float32 registers, then added to acc. Go keeps
// 15 vectors in registers, fewer than the eleven sums and a window's
// values (one pass over the windows with all eleven, spilling, ran 15-30%
// slower, measured), so it takes four: the first finds the maxima, adds
// the sums of gp and gp*(z-mu) and keeps gp and the positions in L1, the
// others add gp times the patch values, a row of the patch each. A
// window's patch row kh at each channel's maximum is picked from the two
// pad rows kh and kh+1 by the maximum's row (dy), then from the four
// columns by its column (dx), merges of broadcast values.
func blockBackRow512(acc []float64, z0, z1, pad []float32, pw int, out, g, s, mu []float32) {
	f := len(s)
	if f%16 != 0 {
		blockBackRowSIMD(acc, z0, z1, pad, pw, out, g, s, mu)
		return
	}
	n := len(g) / f
	z0, z1, out, g, acc = z0[:2*n*f], z1[:2*n*f], out[:n*f], g[:n*f], acc[:11*f]
	zero, one := archsimd.BroadcastFloat32x16(0), archsimd.BroadcastFloat32x16(1)
	two, three := archsimd.BroadcastFloat32x16(2), archsimd.BroadcastFloat32x16(3)
	bc := archsimd.BroadcastFloat32x16
	var gps, pos [32 * 16]float32 // per window of a segment: gp and the positions
	for ch := 0; ch < f; ch += 16 {
		for j0 := 0; j0 < n; j0 += 32 {
			m := min(32, n-j0)
			sv, mv := load16(s[ch:]), load16(mu[ch:])
			ab, ad := zero, zero
			for j := 0; j < m; j++ {
				i, q := (j0+j)*f+ch, 2*(j0+j)*f+ch
				x00, x01, x10, x11 := load16(z0[q:]), load16(z0[q+f:]), load16(z1[q:]), load16(z1[q+f:])
				p := posMax16(x00, x01, x10, x11, sv)
				gp := load16(g[i:]).Masked(load16(out[i:]).Greater(zero))
				x := x01.Merge(x00, p.Equal(one))
				x = x10.Merge(x, p.Equal(two))
				x = x11.Merge(x, p.Equal(three))
				ab = ab.Add(gp)
				ad = x.Sub(mv).MulAdd(gp, ad)
				gp.Store((*[16]float32)(gps[16*j:]))
				p.Store((*[16]float32)(pos[16*j:]))
			}
			addWide(acc[9*f+ch:], ad)
			addWide(acc[10*f+ch:], ab)
			for kh := 0; kh < 3; kh++ {
				top, bot := pad[kh*pw+2*j0:][:2*m+2], pad[(kh+1)*pw+2*j0:][:2*m+2]
				a0, a1, a2 := zero, zero, zero
				for j := 0; j < m; j++ {
					gp, p := archsimd.LoadFloat32x16((*[16]float32)(gps[16*j:])), archsimd.LoadFloat32x16((*[16]float32)(pos[16*j:]))
					dy, dx := p.GreaterEqual(two), p.Equal(one).Or(p.Equal(three))
					t, u := (*[4]float32)(top[2*j:]), (*[4]float32)(bot[2*j:])
					r0, r1, r2, r3 := bc(u[0]).Merge(bc(t[0]), dy), bc(u[1]).Merge(bc(t[1]), dy), bc(u[2]).Merge(bc(t[2]), dy), bc(u[3]).Merge(bc(t[3]), dy)
					a0, a1, a2 = r1.Merge(r0, dx).MulAdd(gp, a0), r2.Merge(r1, dx).MulAdd(gp, a1), r3.Merge(r2, dx).MulAdd(gp, a2)
				}
				addWide(acc[3*kh*f+ch:], a0)
				addWide(acc[(3*kh+1)*f+ch:], a1)
				addWide(acc[(3*kh+2)*f+ch:], a2)
			}
		}
	}
}

// addWide adds the 16 values of v to d[:16] in float64.
func addWide(d []float64, v f32x16) {
	archsimd.LoadFloat64x8Slice(d).Add(v.GetLo().ConvertToFloat64()).StoreSlice(d)
	archsimd.LoadFloat64x8Slice(d[8:]).Add(v.GetHi().ConvertToFloat64()).StoreSlice(d[8:])
}
