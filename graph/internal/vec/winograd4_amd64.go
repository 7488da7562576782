//go:build goexperiment.simd

package vec

import "simd/archsimd"

// The F(4x4, 3x3) transforms (winograd4.go) on 8 and 16 channels at a
// time, with fused multiply-adds (so they agree with the plain loops up to
// rounding); rows of channels that are not whole vectors take the plain
// loops. The input and output transforms' intermediate tile is named
// vectors, not an array: arrays of vectors live on the stack, zeroed and
// copied (those transforms ran 2 to 3 times slower so, measured on AMD Zen
// 4). The kernel transforms, run once per op and task, keep arrays.

func winograd4InSIMD(dst []float32, stride int, d []float32, pw, c int) {
	if c%8 != 0 {
		winograd4InGo(dst, stride, d, pw, c)
		return
	}
	d, dst = d[:5*pw+6*c], dst[:35*stride+c]
	b := archsimd.BroadcastFloat32x8
	four, m4, m5, two := b(4), b(-4), b(-5), b(2)
	bt := func(d0, d1, d2, d3, d4, d5 f32x8) (f32x8, f32x8, f32x8, f32x8, f32x8, f32x8) {
		a, e := d2.MulAdd(m4, d4), d1.MulAdd(m4, d3)
		g, h := d4.Sub(d2), d3.Sub(d1).Mul(two)
		return d0.MulAdd(four, d2.MulAdd(m5, d4)), a.Add(e), a.Sub(e), g.Add(h), g.Sub(h), d1.MulAdd(four, d3.MulAdd(m5, d5))
	}
	for ch := 0; ch < c; ch += 8 {
		row := func(r int) (f32x8, f32x8, f32x8, f32x8, f32x8, f32x8) { // row r of d B
			p := d[r*pw+ch:]
			return bt(load(p), load(p[c:]), load(p[2*c:]), load(p[3*c:]), load(p[4*c:]), load(p[5*c:]))
		}
		col := func(s int, t0, t1, t2, t3, t4, t5 f32x8) { // column s of Bᵀ (d B)
			u0, u1, u2, u3, u4, u5 := bt(t0, t1, t2, t3, t4, t5)
			u0.StoreSlice(dst[s*stride+ch:])
			u1.StoreSlice(dst[(6+s)*stride+ch:])
			u2.StoreSlice(dst[(12+s)*stride+ch:])
			u3.StoreSlice(dst[(18+s)*stride+ch:])
			u4.StoreSlice(dst[(24+s)*stride+ch:])
			u5.StoreSlice(dst[(30+s)*stride+ch:])
		}
		a0, a1, a2, a3, a4, a5 := row(0)
		b0, b1, b2, b3, b4, b5 := row(1)
		c0, c1, c2, c3, c4, c5 := row(2)
		d0, d1, d2, d3, d4, d5 := row(3)
		e0, e1, e2, e3, e4, e5 := row(4)
		f0, f1, f2, f3, f4, f5 := row(5)
		col(0, a0, b0, c0, d0, e0, f0)
		col(1, a1, b1, c1, d1, e1, f1)
		col(2, a2, b2, c2, d2, e2, f2)
		col(3, a3, b3, c3, d3, e3, f3)
		col(4, a4, b4, c4, d4, e4, f4)
		col(5, a5, b5, c5, d5, e5, f5)
	}
}

// winograd4In512 is winograd4InSIMD on 16 channels at a time, in
// assembly (winograd4InKernel: the same operations, with the tile in
// registers).
func winograd4In512(dst []float32, stride int, d []float32, pw, c int) {
	if c%16 != 0 || c == 0 {
		winograd4InSIMD(dst, stride, d, pw, c)
		return
	}
	_, _ = d[5*pw+6*c-1], dst[35*stride+c-1] // the kernel's reach
	winograd4InKernel(&dst[0], stride, &d[0], pw, c)
}

//go:noescape
func winograd4InKernel(dst *float32, stride int, d *float32, pw, c int)

