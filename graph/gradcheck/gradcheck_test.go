package gradcheck_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/graph/gradcheck"
	"github.com/trmaml/trmaml/metalearn"
)

// TestCentralDiffQuadratic: central differences are exact on a quadratic,
// whose gradient is known in closed form.
func TestCentralDiffQuadratic(t *testing.T) {
	w := []float64{1, -2, 0.5}
	f := func(w []float64) float64 { return 3*w[0]*w[0] + w[0]*w[1] - 2*w[2]*w[2] + w[1] }
	got := gradcheck.CentralDiff(f, w, 1e-3)
	want := []float64{6*w[0] + w[1], w[0] + 1, -4 * w[2]}
	if e := gradcheck.RelErr(got, want); e > 1e-9 {
		t.Errorf("gradient %v, want %v (relative error %g)", got, want, e)
	}
}

func sine(rng *rand.Rand, tasks, k, j int) *metalearn.Batch {
	b := metalearn.NewBatch(tasks, k, j, 1, 1)
	for t := range tasks {
		amp, phase := 0.1+4.9*rng.Float64(), math.Pi*rng.Float64()
		sx, sy, qx, qy := b.Row(t)
		for _, set := range [][2][]float64{{sx, sy}, {qx, qy}} {
			for p := range set[0] {
				set[0][p] = 10*rng.Float64() - 5
				set[1][p] = amp * math.Sin(set[0][p]-phase)
			}
		}
	}
	return b
}

// TestMetaGradient: the exact second-order meta-gradient of MAML on an MLP
// passes, the first-order approximation (a different gradient of the same
// objective) fails: the check can tell them apart.
func TestMetaGradient(t *testing.T) {
	mlp, err := graph.NewMLP([]int{1, 6, 1}, graph.Tanh)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := sine(rng, 2, 4, 5)
	w := make([]float64, 19)
	for i := range w {
		w[i] = 0.7 * rng.NormFloat64()
	}
	for _, first := range []bool{false, true} {
		spec := graph.Spec{Model: mlp, Loss: graph.MSELoss, Tasks: 2, Support: 4, Query: 5, InShape: []int{1}, OutDim: 1,
			Steps: 2, Alpha: 0.05, FirstOrder: first}
		r, err := gradcheck.MetaGradient(spec, w, b, []float64{0.3, 1.7}, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if first != (r.RelErr > 1e-3) || !first && r.RelErr > 1e-6 {
			t.Errorf("first order %v: relative error %.3g", first, r.RelErr)
		}
	}
	if _, err := gradcheck.MetaGradient(graph.Spec{Model: mlp, Loss: graph.MSELoss, Tasks: 2, Support: 4, Query: 5, InShape: []int{1},
		OutDim: 1, Steps: 1, Alpha: 0.1}, w[:5], b, []float64{1, 1}, 1e-6); err == nil {
		t.Error("a parameter vector of the wrong length was accepted")
	}
}
