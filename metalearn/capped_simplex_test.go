package metalearn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteCapped projects q onto {0 <= p_i <= u, sum p = 1} by trying every
// assignment of the entries to zero, capped and middle: with the middle set M
// non-empty, the KKT conditions fix the threshold t = (|capped| u + sum_M q
// - 1)/|M|, and the assignment is the projection if every entry then falls in
// its part (the projection is unique, so the first consistent one is it).
func bruteCapped(q []float64, u float64) []float64 {
	n := len(q)
	parts := make([]int, n) // 0 zero, 1 middle, 2 capped
	for code := 0; code < int(math.Pow(3, float64(n))); code++ {
		c, caps, mid, sum := code, 0, 0, 0.0
		for i := range parts {
			parts[i], c = c%3, c/3
			switch parts[i] {
			case 1:
				mid++
				sum += q[i]
			case 2:
				caps++
			}
		}
		if mid == 0 {
			continue
		}
		t := (float64(caps)*u + sum - 1) / float64(mid)
		const slack = 1e-12
		ok := true
		for i, v := range q {
			switch parts[i] {
			case 0:
				ok = ok && v-t <= slack
			case 1:
				ok = ok && v-t >= -slack && v-t <= u+slack
			case 2:
				ok = ok && v-t >= u-slack
			}
		}
		if ok {
			p := make([]float64, n)
			for i, v := range q {
				p[i] = math.Min(math.Max(v-t, 0), u)
			}
			return p
		}
	}
	return nil
}

// checkProjection verifies the optimality certificate of p = Proj(q) onto the
// capped simplex: p is feasible and p_i = clip(q_i - t, 0, u) for one t.
func checkProjection(t *testing.T, q, p []float64, u, tol float64) {
	t.Helper()
	sum := 0.0
	for _, v := range p {
		if v < 0 || v > u || math.IsNaN(v) {
			t.Fatalf("Proj(%v, cap %v) = %v is infeasible", q, u, p)
		}
		sum += v
	}
	if math.Abs(sum-1) > tol {
		t.Fatalf("Proj(%v, cap %v) = %v sums to %v", q, u, p, sum)
	}
	// t lies in [lo, hi]: below q_i for positive entries and above q_i - u for
	// entries under the cap; a middle entry pins it.
	lo, hi := math.Inf(-1), math.Inf(1)
	for i, v := range p {
		switch {
		case v == 0:
			lo = math.Max(lo, q[i])
		case v == u:
			hi = math.Min(hi, q[i]-u)
		default:
			lo = math.Max(lo, q[i]-v)
			hi = math.Min(hi, q[i]-v)
		}
	}
	scale := 1.0
	for _, v := range q {
		scale = math.Max(scale, math.Abs(v))
	}
	if lo > hi+tol*scale {
		t.Fatalf("Proj(%v, cap %v) = %v has no common threshold: [%v, %v]", q, u, p, lo, hi)
	}
}

func TestProjectCappedSimplexBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	type tc struct {
		q []float64
		u float64
	}
	cases := []tc{
		{[]float64{0.2, 0.3, 0.5}, 0.5},     // feasible already
		{[]float64{1, 1, 1, 1}, 0.3},        // ties: uniform
		{[]float64{5, 5, 0, 0}, 0.3},        // tied top pair capped
		{[]float64{5, 5, 5, 0, 0}, 0.25},    // three capped, remainder in a tie
		{[]float64{3, -1, 2, 2, 2}, 0.4},    // ties in the middle
		{[]float64{-1, -2, -3, -4}, 0.3},    // all negative
		{[]float64{1e-12, 0, 0, 0}, 0.3},    // tiny differences
		{[]float64{1e5, -1e5, 0, 3}, 0.35},  // wide spread
		{[]float64{0.5, 0.5, 10, 0}, 0.26},  // one dominant, cap near 1/n
		{[]float64{0.1, 0.2, 0.3, 0.4}, 1},  // inactive cap: plain simplex
		{[]float64{7, 1, 1, 1, 1, 1}, 0.17}, // cap just above 1/n
	}
	for i := 0; i < 400; i++ {
		n := 1 + rng.IntN(6)
		q := make([]float64, n)
		for j := range q {
			q[j] = 2 * rng.NormFloat64()
			if rng.IntN(4) == 0 && j > 0 {
				q[j] = q[rng.IntN(j)] // ties
			}
		}
		u := 1/float64(n) + rng.Float64()*(1-1/float64(n))
		cases = append(cases, tc{q, u})
	}
	for _, c := range cases {
		if float64(len(c.q))*c.u <= 1 {
			continue
		}
		p := make([]float64, len(c.q))
		ProjectCappedSimplex(p, c.q, c.u, make([]float64, len(c.q)))
		checkProjection(t, c.q, p, c.u, 1e-12)
		want := bruteCapped(c.q, c.u)
		if want == nil {
			t.Fatalf("brute force found no projection of %v (cap %v)", c.q, c.u)
		}
		for j := range p {
			if math.Abs(p[j]-want[j]) > 1e-9 {
				t.Fatalf("Proj(%v, cap %v) = %v, brute force %v", c.q, c.u, p, want)
			}
		}
	}
}

