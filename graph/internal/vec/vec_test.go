package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSIMDMatchesPlain runs every kernel's SIMD implementation and the plain
// loops on the same random inputs, for row widths that are whole vectors, a
// width that is not, and lengths with and without a tail. Without the SIMD
// build (GOEXPERIMENT=simd) or an AVX2 CPU there is nothing to compare.
func TestSIMDMatchesPlain(t *testing.T) {
	t.Parallel()
	if !SIMD() {
		t.Skip("SIMD kernels not built (GOEXPERIMENT=simd on amd64) or no AVX2+FMA")
	}
	r := rand.New(rand.NewPCG(3, 4))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	// positions 0..3, and windows with ties (equal entries) and a zero.
	positions := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.IntN(4))
		}
		return v
	}
	for _, f := range []int{8, 64, 5} {
		for _, rows := range []int{1, 3, 50} {
			n := f * rows
			name := fmt.Sprintf("f=%d,rows=%d", f, rows)
			x, y, a, b, c := vec(n), vec(n), vec(f), vec(f), vec(f)
			x[0], y[0] = 0, 1 // Mask at x = 0 gives 0, not v
			withNaN := append([]float32(nil), x...)
			withNaN[n-1] = float32(math.NaN()) // ReLU keeps a NaN (a diverged run must show)
			// Ties in the pooling windows: x01 equals x00 in a third of the
			// entries, x11 equals the max in another.
			x01, x10, x11 := vec(n), vec(n), vec(n)
			for i := 0; i < n; i += 3 {
				x01[i] = x[i]
				x11[min(i+1, n-1)] = max(x[min(i+1, n-1)], x01[min(i+1, n-1)], x10[min(i+1, n-1)])
			}
			pos := positions(n)
			cases := []struct {
				op  string
				tol float64
				run func(k kernels) []float64
			}{
				{"affine", 1e-6, func(k kernels) []float64 { d := make([]float32, n); k.affine(d, x, a, c); return wide(d) }},
				{"affine2", 1e-6, func(k kernels) []float64 { d := make([]float32, n); k.affine2(d, x, y, a, b, c); return wide(d) }},
				{"addTo", 0, func(k kernels) []float64 { d := append([]float32(nil), y...); k.addTo(d, x); return wide(d) }},
				{"sumRows", 1e-6, func(k kernels) []float64 { d := append([]float32(nil), a...); k.sumRows(d, x); return wide(d) }},
				{"moments", 1e-12, func(k kernels) []float64 {
					s, q := make([]float64, f), make([]float64, f)
					k.moments(s, q, x, b)
					return append(s, q...)
				}},
				{"dotCentered", 1e-6, func(k kernels) []float64 { d := make([]float64, f); k.dotCentered(d, y, x, c); return d }},
				{"gather", 0, func(k kernels) []float64 { d := make([]float32, n); k.gather(d, pos, x, y, x01, x10); return wide(d) }},
				{"scatter", 0, func(k kernels) []float64 {
					o := [4][]float32{vec(n), vec(n), vec(n), vec(n)}
					k.scatter(o[0], o[1], o[2], o[3], pos, x)
					return wide(append(append(append(o[0], o[1]...), o[2]...), o[3]...))
				}},
				{"poolArgScaled", 0, func(k kernels) []float64 {
					d := make([]float32, n)
					k.poolArgScaled(d, x, x01, x10, x11, a32(n, a))
					return wide(d)
				}},
				{"addAtScaled", 1e-6, func(k kernels) []float64 {
					o := [4][]float32{append([]float32(nil), x...), append([]float32(nil), y...), append([]float32(nil), x01...), append([]float32(nil), x10...)}
					k.addAtScaled(o[0], o[1], o[2], o[3], pos, x11, a32(n, b))
					return wide(append(append(append(o[0], o[1]...), o[2]...), o[3]...))
				}},
				{"relu", 0, func(k kernels) []float64 { d := make([]float32, n); k.relu(d, withNaN); return wide(d) }},
				{"mask", 0, func(k kernels) []float64 { d := make([]float32, n); k.mask(d, x, y); return wide(d) }},
			}
			for _, tc := range cases {
				got, want := tc.run(impl), tc.run(plain)
				for i := range want {
					if math.IsNaN(want[i]) && math.IsNaN(got[i]) {
						continue
					}
					if d := math.Abs(got[i] - want[i]); !(d <= tc.tol*(1+math.Abs(want[i]))) { // a lone NaN fails
						t.Errorf("%s %s: entry %d is %v with SIMD, %v with the plain loop", tc.op, name, i, got[i], want[i])
						break
					}
				}
			}
		}
	}
}

// a32 repeats the row a (per-channel values, some negative) to length n.
func a32(n int, a []float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = a[i%len(a)]
	}
	return v
}

func wide(v []float32) []float64 {
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = float64(x)
	}
	return w
}

// TestPoolWindow pins the pooling kernels' contract on a hand-made example:
// the first maximum wins ties, a negative scale picks the first minimum,
// Gather picks by position, and Scatter is Gather's adjoint (zeros
// elsewhere).
func TestPoolWindow(t *testing.T) {
	t.Parallel()
	x00 := []float32{1, 5, 2, 0, 3, -1, 7, 4, 9}
	x01 := []float32{2, 5, 2, 0, 1, -2, 1, 4, 1}
	x10 := []float32{0, 1, 3, 0, 3, -3, 1, 4, 1}
	x11 := []float32{0, 1, 3, 1, 0, -1, 8, 0, 1}
	want := []float32{1, 0, 2, 3, 0, 0, 3, 0, 0}
	got := make([]float32, len(want))
	scale := func(s float32) []float32 {
		v := make([]float32, len(want))
		for i := range v {
			v[i] = s
		}
		return v
	}
	PoolArgScaled(got, x00, x01, x10, x11, scale(-0.5))
	for i, w := range []float32{2, 2, 0, 0, 3, 2, 1, 3, 1} {
		if got[i] != w {
			t.Fatalf("PoolArgScaled by -0.5 = %v, want the first minima", got)
		}
	}
	PoolArgScaled(got, x00, x01, x10, x11, scale(2))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("PoolArgScaled by 2 = %v, want %v", got, want)
		}
	}
	max := make([]float32, len(want))
	Gather(max, got, x00, x01, x10, x11)
	for i, m := range []float32{2, 5, 3, 1, 3, -1, 8, 4, 9} {
		if max[i] != m {
			t.Fatalf("Gather = %v, want the window maxima", max)
		}
	}
	o := [4][]float32{}
	for k := range o {
		o[k] = []float32{9, 9, 9, 9, 9, 9, 9, 9, 9}
	}
	Scatter(o[0], o[1], o[2], o[3], got, max)
	for i := range want {
		for k := range o {
			w := float32(0)
			if int(want[i]) == k {
				w = max[i]
			}
			if o[k][i] != w {
				t.Fatalf("Scatter row %d entry %d = %v, want %v", k, i, o[k][i], w)
			}
		}
	}
}
