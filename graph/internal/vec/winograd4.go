package vec

// The transforms of Winograd's F(4x4, 3x3) convolution (Lavin and Gray,
// 2016), interpolation points 0, 1, -1, 2, -2 and ∞: a 3x3 convolution of
// a 6x6 input tile d gives a 4x4 output tile Aᵀ [(G k Gᵀ) ⊙ (Bᵀ d B)] A,
// with
//
//	Bᵀ = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
//	      0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//	G  = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6;
//	      1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//	Aᵀ = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
//
// applied per channel to tiles of pixels of c channels each. The larger
// entries round worse in float32 than F(2x2, 3x3)'s (see graph/winograd.go).

// Winograd4In sets dst (36 rows of c values, row 6r+s at (6r+s)*stride) to
// Bᵀ d B for the 6x6 tile d whose row r holds 6 pixels of c channels from
// d[r*pw].
func Winograd4In[T Float](dst []T, stride int, d []T, pw, c int) {
	if v, ok := f32(dst); ok {
		impl.winograd4In(v, stride, as32(d), pw, c)
		clearUpper()
		return
	}
	winograd4InGo(dst, stride, d, pw, c)
}

// Winograd4Out sets the 4x4 output tile whose row r holds 4 pixels of c
// channels from y[r*yw] to Aᵀ m A, m being 36 rows of c values (row 6r+s
// at (6r+s)*stride).
func Winograd4Out[T Float](y []T, yw int, m []T, stride, c int) {
	if v, ok := f32(y); ok {
		impl.winograd4Out(v, yw, as32(m), stride, c)
		clearUpper()
		return
	}
	winograd4OutGo(y, yw, m, stride, c)
}

// Winograd4Kernel sets dst[6a+b] to (G k Gᵀ)[a][b] for the 3x3 kernel k
// whose entry (kh, kw) is src[3kh+kw], element by element over rows of
// equal length.
func Winograd4Kernel[T Float](dst *[36][]T, src *[9][]T) {
	if _, ok := f32(dst[0]); ok {
		impl.winograd4K(any(dst).(*[36][]float32), any(src).(*[9][]float32))
		clearUpper()
		return
	}
	winograd4KernelGo(dst, src)
}

// Winograd4Grad sets dst (36 rows of c values, row 6r+s at (6r+s)*stride)
// to A g Aᵀ for the 4x4 tile g whose row r holds 4 pixels of c channels
// from g[r*gw]: the adjoint of Winograd4Out.
func Winograd4Grad[T Float](dst []T, stride int, g []T, gw, c int) {
	if v, ok := f32(dst); ok {
		impl.winograd4Grad(v, stride, as32(g), gw, c)
		clearUpper()
		return
	}
	winograd4GradGo(dst, stride, g, gw, c)
}

// Winograd4KernelT sets dst[3i+j] to (Gᵀ S G)[i][j] for the 6x6 matrix S
// whose entry (a, b) is src[6a+b], element by element over rows of equal
// length: the adjoint of Winograd4Kernel.
func Winograd4KernelT[T Float](dst *[9][]T, src *[36][]T) {
	if _, ok := f32(dst[0]); ok {
		impl.winograd4KT(any(dst).(*[9][]float32), any(src).(*[36][]float32))
		clearUpper()
		return
	}
	winograd4KernelTGo(dst, src)
}

// bt6 is Bᵀ times the column (d0, ..., d5).
func bt6[T Float](d0, d1, d2, d3, d4, d5 T) [6]T {
	a, b := d4-4*d2, d3-4*d1
	e, f := d4-d2, 2*(d3-d1)
	return [6]T{4*d0 - 5*d2 + d4, a + b, a - b, e + f, e - f, 4*d1 - 5*d3 + d5}
}

// at6 is Aᵀ times the column (m0, ..., m5).
func at6[T Float](m0, m1, m2, m3, m4, m5 T) [4]T {
	s, d := m1+m2, m1-m2
	p, q := m3+m4, m3-m4
	return [4]T{m0 + s + p, d + 2*q, s + 4*p, d + 8*q + m5}
}

