package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWinograd4Transforms checks that Winograd4In, Winograd4Kernel and
// Winograd4Out compute a 3x3 correlation of a 6x6 tile (a 4x4 output
// tile), for both float types, with the kernel transform also checked
// against G k Gᵀ computed from the matrix; rows of c channels padded to
// pw values and transformed rows 3 values apart, as in the convolution.
func TestWinograd4Transforms(t *testing.T) {
	for _, c := range []int{1, 8, 16, 24, 40} {
		t.Run(fmt.Sprintf("c=%d/float64", c), func(t *testing.T) { winograd4Check[float64](t, c, 1e-12) })
		t.Run(fmt.Sprintf("c=%d/float32", c), func(t *testing.T) { winograd4Check[float32](t, c, 1e-5) })
	}
}

func winograd4Check[T Float](t *testing.T, c int, tol float64) {
	r := rand.New(rand.NewPCG(uint64(c), 9))
	pw := 6*c + 5
	d := make([]T, 6*pw) // 6 rows of 6 pixels of c channels, 5 values apart
	for i := range d {
		d[i] = T(r.NormFloat64())
	}
	k := make([][3][3]float64, c)
	var src [9][]T
	for i := range src {
		src[i] = make([]T, c)
		for ch := range c {
			k[ch][i/3][i%3] = float64(T(r.NormFloat64()))
			src[i][ch] = T(k[ch][i/3][i%3])
		}
	}
	var u [36][]T
	for e := range u {
		u[e] = make([]T, c)
	}
	Winograd4Kernel(&u, &src)
	G := [6][3]float64{{1. / 4, 0, 0}, {-1. / 6, -1. / 6, -1. / 6}, {-1. / 6, 1. / 6, -1. / 6},
		{1. / 24, 1. / 12, 1. / 6}, {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1}}
	for ch := 0; ch < c; ch++ {
		for e := range u {
			want := 0.0
			for i := 0; i < 3; i++ {
				for j := 0; j < 3; j++ {
					want += G[e/6][i] * G[e%6][j] * k[ch][i][j]
				}
			}
			if got := float64(u[e][ch]); math.Abs(got-want) > tol*(1+math.Abs(want)) {
				t.Fatalf("G k Gᵀ entry %d channel %d = %v, want %v", e, ch, got, want)
			}
		}
	}
	stride := c + 3
	v := make([]T, 36*stride)
	Winograd4In(v, stride, d, pw, c)
	for e := range u {
		for ch := 0; ch < c; ch++ {
			v[e*stride+ch] *= u[e][ch]
		}
	}
	yw := 4*c + 2
	y := make([]T, 4*yw)
	Winograd4Out(y, yw, v, stride, c)
	for oy := 0; oy < 4; oy++ {
		for ox := 0; ox < 4; ox++ {
			for ch := 0; ch < c; ch++ {
				want := 0.0
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						want += k[ch][i][j] * float64(d[(oy+i)*pw+(ox+j)*c+ch])
					}
				}
				if got := float64(y[oy*yw+ox*c+ch]); math.Abs(got-want) > tol*(1+math.Abs(want)) {
					t.Errorf("output (%d, %d) channel %d = %v, want %v", oy, ox, ch, got, want)
				}
			}
		}
	}
}

// TestWinograd4Adjoints checks that Winograd4Grad and Winograd4KernelT are
// the adjoints of Winograd4Out and Winograd4Kernel, <T(a), b> = <a,
// T*(b)>, in both float types, with padded rows as in the convolution.
func TestWinograd4Adjoints(t *testing.T) {
	for _, c := range []int{1, 8, 16, 24, 40} {
		t.Run(fmt.Sprintf("c=%d/float64", c), func(t *testing.T) { winograd4Adjoints[float64](t, c, 1e-12) })
		t.Run(fmt.Sprintf("c=%d/float32", c), func(t *testing.T) { winograd4Adjoints[float32](t, c, 1e-5) })
	}
}

func winograd4Adjoints[T Float](t *testing.T, c int, tol float64) {
	r := rand.New(rand.NewPCG(uint64(c), 10))
	rnd := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = T(r.NormFloat64())
		}
		return v
	}
	dot := func(a, b []T) float64 {
		s := 0.0
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	stride, gw := c+3, 4*c+2
	m, g := rnd(36*stride), rnd(4*gw)
	for e := 0; e < 36; e++ { // the values between the rows are neither read nor written
		clear(m[e*stride+c : (e+1)*stride])
	}
	for i := 0; i < 4; i++ {
		clear(g[i*gw+4*c : (i+1)*gw])
	}
	y := make([]T, 4*gw)
	Winograd4Out(y, gw, m, stride, c)
	gm := make([]T, 36*stride)
	Winograd4Grad(gm, stride, g, gw, c)
	if a, b := dot(y, g), dot(m, gm); math.Abs(a-b) > tol*(1+math.Abs(a)) {
		t.Errorf("<Out(m), g> = %v, <m, Grad(g)> = %v", a, b)
	}
	var k, kt [9][]T
	var u, s [36][]T
	for i := range k {
		k[i], kt[i] = rnd(c), make([]T, c)
	}
	for e := range u {
		u[e], s[e] = make([]T, c), rnd(c)
	}
	Winograd4Kernel(&u, &k)
	Winograd4KernelT(&kt, &s)
	a, b := 0.0, 0.0
	for e := range u {
		a += dot(u[e], s[e])
	}
	for i := range k {
		b += dot(k[i], kt[i])
	}
	if math.Abs(a-b) > tol*(1+math.Abs(a)) {
		t.Errorf("<Kernel(k), s> = %v, <k, KernelT(s)> = %v", a, b)
	}
}
