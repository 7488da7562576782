package vec

import "math"

// The plain Go loops, for both float types: the reference of the tests, the
// implementation for float64, on other architectures than amd64, and on
// amd64 of the kernels and tails that no vector set covers. Each has the contract of the exported
// function of the same name without the "Go" suffix.

func affineGo[T Float](dst, x, a, c []T) {
	f := len(a)
	for p := 0; p+f <= len(dst); p += f {
		d := dst[p : p+f]
		xs, a, c := x[p : p+f][:len(d)], a[:len(d)], c[:len(d)]
		for i := range d {
			d[i] = xs[i]*a[i] + c[i]
		}
	}
}

func affine2Go[T Float](dst, x, y, a, b, c []T) {
	f := len(a)
	for p := 0; p+f <= len(dst); p += f {
		d := dst[p : p+f]
		xs, ys, a, b, c := x[p : p+f][:len(d)], y[p : p+f][:len(d)], a[:len(d)], b[:len(d)], c[:len(d)]
		for i := range d {
			d[i] = xs[i]*a[i] + ys[i]*b[i] + c[i]
		}
	}
}

func addToGo[T Float](dst, src []T) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += v
	}
}

func sumRowsGo[T Float](dst, x []T) {
	f := len(dst)
	for p := 0; p+f <= len(x); p += f {
		for i, v := range x[p : p+f][:f] {
			dst[i] += v
		}
	}
}

func momentsGo[T Float](sum, sq []float64, x, shift []T) {
	f := len(shift)
	sum, sq = sum[:f], sq[:f]
	for p := 0; p+f <= len(x); p += f {
		for i, v := range x[p : p+f][:f] {
			d := float64(v - shift[i])
			sum[i] += d
			sq[i] += d * d
		}
	}
}

func dotCenteredGo[T Float](acc []float64, g, z, mu []T) {
	f := len(mu)
	acc = acc[:f]
	for p := 0; p+f <= len(z); p += f {
		zs, gs := z[p : p+f][:f], g[p : p+f][:f]
		for i, v := range zs {
			acc[i] += float64(gs[i] * (v - mu[i]))
		}
	}
}

func poolArgScaledGo[T Float](dst, x00, x01, x10, x11, s []T) {
	x00, x01, x10, x11, s = x00[:len(dst)], x01[:len(dst)], x10[:len(dst)], x11[:len(dst)], s[:len(dst)]
	for i, sv := range s {
		dst[i] = T(firstMax(x00[i], x01[i], x10[i], x11[i], sv))
	}
}

// firstMax is the position (0-3) in a 2x2 window of the first entry whose
// product with s is the window's maximum, the last one if none compares
// equal (NaN).
func firstMax[T Float](x00, x01, x10, x11, s T) int {
	v00, v01, v10, v11 := x00*s, x01*s, x10*s, x11*s
	m := max(max(v00, v01), max(v10, v11))
	return b2i(v00 != m) * (1 + b2i(v01 != m)*(1+b2i(v10 != m)))
}

// atPos is the entry of a 2x2 window at a position poolArgScaledGo gave.
func atPos[T Float](pos, x00, x01, x10, x11 T) T {
	switch pos {
	case 0:
		return x00
	case 1:
		return x01
	case 2:
		return x10
	default:
		return x11
	}
}

// b2i is 1 for true and 0 for false, without a branch: which entry of a
// window wins is data-dependent, and mispredicted branches cost three times
// the loop (measured).
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

func gatherGo[T Float](dst, pos, r0, r1, r2, r3 []T) {
	pos = pos[:len(dst)]
	rows := [4][]T{r0[:len(dst)], r1[:len(dst)], r2[:len(dst)], r3[:len(dst)]}
	for i, a := range pos {
		dst[i] = rows[int(a)&3][i]
	}
}

func scatterGo[T Float](o0, o1, o2, o3, pos, g []T) {
	g = g[:len(pos)]
	o0, o1, o2, o3 = o0[:len(pos)], o1[:len(pos)], o2[:len(pos)], o3[:len(pos)]
	rows := [4][]T{o0, o1, o2, o3}
	for i, a := range pos {
		o0[i], o1[i], o2[i], o3[i] = 0, 0, 0, 0
		rows[int(a)&3][i] = g[i]
	}
}

func addAtScaledGo[T Float](o0, o1, o2, o3, pos, g, u []T) {
	g, u = g[:len(pos)], u[:len(pos)]
	o0, o1, o2, o3 = o0[:len(pos)], o1[:len(pos)], o2[:len(pos)], o3[:len(pos)]
	rows := [4][]T{o0, o1, o2, o3}
	for i, a := range pos {
		rows[int(a)&3][i] += g[i] * u[i]
	}
}

