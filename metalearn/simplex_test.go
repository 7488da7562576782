package metalearn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteSimplex projects q onto the simplex by trying every support set S:
// on S the projection is q_S + (1 - sum q_S)/|S|, zero elsewhere; the
// feasible candidate nearest to q is the answer.
func bruteSimplex(q []float64) []float64 {
	n := len(q)
	var best []float64
	bestDist := math.Inf(1)
	for mask := 1; mask < 1<<n; mask++ {
		sum, size := 0.0, 0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				sum += q[i]
				size++
			}
		}
		p := make([]float64, n)
		ok := true
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				if p[i] = q[i] + (1-sum)/float64(size); p[i] < 0 {
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		d := 0.0
		for i := range q {
			d += (p[i] - q[i]) * (p[i] - q[i])
		}
		if d < bestDist {
			best, bestDist = p, d
		}
	}
	return best
}

func TestProjectSimplex(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	cases := [][]float64{
		{0.2, 0.3, 0.5},   // already on the simplex
		{1, 1, 1},         // uniform after the shift
		{5, -1, 0},        // a vertex
		{-1, -2, -3, -4},  // all negative
		{0.5, 0.5, 10, 0}, // one dominant
		{1e-12, 0, 0},
	}
	for i := 0; i < 200; i++ {
		n := 1 + rng.IntN(7)
		q := make([]float64, n)
		for j := range q {
			q[j] = 3 * rng.NormFloat64()
		}
		cases = append(cases, q)
	}
	for _, q := range cases {
		p := make([]float64, len(q))
		ProjectSimplex(p, q, make([]float64, len(q)))
		sum := 0.0
		for _, v := range p {
			if v < 0 {
				t.Fatalf("Proj(%v) = %v has a negative entry", q, p)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("Proj(%v) = %v sums to %v", q, p, sum)
		}
		want := bruteSimplex(q)
		for j := range p {
			if math.Abs(p[j]-want[j]) > 1e-12 {
				t.Fatalf("Proj(%v) = %v, brute force %v", q, p, want)
			}
		}
		again := make([]float64, len(p))
		ProjectSimplex(again, p, make([]float64, len(p)))
		for j := range p {
			if math.Abs(again[j]-p[j]) > 1e-15 {
				t.Fatalf("projection not idempotent: %v then %v", p, again)
			}
		}
	}
}

func TestProjectBall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		w      []float64
		radius float64
		want   []float64
	}{
		{[]float64{3, 4}, 1, []float64{0.6, 0.8}},
		{[]float64{0.3, 0.4}, 1, []float64{0.3, 0.4}},
		{[]float64{3, 4}, 0, []float64{3, 4}},
	}
	for _, c := range cases {
		w := append([]float64(nil), c.w...)
		ProjectBall(w, c.radius)
		for i := range w {
			if math.Abs(w[i]-c.want[i]) > 1e-15 {
				t.Errorf("ProjectBall(%v, %v) = %v, want %v", c.w, c.radius, w, c.want)
			}
		}
	}
}

// TestAdamMatchesTensorFlowForm checks two steps against the hand-computed
// TensorFlow-1 update.
func TestAdamMatchesTensorFlowForm(t *testing.T) {
	t.Parallel()
	o := NewAdam(0.1, 1)
	w := []float64{1}
	o.Step(w, []float64{2})
	// t=1: m = 0.2, v = 0.004, lr_t = 0.1 sqrt(0.001)/0.1; w -= lr_t m/(sqrt(v)+eps).
	want := 1 - 0.1*math.Sqrt(1-0.999)/(1-0.9)*0.2/(math.Sqrt(0.004)+1e-8)
	if math.Abs(w[0]-want) > 1e-15 {
		t.Fatalf("after one step w = %v, want %v", w[0], want)
	}
}

// TestProjectSimplexExtremes: finite entries of any size, where the plain
// algorithm returned its input (an entry >= 2^53: v + (1 - v) rounds to 0) or
// overflowed (sums beyond MaxFloat64).
func TestProjectSimplexExtremes(t *testing.T) {
	t.Parallel()
	const big = math.MaxFloat64
	for _, tc := range []struct{ q, want []float64 }{
		{[]float64{1 << 53, 0}, []float64{1, 0}},
		{[]float64{1 << 60, 1<<60 - 1024}, []float64{1, 0}},
		{[]float64{1 << 54, 1 << 54, 1<<54 + 4}, []float64{0, 0, 1}},
		{[]float64{1 << 54, 1<<54 + 1<<2}, []float64{0, 1}},
		{[]float64{1e300, 1e300}, []float64{0.5, 0.5}},
		{[]float64{big, big, big, big}, []float64{0.25, 0.25, 0.25, 0.25}},
		{[]float64{big, -big}, []float64{1, 0}},
		{[]float64{-big, -big}, []float64{0.5, 0.5}},
		{[]float64{-1e300, -1e300, -1e300, -1e300}, []float64{0.25, 0.25, 0.25, 0.25}},
		{[]float64{0.5, -1e308, -1e308}, []float64{1, 0, 0}},
		{[]float64{0.25, 0, -big, -big, -big}, []float64{0.625, 0.375, 0, 0, 0}},
		{[]float64{-1 << 21, -1<<21 + 0.5}, []float64{0.25, 0.75}},
		{[]float64{1<<40 + 0.25, 1 << 40}, []float64{0.625, 0.375}},
		{[]float64{7}, []float64{1}},
	} {
		got := make([]float64, len(tc.q))
		ProjectSimplex(got, tc.q, make([]float64, len(tc.q)))
		sum := 0.0
		for i := range got {
			sum += got[i]
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("ProjectSimplex(%v) = %v, want %v", tc.q, got, tc.want)
				break
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("ProjectSimplex(%v) sums to %v", tc.q, sum)
		}
	}
	// Large random inputs agree with the brute force on their exact
	// differences from the maximum, those below -2 clamped (they project to 0
	// either way; unclamped, their squares swamp the brute force's distances).
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100; i++ {
		n := 1 + rng.IntN(6)
		base := math.Ldexp(1, 21+rng.IntN(900)) * float64(1-2*rng.IntN(2))
		q, d := make([]float64, n), make([]float64, n)
		for j := range q {
			q[j] = base + math.Ldexp(float64(rng.IntN(16)), -2)*math.Max(1, math.Abs(base)*0x1p-50)
		}
		hi := slices.Max(q)
		for j := range q {
			d[j] = math.Max(q[j]-hi, -2)
		}
		want := bruteSimplex(d)
		got := make([]float64, n)
		ProjectSimplex(got, q, make([]float64, n))
		for j := range got {
			if math.Abs(got[j]-want[j]) > 1e-9 {
				t.Fatalf("ProjectSimplex(%v) = %v, brute force on q - max: %v", q, got, want)
			}
		}
	}
}