func winograd4OutSIMD(y []float32, yw int, m []float32, stride, c int) {
	if c%8 != 0 {
		winograd4OutGo(y, yw, m, stride, c)
		return
	}
	y, m = y[:3*yw+4*c], m[:35*stride+c]
	b := archsimd.BroadcastFloat32x8
	two, four, eight := b(2), b(4), b(8)
	at := func(m0, m1, m2, m3, m4, m5 f32x8) (f32x8, f32x8, f32x8, f32x8) {
		s, d := m1.Add(m2), m1.Sub(m2)
		p, q := m3.Add(m4), m3.Sub(m4)
		return m0.Add(s).Add(p), q.MulAdd(two, d), p.MulAdd(four, s), q.MulAdd(eight, d).Add(m5)
	}
	for ch := 0; ch < c; ch += 8 {
		row := func(r int) (f32x8, f32x8, f32x8, f32x8) { // row r of m A
			e := m[6*r*stride+ch:]
			return at(load(e), load(e[stride:]), load(e[2*stride:]), load(e[3*stride:]), load(e[4*stride:]), load(e[5*stride:]))
		}
		col := func(j int, t0, t1, t2, t3, t4, t5 f32x8) { // column j of Aᵀ (m A)
			o0, o1, o2, o3 := at(t0, t1, t2, t3, t4, t5)
			o0.StoreSlice(y[j*c+ch:])
			o1.StoreSlice(y[yw+j*c+ch:])
			o2.StoreSlice(y[2*yw+j*c+ch:])
			o3.StoreSlice(y[3*yw+j*c+ch:])
		}
		a0, a1, a2, a3 := row(0)
		b0, b1, b2, b3 := row(1)
		c0, c1, c2, c3 := row(2)
		d0, d1, d2, d3 := row(3)
		e0, e1, e2, e3 := row(4)
		f0, f1, f2, f3 := row(5)
		col(0, a0, b0, c0, d0, e0, f0)
		col(1, a1, b1, c1, d1, e1, f1)
		col(2, a2, b2, c2, d2, e2, f2)
		col(3, a3, b3, c3, d3, e3, f3)
	}
}

// winograd4Out512 is winograd4OutSIMD on 16 channels at a time, in
// assembly (winograd4OutKernel).
func winograd4Out512(y []float32, yw int, m []float32, stride, c int) {
	if c%16 != 0 || c == 0 {
		winograd4OutSIMD(y, yw, m, stride, c)
		return
	}
	_, _ = y[3*yw+4*c-1], m[35*stride+c-1] // the kernel's reach
	winograd4OutKernel(&y[0], yw, &m[0], stride, c)
}

//go:noescape
func winograd4OutKernel(y *float32, yw int, m *float32, stride, c int)

func winograd4KernelSIMD(dst *[36][]float32, src *[9][]float32) {
	n := len(dst[0]) &^ 7
	b := archsimd.BroadcastFloat32x8
	quarter, half, sixth, m6 := b(0.25), b(0.5), b(1.0/6), b(-1.0/6)
	// Multiple results, not an array of vectors, which the compiler keeps
	// in memory (3.5 times slower, measured on 16 lanes).
	g3 := func(g0, g1, g2 f32x8) (f32x8, f32x8, f32x8, f32x8, f32x8, f32x8) {
		a, q := g0.Add(g2), g0.MulAdd(quarter, g2)
		h := g1.Mul(half)
		return g0.Mul(quarter), a.Add(g1).Mul(m6), a.Sub(g1).Mul(m6), q.Add(h).Mul(sixth), q.Sub(h).Mul(sixth), g2
	}
	for i := 0; i < n; i += 8 {
		col := func(c int, x, y, z f32x8) { // column c of G (k Gᵀ)
			u0, u1, u2, u3, u4, u5 := g3(x, y, z)
			u0.StoreSlice(dst[c][i:])
			u1.StoreSlice(dst[6+c][i:])
			u2.StoreSlice(dst[12+c][i:])
			u3.StoreSlice(dst[18+c][i:])
			u4.StoreSlice(dst[24+c][i:])
			u5.StoreSlice(dst[30+c][i:])
		}
		a0, a1, a2, a3, a4, a5 := g3(load(src[0][i:]), load(src[1][i:]), load(src[2][i:])) // rows of k Gᵀ
		b0, b1, b2, b3, b4, b5 := g3(load(src[3][i:]), load(src[4][i:]), load(src[5][i:]))
		c0, c1, c2, c3, c4, c5 := g3(load(src[6][i:]), load(src[7][i:]), load(src[8][i:]))
		col(0, a0, b0, c0)
		col(1, a1, b1, c1)
		col(2, a2, b2, c2)
		col(3, a3, b3, c3)
		col(4, a4, b4, c4)
		col(5, a5, b5, c5)
	}
	if n < len(dst[0]) {
		var d [36][]float32
		var s [9][]float32
		for e := range d {
			d[e] = dst[e][n:]
		}
		for e := range s {
			s[e] = src[e][n:]
		}
		winograd4KernelGo(&d, &s)
	}
}

