package metalearn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTailMeanRockafellarUryasev: TailMean equals the minimum over t of
// t + mean((v - t)_+) / (1-alpha) (Rockafellar and Uryasev's formula, whose
// minimum is at one of the values), for losses; for a score, the mirror
// image.
func TestTailMeanRockafellarUryasev(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 200 {
		n := 1 + rng.IntN(30)
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Round(rng.ExpFloat64()*4) / 4 // ties
		}
		alpha := []float64{0.05, 0.3, 0.5, 0.7, 0.9, 0.99}[trial%6]
		want := math.Inf(1)
		for _, c := range v {
			s := 0.0
			for _, x := range v {
				s += math.Max(x-c, 0)
			}
			want = math.Min(want, c+s/float64(n)/(1-alpha))
		}
		if got := TailMean(v, alpha, MSE); math.Abs(got-want) > 1e-12*math.Max(1, want) {
			t.Fatalf("n=%d alpha=%v %v: TailMean %v, want %v", n, alpha, v, got, want)
		}
		neg := make([]float64, n)
		for i, x := range v {
			neg[i] = -x
		}
		if got := TailMean(neg, alpha, Accuracy); math.Abs(got+want) > 1e-12*math.Max(1, want) {
			t.Fatalf("score direction: %v, want %v", got, -want)
		}
	}
}
