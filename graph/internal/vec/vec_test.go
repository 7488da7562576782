package vec

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// exactSets is the AVX and SSE sets where they can be compared with the
// plain loops bit for bit: not in a GOAMD64=v3 build, whose plain loops
// fuse multiplies and adds (and which cannot run on a CPU without AVX2
// anyway).
func exactSets() []kernels {
	if amd64Level >= 3 {
		return nil
	}
	return slices.Concat(avxSet, sseSet)
}

// TestSIMDMatchesPlain runs every kernel's SIMD implementation and the plain
// loops on the same random inputs, for row widths that are whole vectors, a
// width that is not, and lengths with and without a tail: the AVX2 and
// AVX-512 sets within each kernel's tolerance (fused multiply-adds, sums in
// another order), the AVX and SSE sets exactly. Off amd64 (or in a
// GOAMD64=v3 build without GOEXPERIMENT=simd) there is nothing to compare.
func TestSIMDMatchesPlain(t *testing.T) {
	t.Parallel()
	if len(simdSets)+len(exactSets()) == 0 {
		t.Skip("no vector kernels to compare: not amd64, or a GOAMD64=v3 build without GOEXPERIMENT=simd")
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
	// specials are the values a diverging or degenerate run can feed the
	// kernels, which the AVX set must treat as the plain loops do.
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1, -1}
	for _, special := range []bool{false, true} {
		for _, f := range []int{8, 64, 40, 12, 5} {
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
				if special { // a third of every input special, scales of zero too
					for _, v := range [][]float32{x, y, x01, x10, x11, withNaN, a, b, c} {
						for i := range v {
							if r.IntN(3) == 0 {
								v[i] = specials[r.IntN(len(specials))]
							}
						}
					}
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
					{"addScaled", 0, func(k kernels) []float64 { d := make([]float32, n); k.addScaled(d, x, y, -0.37); return wide(d) }},
					{"scale", 0, func(k kernels) []float64 { d := make([]float32, n); k.scale(d, x, 0.37); return wide(d) }},
					{"winogradIn", 0, func(k kernels) []float64 {
						d := make([]float32, 16*(f+4)) // rows 4 values apart
						k.winogradIn(d, f+4, a32(4*f, x), a32(4*f, y), a32(4*f, x01), a32(4*f, x10), f)
						return wide(d)
					}},
					{"winogradKernel", 0, func(k kernels) []float64 {
						dst := shiftedRows(16, n, nil)
						k.winogradK((*[16][]float32)(dst), (*[9][]float32)(shiftedRows(9, n, x)))
						return wide(slices.Concat(dst...))
					}},
					{"backPoolRow", 1e-6, func(k kernels) []float64 {
						o0, o1 := make([]float32, 2*n), make([]float32, 2*n)
						k.backPoolRow(o0, o1, a32(2*n, x), a32(2*n, y), pos, x11, a, b, c)
						return wide(append(o0, o1...))
					}},
					{"gatherAffineRow", 1e-6, func(k kernels) []float64 {
						d := make([]float32, n)
						k.gatherAffRow(d, pos, append(append([]float32(nil), x...), x01...), append(append([]float32(nil), x10...), y...), a, c)
						return wide(d)
					}},
					{"poolArgRow", 0, func(k kernels) []float64 {
						d := make([]float32, n)
						k.poolArgRow(d, windowRow(x, x01, f), windowRow(x10, x11, f), a32(f, a))
						return wide(d)
					}},
					{"maxAffineRow", 1e-6, func(k kernels) []float64 {
						d, pos, g := make([]float32, n), make([]float32, n), make([]float32, n)
						z0, z1 := windowRow(x, x01, f), windowRow(x10, x11, f)
						k.maxAffRow(d, z0, z1, a, c)
						k.poolArgRow(pos, z0, z1, a)
						k.gatherAffRow(g, pos, z0, z1, a, c)
						for i := range d { // the gather at the window search's positions
							if !same(d[i], g[i]) {
								return []float64{math.NaN()}
							}
						}
						return wide(d)
					}},
					{"extremeRow", 0, func(k kernels) []float64 {
						d := make([]float32, n)
						k.extremeRow(d, windowRow(x, x01, f), windowRow(x10, x11, f), a)
						return wide(d)
					}},
					{"backPoolMaxRow", 1e-6, func(k kernels) []float64 {
						z0, z1 := windowRow(x, x01, f), windowRow(x10, x11, f)
						o0, o1 := make([]float32, 2*n), make([]float32, 2*n)
						k.backPoolMax(o0, o1, z0, z1, y, a, b, c)
						p, q0, q1 := make([]float32, n), make([]float32, 2*n), make([]float32, 2*n)
						k.poolArgRow(p, z0, z1, a)
						k.backPoolRow(q0, q1, z0, z1, p, y, a, b, c)
						for i := range o0 { // BackPoolRow at the window search's positions
							if !same(o0[i], q0[i]) || !same(o1[i], q1[i]) {
								return []float64{math.NaN()}
							}
						}
						return wide(append(o0, o1...))
					}},
					{"gatherDotMaxRow", 1e-12, func(k kernels) []float64 {
						z0, z1 := windowRow(x, x01, f), windowRow(x10, x11, f)
						acc, want := make([]float64, f), make([]float64, f)
						k.gatherDotMax(acc, z0, z1, y, a, c)
						p := make([]float32, n)
						k.poolArgRow(p, z0, z1, a)
						k.gatherDotRow(want, p, z0, z1, y, c)
						for i := range acc { // GatherDotRow at the window search's positions
							if !same(acc[i], want[i]) {
								return []float64{math.NaN()}
							}
						}
						return acc
					}},
					{"gatherDotRow", 1e-12, func(k kernels) []float64 {
						acc := make([]float64, f)
						for e := range acc {
							acc[e] = float64(b[e])
						}
						k.gatherDotRow(acc, pos, windowRow(x, x01, f), windowRow(x10, y, f), x11, c)
						return acc
					}},
					{"winogradGrad", 0, func(k kernels) []float64 {
						d := make([]float32, 16*(f+4))
						k.winogradGrad(d, f+4, a32(2*f, x), a32(2*f, y), f)
						return wide(d)
					}},
					{"winogradKernelT", 0, func(k kernels) []float64 {
						dst := shiftedRows(9, n, nil)
						k.winogradKT((*[9][]float32)(dst), (*[16][]float32)(shiftedRows(16, n, y)))
						return wide(slices.Concat(dst...))
					}},
					{"conv1", 1e-5, func(k kernels) []float64 {
						h, w := 3, rows+2 // w: 3, 5 (a tail of pixels) and 52 (four-pixel blocks)
						d := make([]float32, h*w*f)
						k.conv1(d, a32((h+2)*(w+2), y), h, w, a32(9*f, x10))
						return wide(d)
					}},
					{"blockBackRow", 1e-5, func(k kernels) []float64 {
						acc := make([]float64, 11*f)
						acc[0] = 1 // the sums are added to
						pw := 2*rows + 3
						// out (y) of both signs, scales (a) of both signs.
						k.blockBackRow(acc, windowRow(x, x01, f), windowRow(x10, x11, f), a32(4*pw, x[1:]), pw, y, x10, a, c)
						return acc
					}},
					{"convPool1", 1e-5, func(k kernels) []float64 {
						w := rows + 7 // 8, 10 and 57 pixels: whole windows, and an odd last column
						d := make([]float32, w/2*f)
						k.convPool1(d, make([]float32, 2*w*f), a32(4*(w+2), y), w, a32(9*f, x), a, c)
						return wide(d)
					}},
					{"convBack1", 1e-5, func(k kernels) []float64 {
						w := rows + 7 // 8, 10 and 57 pixels: whole windows, and an odd last column
						acc := make([]float64, 11*f)
						acc[0] = 1 // the sums are added to
						k.convBack1(acc, make([]float32, 2*w*f), a32(4*(w+2), y), w, a32(9*f, x), a32(w/2*f, x01), a32(w/2*f, x10), a, c)
						return acc
					}},
					{"patchMoments", 1e-12, func(k kernels) []float64 {
						h, w := 3, rows+7 // w: 8 (whole vectors), 10 and 57 (a tail)
						var s [9]float64
						var m [81]float64
						s[0], m[80] = 1, 2 // the sums are added to
						pad := wide(a32((h+2)*(w+2), y))
						clear(pad[:w+2]) // the border rows are zeros (the columns need not be)
						clear(pad[(h+1)*(w+2):])
						k.patchMoments(&s, &m, pad, h, w)
						two := append(append([]float64(nil), pad[:3*(w+2)]...), make([]float64, w+2)...)
						k.patchMoments(&s, &m, two, 2, w)               // two rows
						k.patchMoments(&s, &m, wide(a32(3*7, x)), 1, 5) // fewer pixels than eight
						return append(s[:], m[:]...)
					}},
					{"winograd4In", 1e-5, func(k kernels) []float64 {
						d := make([]float32, 36*(f+4))
						k.winograd4In(d, f+4, a32(6*(6*f+3), x), 6*f+3, f) // rows 3 and 4 values apart
						return wide(d)
					}},
					{"winograd4Out", 1e-5, func(k kernels) []float64 {
						out := make([]float32, 4*(4*f+1))
						k.winograd4Out(out, 4*f+1, a32(36*(f+4), x11), f+4, f)
						return wide(out)
					}},
					{"winograd4Grad", 1e-5, func(k kernels) []float64 {
						d := make([]float32, 36*(f+4))
						k.winograd4Grad(d, f+4, a32(4*(4*f+3), y), 4*f+3, f) // rows 3 and 4 values apart
						return wide(d)
					}},
					{"winograd4KernelT", 1e-6, func(k kernels) []float64 {
						dst := shiftedRows(9, n, nil)
						k.winograd4KT((*[9][]float32)(dst), (*[36][]float32)(shiftedRows(36, n, x)))
						return wide(slices.Concat(dst...))
					}},
					{"winograd4Kernel", 1e-6, func(k kernels) []float64 {
						dst := shiftedRows(36, n, nil)
						k.winograd4K((*[36][]float32)(dst), (*[9][]float32)(shiftedRows(9, n, y)))
						return wide(slices.Concat(dst...))
					}},
					{"winogradOut", 0, func(k kernels) []float64 {
						y0, y1 := make([]float32, 2*f), make([]float32, 2*f)
						k.winogradOut(y0, y1, a32(16*(f+4), x11), f+4, f)
						return wide(append(y0, y1...))
					}},
				}
				sets := append(slices.Clip(simdSets), exactSets()...)
				if special { // only the AVX and SSE sets promise the plain loops' values there
					sets = exactSets()
				}
				for _, tc := range cases {
					for si, set := range sets {
						exact, label := len(sets)-si <= len(exactSets()), fmt.Sprintf("SIMD set %d", si)
						if exact {
							label = fmt.Sprintf("exact set %d (AVX, SSE)", si-(len(sets)-len(exactSets())))
						}
						if special {
							label += " on special values"
						}
						got, want := tc.run(set), tc.run(plain)
						for i := range want {
							if math.IsNaN(want[i]) && math.IsNaN(got[i]) {
								continue
							}
							// The AVX set: the same bits, the sign of a zero too.
							// The others: within tol (a lone NaN fails).
							if exact && math.Float64bits(got[i]) != math.Float64bits(want[i]) ||
								!exact && !(math.Abs(got[i]-want[i]) <= tc.tol*(1+math.Abs(want[i]))) {
								t.Errorf("%s %s: entry %d is %v with %s, %v with the plain loop", tc.op, name, i, got[i], label, want[i])
								break
							}
						}
					}
				}
			}
		}
	}
}

