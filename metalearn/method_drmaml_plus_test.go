package metalearn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// kdeCDFByIntegration integrates the Gaussian kernel density of x with
// Scott's bandwidth from far below its support to v, by Simpson's rule.
func kdeCDFByIntegration(x []float64, v float64) float64 {
	n := float64(len(x))
	mean, ss := 0.0, 0.0
	for _, xi := range x {
		mean += xi / n
	}
	for _, xi := range x {
		ss += (xi - mean) * (xi - mean)
	}
	h := math.Sqrt(ss/(n-1)) * math.Pow(n, -0.2)
	pdf := func(u float64) float64 {
		s := 0.0
		for _, xi := range x {
			z := (u - xi) / h
			s += math.Exp(-z*z/2) / (h * math.Sqrt(2*math.Pi))
		}
		return s / n
	}
	lo := v
	for _, xi := range x {
		lo = math.Min(lo, xi-15*h)
	}
	const steps = 40000
	d := (v - lo) / steps
	s := pdf(lo) + pdf(v)
	for k := 1; k < steps; k++ {
		f := 2.0
		if k%2 == 1 {
			f = 4
		}
		s += f * pdf(lo+float64(k)*d)
	}
	return s * d / 3
}

// TestKDEQuantileAgainstIntegration: the quantile's CDF, integrated
// numerically from the density, is alpha, for samples of 5 to 100 losses and
// levels 0.1 to 0.95.
func TestKDEQuantileAgainstIntegration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	checked := 0
	defer func() {
		if checked < 10 {
			t.Errorf("only %d of 12 cases had a root in [min, max]", checked)
		}
	}()
	for _, n := range []int{5, 20, 100} {
		for _, alpha := range []float64{0.3, 0.5, 0.7, 0.95} {
			x := make([]float64, n)
			for i := range x {
				x[i] = math.Exp(rng.NormFloat64()) // skewed, like task losses
			}
			v, ok := KDEQuantile(x, alpha)
			if !ok {
				t.Fatalf("n=%d alpha=%v: no density", n, alpha)
			}
			top := math.Inf(-1)
			for _, xi := range x {
				top = math.Max(top, xi)
			}
			if kdeCDFByIntegration(x, top) < alpha {
				continue // no root in [min, max]: the fallback, tested below
			}
			checked++
			if got := kdeCDFByIntegration(x, v); math.Abs(got-alpha) > 1e-8 {
				t.Errorf("n=%d alpha=%v: CDF(%v) = %v by integration, want %v", n, alpha, v, got, alpha)
			}
		}
	}
}

// TestKDEQuantileFallback: a root outside [min, max] takes the first grid
// point where the normalised cumulative density reaches alpha (computed
// here independently); no density without spread or with a non-finite
// value.
func TestKDEQuantileFallback(t *testing.T) {
	t.Parallel()
	x := []float64{0, 1}
	alpha := 0.1 // CDF(0) = 0.28 > alpha: no root in [0, 1]
	v, ok := KDEQuantile(x, alpha)
	if !ok {
		t.Fatal("no density")
	}
	h := math.Sqrt(0.5) * math.Pow(2, -0.2)
	var pdf [1000]float64
	total := 0.0
	for k := range pdf {
		u := float64(k) / 999
		pdf[k] = math.Exp(-u*u/(2*h*h)) + math.Exp(-(u-1)*(u-1)/(2*h*h))
		total += pdf[k]
	}
	want, cum := -1.0, 0.0
	for k := range pdf {
		if cum += pdf[k]; cum/total >= alpha {
			want = float64(k) / 999
			break
		}
	}
	if math.Abs(v-want) > 1e-12 {
		t.Errorf("fallback quantile %v, want %v", v, want)
	}
	for _, bad := range [][]float64{{2, 2, 2}, {1}, {1, math.NaN()}, {1, math.Inf(1)}} {
		if _, ok := KDEQuantile(bad, 0.5); ok {
			t.Errorf("KDEQuantile(%v) formed a density", bad)
		}
	}
}

// TestDRMAMLPlusWeights: every loss above the KDE quantile weighs
// 1/((1-alpha) B), the others 0; equal losses fall back to DR-MAML's tail
// with the same weight, counted.
func TestDRMAMLPlusWeights(t *testing.T) {
	t.Parallel()
	m := DRMAMLPlus{Alpha: 0.7}.New().(*drmamlPlusRun)
	if _, err := m.Init([]float64{1}, 6); err != nil {
		t.Fatal(err)
	}
	losses := []float64{0.1, 3, 0.2, 0.15, 2, 0.3}
	v, _ := KDEQuantile(losses, 0.7)
	w := make([]float64, 6)
	m.Weigh(nil, nil, losses, w)
	for i, l := range losses {
		want := 0.0
		if l > v {
			want = 1 / ((1 - m.set.Alpha) * 6) // in float64, as Weigh computes it
		}
		if w[i] != want {
			t.Errorf("loss %v (VaR %v): weight %v, want %v", l, v, w[i], want)
		}
	}
	m.Weigh(nil, nil, []float64{1, 1, 1, 1, 1, 1}, w)
	n := 0
	for _, x := range w {
		if x != 0 {
			n++
		}
	}
	if n != 2 || m.Fallbacks() != 1 {
		t.Errorf("equal losses: %d weighted (want ceil(6 x 0.3) = 2), %d fallbacks (want 1)", n, m.Fallbacks())
	}
}
