package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// plainBmm is op(a[t]) op(b[t]) for every task in plain loops, with a and b
// stored row-major as (T, ra, ca) and (T, rb, cb); with tiled, every task
// reads b[0].
func plainBmm(ta, tb, tiled bool, tasks, ra, ca, rb, cb int, a, b []float64) []float64 {
	m, kk, n := ra, ca, cb
	if ta {
		m, kk = ca, ra
	}
	if tb {
		n = rb
	}
	out := make([]float64, tasks*m*n)
	for t := 0; t < tasks; t++ {
		at, bt := a[t*ra*ca:], b[t*rb*cb:]
		if tiled {
			bt = b
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for p := 0; p < kk; p++ {
					ia, ib := i*ca+p, p*cb+j // a[t][i][p], b[t][p][j]
					if ta {
						ia = p*ca + i
					}
					if tb {
						ib = j*cb + p
					}
					x, y := at[ia], bt[ib]
					s += x * y
				}
				out[t*m*n+i*n+j] = s
			}
		}
	}
	return out
}

// TestBmmShapes checks bmmKernel's forward against plainBmm on the products
// an MLP's graphs make: rows are support, query or evaluation query counts
// (which differ between training and evaluation), inner and outer sizes are
// input, hidden and output widths, with every transposition, tiled b, both
// float types, and sizes on both sides of bigProduct. m > kk > n with b
// transposed (50 query rows by a hidden width 16 times 5 support rows) once
// sliced past the end of b.
func TestBmmShapes(t *testing.T) {
	cases := []struct{ tasks, m, kk, n int }{
		{3, 50, 16, 5},  // evaluation query rows by a support-point product
		{3, 50, 16, 10}, // and with 10 support points
		{3, 10, 16, 5},
		{2, 5, 16, 50},
		{2, 16, 5, 50},
		{2, 16, 50, 5},
		{4, 5, 1, 16},  // input width 1 (the sinusoid)
		{4, 50, 16, 1}, // output width 1
		{2, 1, 16, 16},
		{2, 15, 3, 2},
		{2, 2, 3, 15},
		{2, 50, 40, 40}, // bigProduct and larger: Dgemm
		{245, 50, 16, 5},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, tiled := range []bool{false, true} {
					if tiled && ta { // bmm tiles only an untransposed a
						continue
					}
					for _, f32 := range []bool{false, true} {
						name := fmt.Sprintf("T%d_%dx%dx%d_ta=%v_tb=%v_tiled=%v_f32=%v", c.tasks, c.m, c.kk, c.n, ta, tb, tiled, f32)
						t.Run(name, func(t *testing.T) {
							checkBmm(t, rng, c.tasks, c.m, c.kk, c.n, ta, tb, tiled, f32)
						})
					}
				}
			}
		}
	}
}

func checkBmm(t *testing.T, rng *rand.Rand, tasks, m, kk, n int, ta, tb, tiled, f32 bool) {
	ra, ca, rb, cb := m, kk, kk, n
	if ta {
		ra, ca = kk, m
	}
	if tb {
		rb, cb = n, kk
	}
	a, b := make([]float64, tasks*ra*ca), make([]float64, tasks*rb*cb)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := range b { // with tiled, tasks after the first must not be read
		b[i] = rng.NormFloat64()
	}
	k := bmmKernel{transA: ta, transB: tb, tiledB: tiled}
	in := []tensor.Shape{{tasks, ra, ca}, {tasks, rb, cb}}
	s, err := k.shape(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := (tensor.Shape{tasks, m, n}); !s.Eq(want) {
		t.Fatalf("shape %v, want %v", s, want)
	}
	want := plainBmm(ta, tb, tiled, tasks, ra, ca, rb, cb, a, b)
	got := make([]float64, len(want))
	tol := 1e-12
	if f32 {
		a32, b32, o32 := make([]float32, len(a)), make([]float32, len(b)), make([]float32, len(want))
		for i, v := range a {
			a32[i] = float32(v)
			a[i] = float64(a32[i]) // the reference multiplies the rounded inputs
		}
		for i, v := range b {
			b32[i] = float32(v)
			b[i] = float64(b32[i])
		}
		want = plainBmm(ta, tb, tiled, tasks, ra, ca, rb, cb, a, b)
		k.forward(&args{s: in, o32: o32, i32: [][]float32{a32, b32}})
		for i, v := range o32 {
			got[i] = float64(v)
		}
		tol = 1e-5
	} else {
		k.forward(&args{s: in, o64: got, i64: [][]float64{a, b}})
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Fatalf("out[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}