func reluGo[T Float](dst, x []T) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = max(v, 0)
	}
}

func maskGo[T Float](dst, x, v []T) {
	x, v = x[:len(dst)], v[:len(dst)]
	if x64, ok := any(x).([]float64); ok {
		// Branch-free v[i] if x[i] > 0 else 0 (the signs of pre-activations
		// are unpredictable): bits > 0 as a signed integer means x > 0.
		v64, d64 := any(v).([]float64), any(dst).([]float64)
		for i, xv := range x64 {
			b := int64(math.Float64bits(xv))
			keep := uint64(-b>>63) &^ uint64(b>>63)
			d64[i] = math.Float64frombits(math.Float64bits(v64[i]) & keep)
		}
		return
	}
	for i, xv := range x {
		if xv > 0 {
			dst[i] = v[i]
		} else {
			dst[i] = 0
		}
	}
}

func winogradInGo[T Float](dst []T, stride int, r0, r1, r2, r3 []T, c int) {
	rows := [4][]T{r0[:4*c], r1[:4*c], r2[:4*c], r3[:4*c]}
	dst = dst[:15*stride+c]
	for ch := 0; ch < c; ch++ {
		var u [4][4]T // d B, row by row
		for r, row := range rows {
			d0, d1, d2, d3 := row[ch], row[c+ch], row[2*c+ch], row[3*c+ch]
			u[r] = [4]T{d0 - d2, d1 + d2, d2 - d1, d1 - d3}
		}
		for s := 0; s < 4; s++ { // Bᵀ (d B), column by column
			dst[s*stride+ch] = u[0][s] - u[2][s]
			dst[(4+s)*stride+ch] = u[1][s] + u[2][s]
			dst[(8+s)*stride+ch] = u[2][s] - u[1][s]
			dst[(12+s)*stride+ch] = u[1][s] - u[3][s]
		}
	}
}

func winogradOutGo[T Float](y0, y1, m []T, stride, c int) {
	y0, y1, m = y0[:2*c], y1[:2*c], m[:15*stride+c]
	for ch := 0; ch < c; ch++ {
		var z [4][2]T // m A, row by row
		for r := 0; r < 4; r++ {
			m0, m1, m2, m3 := m[4*r*stride+ch], m[(4*r+1)*stride+ch], m[(4*r+2)*stride+ch], m[(4*r+3)*stride+ch]
			z[r] = [2]T{m0 + m1 + m2, m1 - m2 - m3}
		}
		y0[ch] = z[0][0] + z[1][0] + z[2][0]
		y0[c+ch] = z[0][1] + z[1][1] + z[2][1]
		y1[ch] = z[1][0] - z[2][0] - z[3][0]
		y1[c+ch] = z[1][1] - z[2][1] - z[3][1]
	}
}

func winogradKernelGo[T Float](dst *[16][]T, src *[9][]T) {
	n := len(dst[0])
	for i := 0; i < n; i++ {
		var t [3][4]T // k Gᵀ
		for kh := 0; kh < 3; kh++ {
			g0, g1, g2 := src[3*kh][i], src[3*kh+1][i], src[3*kh+2][i]
			t[kh] = [4]T{g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2}
		}
		for b := 0; b < 4; b++ { // G (k Gᵀ)
			g0, g1, g2 := t[0][b], t[1][b], t[2][b]
			dst[b][i] = g0
			dst[4+b][i] = (g0 + g1 + g2) / 2
			dst[8+b][i] = (g0 - g1 + g2) / 2
			dst[12+b][i] = g2
		}
	}
}

func winogradGradGo[T Float](dst []T, stride int, g0, g1 []T, c int) {
	g0, g1, dst = g0[:2*c], g1[:2*c], dst[:15*stride+c]
	for ch := 0; ch < c; ch++ {
		a, b, e, f := g0[ch], g0[c+ch], g1[ch], g1[c+ch]                  // the tile [a b; e f]
		rows := [4][2]T{{a, b}, {a + e, b + f}, {a - e, b - f}, {-e, -f}} // A g
		for r, h := range rows {                                          // (A g) Aᵀ
			dst[4*r*stride+ch] = h[0]
			dst[(4*r+1)*stride+ch] = h[0] + h[1]
			dst[(4*r+2)*stride+ch] = h[0] - h[1]
			dst[(4*r+3)*stride+ch] = -h[1]
		}
	}
}

