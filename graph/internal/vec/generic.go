package vec

import "math"

// The plain Go loops, for both float types: the implementation without SIMD
// and the reference of the tests. Each has the contract of the exported
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
		v00, v01, v10, v11 := x00[i]*sv, x01[i]*sv, x10[i]*sv, x11[i]*sv
		m := max(max(v00, v01), max(v10, v11))
		dst[i] = T(b2i(v00 != m) * (1 + b2i(v01 != m)*(1+b2i(v10 != m))))
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