func winograd4GradSIMD(dst []float32, stride int, g []float32, gw, c int) {
	if c%8 != 0 {
		winograd4GradGo(dst, stride, g, gw, c)
		return
	}
	g, dst = g[:3*gw+4*c], dst[:35*stride+c]
	b := archsimd.BroadcastFloat32x8
	two, four := b(2), b(4)
	a4 := func(g0, g1, g2, g3 f32x8) (f32x8, f32x8, f32x8, f32x8, f32x8, f32x8) {
		p, q := g0.Add(g2), g1.Add(g3)
		e, f := g2.MulAdd(four, g0), g3.MulAdd(four, g1).Mul(two)
		return g0, p.Add(q), p.Sub(q), e.Add(f), e.Sub(f), g3
	}
	for ch := 0; ch < c; ch += 8 {
		col := func(j int) (f32x8, f32x8, f32x8, f32x8, f32x8, f32x8) { // column j of A g
			p := g[j*c+ch:]
			return a4(load(p), load(p[gw:]), load(p[2*gw:]), load(p[3*gw:]))
		}
		row := func(r int, t0, t1, t2, t3 f32x8) { // row r of (A g) Aᵀ
			u0, u1, u2, u3, u4, u5 := a4(t0, t1, t2, t3)
			d := dst[6*r*stride+ch:]
			u0.StoreSlice(d)
			u1.StoreSlice(d[stride:])
			u2.StoreSlice(d[2*stride:])
			u3.StoreSlice(d[3*stride:])
			u4.StoreSlice(d[4*stride:])
			u5.StoreSlice(d[5*stride:])
		}
		a0, a1, a2, a3, a4r, a5 := col(0)
		b0, b1, b2, b3, b4, b5 := col(1)
		c0, c1, c2, c3, c4, c5 := col(2)
		d0, d1, d2, d3, d4, d5 := col(3)
		row(0, a0, b0, c0, d0)
		row(1, a1, b1, c1, d1)
		row(2, a2, b2, c2, d2)
		row(3, a3, b3, c3, d3)
		row(4, a4r, b4, c4, d4)
		row(5, a5, b5, c5, d5)
	}
}

// winograd4Grad512 is winograd4GradSIMD on 16 channels at a time, in
// assembly (winograd4GradKernel).
func winograd4Grad512(dst []float32, stride int, g []float32, gw, c int) {
	if c%16 != 0 || c == 0 {
		winograd4GradSIMD(dst, stride, g, gw, c)
		return
	}
	_, _ = g[3*gw+4*c-1], dst[35*stride+c-1] // the kernel's reach
	winograd4GradKernel(&dst[0], stride, &g[0], gw, c)
}

//go:noescape
func winograd4GradKernel(dst *float32, stride int, grad *float32, gw, c int)

func winograd4KernelTSIMD(dst *[9][]float32, src *[36][]float32) {
	n := len(dst[0]) &^ 7
	b := archsimd.BroadcastFloat32x8
	quarter, half, sixth := b(0.25), b(0.5), b(1.0/6)
	// Gᵀ s = (s0/4 + (q/4 - p)/6, ((s3-s4)/2 + s2-s1)/6, (q-p)/6 + s5)
	// with p = s1+s2 and q = s3+s4; multiple results, as in
	// winograd4KernelSIMD.
	gt6 := func(s0, s1, s2, s3, s4, s5 f32x8) (f32x8, f32x8, f32x8) {
		p, q := s1.Add(s2), s3.Add(s4)
		return q.Mul(quarter).Sub(p).MulAdd(sixth, s0.Mul(quarter)),
			s3.Sub(s4).MulAdd(half, s2.Sub(s1)).Mul(sixth), q.Sub(p).MulAdd(sixth, s5)
	}
	for i := 0; i < n; i += 8 {
		row := func(a int) (f32x8, f32x8, f32x8) { // row a of S G
			s := src[6*a:]
			return gt6(load(s[0][i:]), load(s[1][i:]), load(s[2][i:]), load(s[3][i:]), load(s[4][i:]), load(s[5][i:]))
		}
		col := func(j int, t0, t1, t2, t3, t4, t5 f32x8) { // column j of Gᵀ (S G)
			u0, u1, u2 := gt6(t0, t1, t2, t3, t4, t5)
			u0.StoreSlice(dst[j][i:])
			u1.StoreSlice(dst[3+j][i:])
			u2.StoreSlice(dst[6+j][i:])
		}
		a0, a1, a2 := row(0)
		b0, b1, b2 := row(1)
		c0, c1, c2 := row(2)
		d0, d1, d2 := row(3)
		e0, e1, e2 := row(4)
		f0, f1, f2 := row(5)
		col(0, a0, b0, c0, d0, e0, f0)
		col(1, a1, b1, c1, d1, e1, f1)
		col(2, a2, b2, c2, d2, e2, f2)
	}
	if n < len(dst[0]) {
		var d [9][]float32
		var s [36][]float32
		for e := range d {
			d[e] = dst[e][n:]
		}
		for e := range s {
			s[e] = src[e][n:]
		}
		winograd4KernelTGo(&d, &s)
	}
}