func winogradKernelTGo[T Float](dst *[9][]T, src *[16][]T) {
	n := len(dst[0])
	for i := 0; i < n; i++ {
		var t [4][3]T // S G
		for a := 0; a < 4; a++ {
			s0, s1, s2, s3 := src[4*a][i], src[4*a+1][i], src[4*a+2][i], src[4*a+3][i]
			t[a] = [3]T{s0 + (s1+s2)/2, (s1 - s2) / 2, (s1+s2)/2 + s3}
		}
		for j := 0; j < 3; j++ { // Gᵀ (S G)
			t0, t1, t2, t3 := t[0][j], t[1][j], t[2][j], t[3][j]
			dst[j][i] = t0 + (t1+t2)/2
			dst[3+j][i] = (t1 - t2) / 2
			dst[6+j][i] = (t1+t2)/2 + t3
		}
	}
}

func backPoolRowGo[T Float](o0, o1, z0, z1, pos, g, u, v, w []T) {
	c := len(u)
	n := len(pos) / c
	o0, o1, z0, z1, g = o0[:2*n*c], o1[:2*n*c], z0[:2*n*c], z1[:2*n*c], g[:n*c]
	v, w = v[:c], w[:c]
	for j := 0; j < n; j++ {
		for ch := 0; ch < c; ch++ {
			i, a := j*c+ch, 2*j*c+ch
			b := a + c
			y := [4]T{z0[a]*v[ch] + w[ch], z0[b]*v[ch] + w[ch], z1[a]*v[ch] + w[ch], z1[b]*v[ch] + w[ch]}
			y[int(pos[i])&3] += g[i] * u[ch]
			o0[a], o0[b], o1[a], o1[b] = y[0], y[1], y[2], y[3]
		}
	}
}

func gatherAffineRowGo[T Float](dst, pos, z0, z1, a, c []T) {
	f := len(a)
	n := len(dst) / f
	z0, z1, pos, c = z0[:2*n*f], z1[:2*n*f], pos[:n*f], c[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch++ {
			i, p := j*f+ch, 2*j*f+ch
			x := atPos(pos[i], z0[p], z0[p+f], z1[p], z1[p+f])
			dst[i] = x*a[ch] + c[ch]
		}
	}
}

func poolArgRowGo[T Float](dst, z0, z1, s []T) {
	f := len(s)
	n := len(dst) / f
	z0, z1 = z0[:2*n*f], z1[:2*n*f]
	for j := 0; j < n; j++ {
		q := 2 * j * f
		poolArgScaledGo(dst[j*f:(j+1)*f], z0[q:q+f], z0[q+f:q+2*f], z1[q:q+f], z1[q+f:q+2*f], s)
	}
}

func gatherDotRowGo[T Float](acc []float64, pos, z0, z1, g, mu []T) {
	f := len(mu)
	n := len(pos) / f
	z0, z1, g, acc = z0[:2*n*f], z1[:2*n*f], g[:n*f], acc[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch++ {
			i, p := j*f+ch, 2*j*f+ch
			x := atPos(pos[i], z0[p], z0[p+f], z1[p], z1[p+f])
			acc[ch] += float64(g[i] * (x - mu[ch]))
		}
	}
}

func maxAffineRowGo[T Float](dst, z0, z1, a, c []T) {
	f := len(a)
	n := len(dst) / f
	z0, z1, c = z0[:2*n*f], z1[:2*n*f], c[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch++ {
			i, p := j*f+ch, 2*j*f+ch
			x := [4]T{z0[p], z0[p+f], z1[p], z1[p+f]}
			dst[i] = x[firstMax(x[0], x[1], x[2], x[3], a[ch])]*a[ch] + c[ch]
		}
	}
}

func extremeRowGo[T Float](dst, z0, z1, s []T) {
	f := len(s)
	n := len(dst) / f
	z0, z1 = z0[:2*n*f], z1[:2*n*f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch++ {
			p := 2*j*f + ch
			a, b, c, d := z0[p], z0[p+f], z1[p], z1[p+f]
			if s[ch] < 0 {
				dst[j*f+ch] = min(a, b, c, d)
			} else {
				dst[j*f+ch] = max(a, b, c, d)
			}
		}
	}
}