// same reports whether a and b are equal or both NaN: the consistency
// checks between a fused kernel and its parts, which NaNs would otherwise
// fail in every set alike (and so pass the comparison with the plain loop).
func same[T Float](a, b T) bool { return a == b || a != a && b != b }

// windowRow interleaves the left and right pixels of a row of windows:
// window j's f channels of left, then of right.
func windowRow(left, right []float32, f int) []float32 {
	var v []float32
	for j := 0; j+f <= len(left); j += f {
		v = append(append(v, left[j:j+f]...), right[j:j+f]...)
	}
	return v
}

// a32 repeats the row a (per-channel values, some negative) to length n.
func a32(n int, a []float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = a[i%len(a)]
	}
	return v
}

// shiftedRows returns c rows of n values, row e being v rotated left by e
// (zeros for a nil v): the rows of a kernel transform.
func shiftedRows(c, n int, v []float32) [][]float32 {
	rows := make([][]float32, c)
	for e := range rows {
		rows[e] = make([]float32, n)
		if v != nil {
			for i := range rows[e] {
				rows[e][i] = v[(i+e)%n]
			}
		}
	}
	return rows
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

// TestWinogradTransforms checks that the input and output transforms with
// the kernel transform G k Gᵀ compute a 3x3 correlation of a 4x4 tile, one
// channel.
func TestWinogradTransforms(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []int{1, 8, 16} {
		d := make([]float32, 16*c) // 4 rows of 4 pixels of c channels
		for i := range d {
			d[i] = float32(r.NormFloat64())
		}
		var k [3][3]float64
		for i := range k {
			for j := range k[i] {
				k[i][j] = r.NormFloat64()
			}
		}
		// G k Gᵀ
		G := [4][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
		var u [4][4]float64
		for a := 0; a < 4; a++ {
			for b := 0; b < 4; b++ {
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						u[a][b] += G[a][i] * G[b][j] * k[i][j]
					}
				}
			}
		}
		v := make([]float32, 16*c+16*3)
		WinogradIn(v, c+3, d, d[4*c:], d[8*c:], d[12*c:], c) // rows 3 apart
		for e := 0; e < 16; e++ {
			for ch := 0; ch < c; ch++ {
				v[e*(c+3)+ch] *= float32(u[e/4][e%4])
			}
		}
		y := make([]float32, 4*c)
		WinogradOut(y, y[2*c:], v, c+3, c)
		for oy := 0; oy < 2; oy++ {
			for ox := 0; ox < 2; ox++ {
				for ch := 0; ch < c; ch++ {
					want := 0.0
					for i := 0; i < 3; i++ {
						for j := 0; j < 3; j++ {
							want += k[i][j] * float64(d[((oy+i)*4+ox+j)*c+ch])
						}
					}
					if got := float64(y[(oy*2+ox)*c+ch]); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
						t.Errorf("c=%d: output (%d, %d) channel %d = %v, want %v", c, oy, ox, ch, got, want)
					}
				}
			}
		}
	}
}