// winograd4Kernel512 is winograd4KernelSIMD on 16 lanes: the same
// operations lane by lane, so the same values.
func winograd4Kernel512(dst *[36][]float32, src *[9][]float32) {
	n := len(dst[0])
	if n%16 != 0 {
		winograd4KernelSIMD(dst, src)
		return
	}
	b := archsimd.BroadcastFloat32x16
	quarter, half, sixth, m6 := b(0.25), b(0.5), b(1.0/6), b(-1.0/6)
	g3 := func(g0, g1, g2 f32x16) (f32x16, f32x16, f32x16, f32x16, f32x16, f32x16) {
		a, q := g0.Add(g2), g0.MulAdd(quarter, g2)
		h := g1.Mul(half)
		return g0.Mul(quarter), a.Add(g1).Mul(m6), a.Sub(g1).Mul(m6), q.Add(h).Mul(sixth), q.Sub(h).Mul(sixth), g2
	}
	for i := 0; i < n; i += 16 {
		col := func(c int, x, y, z f32x16) { // column c of G (k Gᵀ)
			u0, u1, u2, u3, u4, u5 := g3(x, y, z)
			u0.StoreSlice(dst[c][i:])
			u1.StoreSlice(dst[6+c][i:])
			u2.StoreSlice(dst[12+c][i:])
			u3.StoreSlice(dst[18+c][i:])
			u4.StoreSlice(dst[24+c][i:])
			u5.StoreSlice(dst[30+c][i:])
		}
		a0, a1, a2, a3, a4, a5 := g3(load16(src[0][i:]), load16(src[1][i:]), load16(src[2][i:])) // rows of k Gᵀ
		b0, b1, b2, b3, b4, b5 := g3(load16(src[3][i:]), load16(src[4][i:]), load16(src[5][i:]))
		c0, c1, c2, c3, c4, c5 := g3(load16(src[6][i:]), load16(src[7][i:]), load16(src[8][i:]))
		col(0, a0, b0, c0)
		col(1, a1, b1, c1)
		col(2, a2, b2, c2)
		col(3, a3, b3, c3)
		col(4, a4, b4, c4)
		col(5, a5, b5, c5)
	}
}

// winograd4KernelT512 is winograd4KernelTSIMD on 16 lanes: the same
// values.
func winograd4KernelT512(dst *[9][]float32, src *[36][]float32) {
	n := len(dst[0])
	if n%16 != 0 {
		winograd4KernelTSIMD(dst, src)
		return
	}
	b := archsimd.BroadcastFloat32x16
	quarter, half, sixth := b(0.25), b(0.5), b(1.0/6)
	gt6 := func(s0, s1, s2, s3, s4, s5 f32x16) (f32x16, f32x16, f32x16) {
		p, q := s1.Add(s2), s3.Add(s4)
		return q.Mul(quarter).Sub(p).MulAdd(sixth, s0.Mul(quarter)),
			s3.Sub(s4).MulAdd(half, s2.Sub(s1)).Mul(sixth), q.Sub(p).MulAdd(sixth, s5)
	}
	for i := 0; i < n; i += 16 {
		row := func(a int) (f32x16, f32x16, f32x16) { // row a of S G
			s := src[6*a:]
			return gt6(load16(s[0][i:]), load16(s[1][i:]), load16(s[2][i:]), load16(s[3][i:]), load16(s[4][i:]), load16(s[5][i:]))
		}
		col := func(j int, t0, t1, t2, t3, t4, t5 f32x16) { // column j of Gᵀ (S G)
			u0, u1, u2 := gt6(t0, t1, t2, t3, t4, t5)
			u0.StoreSlice(dst[j][i:])
			u1.StoreSlice(dst[3+j][i:])
			u2.StoreSlice(dst[6+j][i:])
		}
		a0, a1, a2 := row(0)
		b0, b1, b2 := row(1)
		c0, c1, c2 := row(2)
		d0, d1, d2 := row(3)
		e0, e1, e2 := row(4)
		f0, f1, f2 := row(5)
		col(0, a0, b0, c0, d0, e0, f0)
		col(1, a1, b1, c1, d1, e1, f1)
		col(2, a2, b2, c2, d2, e2, f2)
	}
}