func backPoolMaxRowGo[T Float](o0, o1, z0, z1, g, u, v, w []T) {
	c := len(u)
	n := len(g) / c
	o0, o1, z0, z1 = o0[:2*n*c], o1[:2*n*c], z0[:2*n*c], z1[:2*n*c]
	v, w = v[:c], w[:c]
	for j := 0; j < n; j++ {
		for ch := 0; ch < c; ch++ {
			i, a := j*c+ch, 2*j*c+ch
			b := a + c
			y := [4]T{z0[a]*v[ch] + w[ch], z0[b]*v[ch] + w[ch], z1[a]*v[ch] + w[ch], z1[b]*v[ch] + w[ch]}
			y[firstMax(z0[a], z0[b], z1[a], z1[b], u[ch])] += g[i] * u[ch]
			o0[a], o0[b], o1[a], o1[b] = y[0], y[1], y[2], y[3]
		}
	}
}

func gatherDotMaxRowGo[T Float](acc []float64, z0, z1, g, s, mu []T) {
	f := len(mu)
	n := len(g) / f
	z0, z1, acc = z0[:2*n*f], z1[:2*n*f], acc[:f]
	for j := 0; j < n; j++ {
		for ch := 0; ch < f; ch++ {
			i, p := j*f+ch, 2*j*f+ch
			x := [4]T{z0[p], z0[p+f], z1[p], z1[p+f]}
			acc[ch] += float64(g[i] * (x[firstMax(x[0], x[1], x[2], x[3], s[ch])] - mu[ch]))
		}
	}
}

func conv1Go[T Float](dst, pad []T, h, w int, k []T) {
	f, pw := len(k)/9, w+2
	k = k[:9*f]
	for y := 0; y < h; y++ {
		r0, r1, r2 := pad[y*pw:(y+1)*pw], pad[(y+1)*pw:(y+2)*pw], pad[(y+2)*pw:(y+3)*pw]
		for x := 0; x < w; x++ {
			in := [9]T{r0[x], r0[x+1], r0[x+2], r1[x], r1[x+1], r1[x+2], r2[x], r2[x+1], r2[x+2]}
			d := dst[(y*w+x)*f:][:f]
			for ch := range d {
				acc := in[0] * k[ch]
				for i := 1; i < 9; i++ {
					acc += in[i] * k[i*f+ch]
				}
				d[ch] = acc
			}
		}
	}
}

func convPool1Go[T Float](dst, z, pad []T, w int, k, a, c []T) {
	f := len(a)
	n := len(dst) / f
	conv1Go(z, pad, 2, w, k)
	maxAffineRowGo(dst, z[:2*n*f], z[w*f:][:2*n*f], a, c)
	reluGo(dst, dst)
}

func convBack1Go[T Float](acc []float64, z, pad []T, w int, k, out, g, s, mu []T) {
	f := len(s)
	n := len(g) / f
	conv1Go(z, pad, 2, w, k)
	blockBackRowGo(acc, z[:2*n*f], z[w*f:][:2*n*f], pad, w+2, out, g, s, mu)
}

func patchMomentsGo(s *[9]float64, m *[81]float64, pad []float64, h, w int) {
	pw := w + 2
	for y := 0; y < h; y++ {
		r0, r1, r2 := pad[y*pw:(y+1)*pw], pad[(y+1)*pw:(y+2)*pw], pad[(y+2)*pw:(y+3)*pw]
		for x := 0; x < w; x++ {
			v := [9]float64{r0[x], r0[x+1], r0[x+2], r1[x], r1[x+1], r1[x+2], r2[x], r2[x+1], r2[x+2]}
			for i, a := range v {
				s[i] += a
				for j, b := range v {
					m[9*i+j] += a * b
				}
			}
		}
	}
}

func blockBackRowGo[T Float](acc []float64, z0, z1, pad []T, pw int, out, g, s, mu []T) {
	f := len(s)
	n := len(g) / f
	z0, z1, out, acc = z0[:2*n*f], z1[:2*n*f], out[:n*f], acc[:11*f]
	for j := 0; j < n; j++ {
		var r [4][4]T // the patches' values: rows and columns 2j..2j+3 of pad
		for a := range r {
			copy(r[a][:], pad[a*pw+2*j:][:4])
		}
		for ch := 0; ch < f; ch++ {
			i, p := j*f+ch, 2*j*f+ch
			if !(out[i] > 0) {
				continue
			}
			gp := g[i]
			x := [4]T{z0[p], z0[p+f], z1[p], z1[p+f]}
			q := firstMax(x[0], x[1], x[2], x[3], s[ch])
			dy, dx := q/2, q%2
			for kh := 0; kh < 3; kh++ {
				for kw := 0; kw < 3; kw++ {
					acc[(3*kh+kw)*f+ch] += float64(gp * r[dy+kh][dx+kw])
				}
			}
			acc[9*f+ch] += float64(gp * (x[q] - mu[ch]))
			acc[10*f+ch] += float64(gp)
		}
	}
}