// TestWinogradAdjoints checks that WinogradGrad and WinogradKernelT are the
// adjoints of WinogradOut and WinogradKernel: <T(a), b> = <a, T*(b)>.
func TestWinogradAdjoints(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	dot := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	for _, c := range []int{1, 8, 24} {
		m, g := rnd(16*c), rnd(4*c)
		y := make([]float32, 4*c)
		WinogradOut(y, y[2*c:], m, c, c)
		gm := make([]float32, 16*c)
		WinogradGrad(gm, c, g, g[2*c:], c)
		if a, b := dot(y, g), dot(m, gm); math.Abs(a-b) > 1e-4*(1+math.Abs(a)) {
			t.Errorf("c=%d: <Out(m), g> = %v, <m, Grad(g)> = %v", c, a, b)
		}
		var k, kt [9][]float32
		var u, s [16][]float32
		for i := range k {
			k[i], kt[i] = rnd(c), make([]float32, c)
		}
		for e := range u {
			u[e], s[e] = make([]float32, c), rnd(c)
		}
		WinogradKernel(&u, &k)
		WinogradKernelT(&kt, &s)
		a, b := 0.0, 0.0
		for e := range u {
			a += dot(u[e], s[e])
		}
		for i := range k {
			b += dot(k[i], kt[i])
		}
		if math.Abs(a-b) > 1e-4*(1+math.Abs(a)) {
			t.Errorf("c=%d: <Kernel(k), s> = %v, <k, KernelT(s)> = %v", c, a, b)
		}
	}
}