// TestProjectCappedSimplexExtremes: huge entries (>= 2^53, where adding a
// threshold of order 1 is lost), tiny ones, and large n.
func TestProjectCappedSimplexExtremes(t *testing.T) {
	t.Parallel()
	big := math.Ldexp(1, 60)
	cases := []struct {
		q, want []float64
		u       float64
	}{
		// Shifted by the maximum, the top three entries are 0, -512 and
		// -1536: two are capped at 0.4, the third takes the remaining 0.2.
		{[]float64{big, big + 512, big - 1024, -5, 0.3}, []float64{0.4, 0.4, 0.2, 0, 0}, 0.4},
		{[]float64{big, big, big, big}, []float64{0.25, 0.25, 0.25, 0.25}, 0.5},
		{[]float64{math.Ldexp(1, 53), math.Ldexp(1, 53) + 2, 0}, []float64{0.5, 0.5, 0}, 0.5},
		{[]float64{-big, 0, 1}, []float64{0, 0.5, 0.5}, 0.5},
		{[]float64{1e-300, 2e-300, 0, 5e-324}, []float64{0.25, 0.25, 0.25, 0.25}, 0.3},
		{[]float64{1e300, -1e300, 0}, []float64{0.6, 0, 0.4}, 0.6},
		// A huge entry capped, the rest of the mass shared by small ones.
		{[]float64{big, 0.3, 0}, []float64{0.6, 0.35, 0.05}, 0.6},
		{[]float64{math.Ldexp(1, 53), 1e-300, 0, -1e-300}, []float64{0.5, 1.0 / 6, 1.0 / 6, 1.0 / 6}, 0.5},
	}
	for _, c := range cases {
		p := make([]float64, len(c.q))
		ProjectCappedSimplex(p, c.q, c.u, make([]float64, len(c.q)))
		for j := range p {
			if math.Abs(p[j]-c.want[j]) > 1e-15 {
				t.Errorf("Proj(%v, cap %v) = %v, want %v", c.q, c.u, p, c.want)
				break
			}
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{100, 1000, 10000} {
		q := make([]float64, n)
		for j := range q {
			q[j] = rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(7)-3))
		}
		p := make([]float64, n)
		u := 10 / float64(n)
		ProjectCappedSimplex(p, q, u, make([]float64, n))
		checkProjection(t, q, p, u, 1e-10)
	}
}

// TestProjectCappedSimplexLimits: level a = 1 (cap 1/n) gives the uniform
// distribution, level 1/n (cap 1) is exactly ProjectSimplex, and a cap below
// 1 that does not bind agrees with ProjectSimplex.
func TestProjectCappedSimplexLimits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 300; n++ {
		q := make([]float64, n)
		for j := range q {
			q[j] = rng.NormFloat64()
		}
		p := make([]float64, n)
		scratch := make([]float64, n)
		ProjectCappedSimplex(p, q, 1/(1*float64(n)), scratch)
		for j := range p {
			if math.Abs(p[j]-1/float64(n)) > 1e-15 {
				t.Fatalf("n = %d, level 1: p = %v, want uniform", n, p)
			}
		}
		want := make([]float64, n)
		ProjectSimplex(want, q, make([]float64, n))
		ProjectCappedSimplex(p, q, 1/((1/float64(n))*float64(n)), scratch)
		if !slices.Equal(p, want) {
			t.Fatalf("n = %d, level 1/n: %v, ProjectSimplex %v", n, p, want)
		}
		if top := slices.Max(want); top < 0.999 {
			ProjectCappedSimplex(p, q, (1+top)/2, scratch)
			for j := range p {
				if math.Abs(p[j]-want[j]) > 1e-12 {
					t.Fatalf("n = %d, inactive cap %v: %v, ProjectSimplex %v", n, (1+top)/2, p, want)
				}
			}
		}
	}
}

func BenchmarkProjectCappedSimplex(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	n := 100
	q, p, scratch := make([]float64, n), make([]float64, n), make([]float64, n)
	for j := range q {
		q[j] = 0.01 + 0.001*rng.NormFloat64()
	}
	for i := 0; i < b.N; i++ {
		ProjectCappedSimplex(p, q, 0.1, scratch)
	}
}