// g3 is G times the column (g0, g1, g2).
func g3[T Float](g0, g1, g2 T) [6]T {
	a, b := g0+g2, g0/4+g2
	return [6]T{g0 / 4, -(a + g1) / 6, -(a - g1) / 6, (b + g1/2) / 6, (b - g1/2) / 6, g2}
}

// a4 is A times the column (g0, ..., g3).
func a4[T Float](g0, g1, g2, g3 T) [6]T {
	p, q := g0+g2, g1+g3
	e, f := g0+4*g2, 2*g1+8*g3
	return [6]T{g0, p + q, p - q, e + f, e - f, g3}
}

// gt6 is Gᵀ times the column (s0, ..., s5).
func gt6[T Float](s0, s1, s2, s3, s4, s5 T) [3]T {
	p, q := s1+s2, s3+s4
	return [3]T{s0/4 - p/6 + q/24, (s2-s1)/6 + (s3-s4)/12, (q-p)/6 + s5}
}

func winograd4InGo[T Float](dst []T, stride int, d []T, pw, c int) {
	d, dst = d[:5*pw+6*c], dst[:35*stride+c]
	for ch := 0; ch < c; ch++ {
		var t [6][6]T // d B, row by row
		for r := range t {
			row := d[r*pw+ch:]
			t[r] = bt6(row[0], row[c], row[2*c], row[3*c], row[4*c], row[5*c])
		}
		for s := 0; s < 6; s++ { // Bᵀ (d B), column by column
			u := bt6(t[0][s], t[1][s], t[2][s], t[3][s], t[4][s], t[5][s])
			for r, v := range u {
				dst[(6*r+s)*stride+ch] = v
			}
		}
	}
}

func winograd4OutGo[T Float](y []T, yw int, m []T, stride, c int) {
	y, m = y[:3*yw+4*c], m[:35*stride+c]
	for ch := 0; ch < c; ch++ {
		var z [6][4]T // m A, row by row
		for r := range z {
			e := m[6*r*stride+ch:]
			z[r] = at6(e[0], e[stride], e[2*stride], e[3*stride], e[4*stride], e[5*stride])
		}
		for j := 0; j < 4; j++ { // Aᵀ (m A), column by column
			o := at6(z[0][j], z[1][j], z[2][j], z[3][j], z[4][j], z[5][j])
			for i, v := range o {
				y[i*yw+j*c+ch] = v
			}
		}
	}
}

func winograd4KernelGo[T Float](dst *[36][]T, src *[9][]T) {
	n := len(dst[0])
	for i := 0; i < n; i++ {
		var t [3][6]T // k Gᵀ
		for kh := range t {
			t[kh] = g3(src[3*kh][i], src[3*kh+1][i], src[3*kh+2][i])
		}
		for b := 0; b < 6; b++ { // G (k Gᵀ)
			for a, v := range g3(t[0][b], t[1][b], t[2][b]) {
				dst[6*a+b][i] = v
			}
		}
	}
}

func winograd4GradGo[T Float](dst []T, stride int, g []T, gw, c int) {
	g, dst = g[:3*gw+4*c], dst[:35*stride+c]
	for ch := 0; ch < c; ch++ {
		var t [4][6]T // (A g)ᵀ, column by column of g
		for j := range t {
			t[j] = a4(g[j*c+ch], g[gw+j*c+ch], g[2*gw+j*c+ch], g[3*gw+j*c+ch])
		}
		for r := 0; r < 6; r++ { // (A g) Aᵀ, row by row
			for s, v := range a4(t[0][r], t[1][r], t[2][r], t[3][r]) {
				dst[(6*r+s)*stride+ch] = v
			}
		}
	}
}

func winograd4KernelTGo[T Float](dst *[9][]T, src *[36][]T) {
	n := len(dst[0])
	for i := 0; i < n; i++ {
		var t [6][3]T // S G
		for a := range t {
			t[a] = gt6(src[6*a][i], src[6*a+1][i], src[6*a+2][i], src[6*a+3][i], src[6*a+4][i], src[6*a+5][i])
		}
		for j := 0; j < 3; j++ { // Gᵀ (S G)
			for r, v := range gt6(t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j]) {
				dst[3*r+j][i] = v
			}
		}
	}
}