// TestSIMDSumsAgree checks that every SIMD set's float64 sums are those of
// the first (AVX2) set bit for bit: the AVX-512 kernels keep each channel's
// order of summation.
func TestSIMDSumsAgree(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range []int{8, 32, 40, 64, 96} {
		n := f * 77 // more than two blocks of rows, the last partial
		x, g, mu := make([]float32, n), make([]float32, n), make([]float32, f)
		for i := range x {
			x[i], g[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for i := range mu {
			mu[i] = float32(r.NormFloat64())
		}
		run := func(k kernels) []float64 {
			sum, sq, acc := make([]float64, f), make([]float64, f), make([]float64, f)
			k.moments(sum, sq, x, mu)
			k.dotCentered(acc, g, x, mu)
			return append(append(sum, sq...), acc...)
		}
		for si := 1; si < len(simdSets); si++ {
			want, got := run(simdSets[0]), run(simdSets[si])
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("f=%d: sum %d is %v with SIMD set %d, %v with set 0", f, i, got[i], si, want[i])
				}
			}
		}
		for _, set := range exactSets() { // the plain loop's order, block by block
			want, got := run(plain), run(set)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("f=%d: sum %d is %v with the AVX or SSE set, %v with the plain loop", f, i, got[i], want[i])
				}
			}
		}
	}
}

