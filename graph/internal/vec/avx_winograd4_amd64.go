//go:build goexperiment.simd

package vec

// The AVX set's F(4x4, 3x3) input, output and gradient transforms
// (winograd4.go), on 4 channels at a time (4 lanes: avx_amd64.go), with
// the plain loops' operations in their order, unfused: the plain loops'
// values bit for bit. The kernel transforms, run once per op and task,
// stay plain.

func winograd4InAVX(dst []float32, stride int, d []float32, pw, c int) {
	if c%4 != 0 {
		winograd4InGo(dst, stride, d, pw, c)
		return
	}
	d, dst = d[:5*pw+6*c], dst[:35*stride+c]
	two, four, five := splat4(2), splat4(4), splat4(5)
	bt := func(d0, d1, d2, d3, d4, d5 f32x4) (f32x4, f32x4, f32x4, f32x4, f32x4, f32x4) { // bt6
		a, b := d4.Sub(four.Mul(d2)), d3.Sub(four.Mul(d1))
		e, f := d4.Sub(d2), two.Mul(d3.Sub(d1))
		return four.Mul(d0).Sub(five.Mul(d2)).Add(d4), a.Add(b), a.Sub(b), e.Add(f), e.Sub(f), four.Mul(d1).Sub(five.Mul(d3)).Add(d5)
	}
	for ch := 0; ch < c; ch += 4 {
		row := func(r int) (f32x4, f32x4, f32x4, f32x4, f32x4, f32x4) { // row r of d B
			p := d[r*pw+ch:]
			return bt(load4(p), load4(p[c:]), load4(p[2*c:]), load4(p[3*c:]), load4(p[4*c:]), load4(p[5*c:]))
		}
		col := func(s int, t0, t1, t2, t3, t4, t5 f32x4) { // column s of Bᵀ (d B)
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

func winograd4OutAVX(y []float32, yw int, m []float32, stride, c int) {
	if c%4 != 0 {
		winograd4OutGo(y, yw, m, stride, c)
		return
	}
	y, m = y[:3*yw+4*c], m[:35*stride+c]
	two, four, eight := splat4(2), splat4(4), splat4(8)
	at := func(m0, m1, m2, m3, m4, m5 f32x4) (f32x4, f32x4, f32x4, f32x4) { // at6
		s, d := m1.Add(m2), m1.Sub(m2)
		p, q := m3.Add(m4), m3.Sub(m4)
		return m0.Add(s).Add(p), d.Add(two.Mul(q)), s.Add(four.Mul(p)), d.Add(eight.Mul(q)).Add(m5)
	}
	for ch := 0; ch < c; ch += 4 {
		row := func(r int) (f32x4, f32x4, f32x4, f32x4) { // row r of m A
			e := m[6*r*stride+ch:]
			return at(load4(e), load4(e[stride:]), load4(e[2*stride:]), load4(e[3*stride:]), load4(e[4*stride:]), load4(e[5*stride:]))
		}
		col := func(j int, t0, t1, t2, t3, t4, t5 f32x4) { // column j of Aᵀ (m A)
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

func winograd4GradAVX(dst []float32, stride int, g []float32, gw, c int) {
	if c%4 != 0 {
		winograd4GradGo(dst, stride, g, gw, c)
		return
	}
	g, dst = g[:3*gw+4*c], dst[:35*stride+c]
	two, four, eight := splat4(2), splat4(4), splat4(8)
	a4 := func(g0, g1, g2, g3 f32x4) (f32x4, f32x4, f32x4, f32x4, f32x4, f32x4) {
		p, q := g0.Add(g2), g1.Add(g3)
		e, f := g0.Add(four.Mul(g2)), two.Mul(g1).Add(eight.Mul(g3))
		return g0, p.Add(q), p.Sub(q), e.Add(f), e.Sub(f), g3
	}
	for ch := 0; ch < c; ch += 4 {
		col := func(j int) (f32x4, f32x4, f32x4, f32x4, f32x4, f32x4) { // column j of A g
			p := g[j*c+ch:]
			return a4(load4(p), load4(p[gw:]), load4(p[2*gw:]), load4(p[3*gw:]))
		}
		row := func(r int, t0, t1, t2, t3 f32x4) { // row r of (A g) Aᵀ
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
