package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMul checks MatMulRows and MatMulDots (the vector kernels where
// built) against a triple loop over the definitions, for the sine MLP's
// shapes, transposed A, padded strides and sizes that leave tails of
// every width, into an output holding stale values.
func TestMatMul(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	shapes := [][3]int{{5, 40, 40}, {40, 5, 40}, {5, 1, 40}, {1, 5, 40}, {5, 40, 1}, {1, 1, 1}, {7, 9, 13}, {4, 8, 8}, {3, 17, 4}, {9, 3, 23}, {2, 0, 3}}
	for _, s := range shapes {
		m, k, n := s[0], s[1], s[2]
		for _, trans := range []bool{false, true} {
			for _, pad := range []int{0, 3} {
				t.Run(fmt.Sprintf("%dx%dx%d/transA=%v/pad=%d", m, k, n, trans, pad), func(t *testing.T) {
					// A (m x k) stored as rows of k+pad, or transposed as rows of m+pad.
					ars, acs := k+pad, 1
					a := vec(m*(k+pad) + 1)
					if trans {
						ars, acs = 1, m+pad
						a = vec(k*(m+pad) + 1)
					}
					ldb := n + pad
					b := vec(k*ldb + 1)
					want := make([]float64, m*n)
					for i := range m {
						for j := range n {
							for p := range k {
								want[i*n+j] += a[i*ars+p*acs] * b[p*ldb+j]
							}
						}
					}
					got := vec(m * n)
					MatMulRows(m, k, n, a, ars, acs, b, ldb, got)
					compare(t, "MatMulRows", got, want)
					if trans {
						return
					}
					// The same product as dots with rows of Bᵀ (n x k).
					bt := vec(n*(k+pad) + 1)
					for p := range k {
						for j := range n {
							bt[j*(k+pad)+p] = b[p*ldb+j]
						}
					}
					got = vec(m * n)
					MatMulDots(m, k, n, a, ars, bt, k+pad, got)
					compare(t, "MatMulDots", got, want)
				})
			}
		}
	}
}

func compare(t *testing.T, name string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v (SIMD %v)", name, i, got[i], want[i], MatMulSIMD())
		}
	}
}

// TestFloat64MatchesPlain runs the float64 loops in use (AVX-512 where
// built) and the plain ones on the same inputs, with tails, zeros of both
// signs and NaNs of both signs, and wants the same bits.
func TestFloat64MatchesPlain(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 5, 8, 40, 203} {
		x, y, v := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i], v[i] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
			switch i % 11 {
			case 3:
				x[i] = math.Copysign(0, -1)
			case 4:
				x[i] = 0
			case 5:
				x[i] = math.NaN()
			case 6:
				x[i] = math.Copysign(math.NaN(), -1)
			}
		}
		cases := map[string]func(k kernels64, dst []float64){
			"addTo":     func(k kernels64, dst []float64) { copy(dst, y); k.addTo(dst, x) },
			"relu":      func(k kernels64, dst []float64) { k.relu(dst, x) },
			"mask":      func(k kernels64, dst []float64) { k.mask(dst, x, v) },
			"addScaled": func(k kernels64, dst []float64) { k.addScaled(dst, x, y, -1e-3) },
			"scale":     func(k kernels64, dst []float64) { k.scale(dst, x, 0.2) },
		}
		for name, run := range cases {
			got, want := make([]float64, n), make([]float64, n)
			run(impl64, got)
			run(plain64, want)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Errorf("%s, n=%d: element %d (x %v) = %v, want %v", name, n, i, x[i], got[i], want[i])
					break
				}
			}
		}
	}
}