// normals returns n draws of a standard normal from r.
func normals(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestConvPool1IsItsParts asks each SIMD set's fused first block for the
// bits of its own Conv1, MaxAffineRow and ReLU, which the graph's tests
// compare with the unfused ops.
func TestConvPool1IsItsParts(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, f := range []int{16, 64, 40} {
		for _, w := range []int{28, 9, 11, 70} { // 14, 4, 5 and 35 windows (too wide for the assembly)
			pad, k, a, c := normals(r, 4*(w+2)), normals(r, 9*f), normals(r, f), normals(r, f)
			n := w / 2
			for si, set := range simdSets {
				got, want, z := make([]float32, n*f), make([]float32, n*f), make([]float32, 2*w*f)
				set.convPool1(got, make([]float32, 2*w*f), pad, w, k, a, c)
				set.conv1(z, pad, 2, w, k)
				set.maxAffRow(want, z[:2*n*f], z[w*f:][:2*n*f], a, c)
				set.relu(want, want)
				if !slices.Equal(got, want) {
					t.Errorf("f=%d, w=%d: SIMD set %d's convPool1 differs from its conv1, maxAffineRow and relu", f, w, si)
				}
			}
		}
	}
}

// TestConvBack1IsItsParts asks each SIMD set's fused first-block backward
// for the sums of its own Conv1 and BlockBackRow, bit for bit, with ties
// in the windows, and rows too wide for the assembly (70 pixels).
func TestConvBack1IsItsParts(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, f := range []int{16, 64, 40} {
		for _, w := range []int{28, 9, 64, 70} { // 14, 4, 32 and 35 windows
			n := w / 2
			pad, k, out, g, s, mu := normals(r, 4*(w+2)), normals(r, 9*f), normals(r, n*f), normals(r, n*f), normals(r, f), normals(r, f)
			for i := 0; i < w+2; i += 3 {
				pad[i+1] = pad[i] // equal neighbours: some windows tie
			}
			for si, set := range simdSets {
				got, want, z := make([]float64, 11*f), make([]float64, 11*f), make([]float32, 2*w*f)
				for i := range got {
					got[i], want[i] = float64(i), float64(i) // the sums are added to
				}
				set.convBack1(got, make([]float32, 2*w*f), pad, w, k, out, g, s, mu)
				set.conv1(z, pad, 2, w, k)
				set.blockBackRow(want, z[:2*n*f], z[w*f:][:2*n*f], pad, w+2, out, g, s, mu)
				if !slices.Equal(got, want) {
					t.Errorf("f=%d, w=%d: SIMD set %d's convBack1 differs from its conv1 and blockBackRow", f, w, si)
				}
			}
		}
	}
}

// TestWinogradTransformsAgree asks the F(4x4) input, output and gradient
// transforms of every SIMD set (the 16-lane ones in assembly) for the same
// bits.
func TestWinogradTransformsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, c := range []int{16, 64, 48} {
		pw := 7*c + 5 // rows of seven pixels and a few values more
		d, m := normals(r, 6*pw), normals(r, 36*(c+3))
		run := func(k kernels) []float32 {
			in, out, grad := make([]float32, 36*(c+5)), make([]float32, 4*(5*c+1)), make([]float32, 36*(c+5))
			k.winograd4In(in, c+5, d, pw, c)
			k.winograd4Out(out, 5*c+1, m, c+3, c)
			k.winograd4Grad(grad, c+5, d, pw, c)
			return slices.Concat(in, out, grad)
		}
		for si := 1; si < len(simdSets); si++ {
			if want, got := run(simdSets[0]), run(simdSets[si]); !slices.Equal(got, want) {
				t.Errorf("c=%d: SIMD set %d's transforms differ from set 0's", c, si)
			}
		}
	}
}

// TestWinogradKernelsAgree: the F(4x4) kernel transform and its adjoint
// give the same values bit for bit on 8 and 16 lanes (the same operations
// lane by lane), so a run's values do not depend on whether its CPU has
// AVX-512.
func TestWinogradKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{16, 64, 72} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		run := func(k kernels) []float32 {
			kd, td := shiftedRows(36, n, nil), shiftedRows(9, n, nil)
			k.winograd4K((*[36][]float32)(kd), (*[9][]float32)(shiftedRows(9, n, v)))
			k.winograd4KT((*[9][]float32)(td), (*[36][]float32)(shiftedRows(36, n, v)))
			return slices.Concat(append(kd, td...)...)
		}
		for si := 1; si < len(simdSets); si++ {
			if want, got := run(simdSets[0]), run(simdSets[si]); !slices.Equal(got, want) {
				t.Errorf("n=%d: SIMD set %d differs from set 0", n, si)
			}
		}
	}
}

// Lanes and ISA name the widest kernel set in use: none with the plain
// loops, 4 lanes for the AVX and SSE sets (SIMD false: not the full set),
// 8 for the AVX2 one, 16 once the AVX-512 set replaced it; with TRMAML_WANT_ISA set, the
// one it names ("none" for the plain loops).
func TestLanesNamesTheSetInUse(t *testing.T) {
	type set struct {
		lanes int
		isa   string
		simd  bool
	}
	want := map[int]set{1: {8, "AVX2", true}, 2: {16, "AVX-512", true}}[len(simdSets)]
	if len(simdSets) == 0 && len(avxSet) > 0 {
		want = set{4, "AVX", false}
	} else if len(simdSets) == 0 && len(sseSet) > 0 {
		want = set{4, "SSE", false}
	}
	if got := (set{Lanes(), ISA(), SIMD()}); got != want {
		t.Errorf("Lanes, ISA, SIMD = %v with %d SIMD sets and %d AVX sets, want %v", got, len(simdSets), len(avxSet), want)
	}
	// scripts/test_isa.sh names the set each emulated CPU must get.
	if isa := cmp.Or(ISA(), "none"); os.Getenv("TRMAML_WANT_ISA") != "" && isa != os.Getenv("TRMAML_WANT_ISA") {
		t.Errorf("kernel set %s, want %s (TRMAML_WANT_ISA)", isa, os.Getenv("TRMAML_WANT_ISA"))
	}
}

// TestExtremeRowFeedsAffine: Affine of ExtremeRow's values gives
// MaxAffineRow of the windows, for scales of both signs and zero, in every
// kernel set, windows with ties included (the same value twice; two
// entries whose products with a round to the same value could differ by a
// rounding, and these random ones have none).
func TestExtremeRowFeedsAffine(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	for _, f := range []int{64, 40, 5} {
		const n = 7
		z0, z1 := make([]float32, 2*n*f), make([]float32, 2*n*f)
		for i := range z0 {
			z0[i], z1[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			if i%5 == 0 {
				z1[i] = z0[i]
			}
		}
		a, c := make([]float32, f), make([]float32, f)
		for ch := range a {
			a[ch], c[ch] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		a[0] = 0
		for si, set := range slices.Concat([]kernels{plain}, simdSets, avxSet, sseSet) {
			want, got := make([]float32, n*f), make([]float32, n*f)
			set.maxAffRow(want, z0, z1, a, c)
			set.extremeRow(got, z0, z1, a)
			set.affine(got, got, a, c)
			if !slices.Equal(got, want) {
				t.Errorf("f=%d, set %d: Affine of the extremes %v, MaxAffineRow %v", f, si, got[:min(8, len(got))], want[:min(8, len(want))])
			}
		}
	}
}
