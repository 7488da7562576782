package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLossesWeighedMatchesLosses: weights chosen from the losses in the
// middle of one run give the losses and meta-gradient that Losses gives
// with those weights from the start, bit for bit, in second and first
// order; weigh sees the losses of the call's batch (a second batch rebinds
// them), and its error stops the call.
func TestLossesWeighedMatchesLosses(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 8, 8, 1}
	mlp, _ := NewMLP(sizes, Tanh)
	for _, firstOrder := range []bool{false, true} {
		obj, err := NewObjective(Spec{Model: mlp, Tasks: 5, Support: 4, Query: 6, Loss: MSELoss, InShape: []int{1}, OutDim: 1,
			Steps: 2, Alpha: 0.1, FirstOrder: firstOrder, MetaGradient: true})
		if err != nil {
			t.Fatal(err)
		}
		for call := range 3 {
			b := randomBatch(rng, 5, 4, 6, 1)
			w := randomParams(rng, obj.NumParams(), 0.5)
			losses, grad, weights := make([]float64, 5), make([]float64, len(w)), make([]float64, 5)
			var seen []float64
			weigh := func(l, wt []float64) error {
				seen = slices.Clone(l)
				for k, v := range l { // a weight that depends on the loss
					wt[k] = v * v / (1 + float64(k))
				}
				return nil
			}
			if err := obj.LossesWeighed(w, b, weigh, weights, losses, grad); err != nil {
				t.Fatal(err)
			}
			wantL, wantG := make([]float64, 5), make([]float64, len(w))
			if err := obj.Losses(w, b, weights, wantL, wantG); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seen, wantL) || !slices.Equal(losses, wantL) {
				t.Fatalf("first order %v, call %d: weigh saw %v, returned %v, Losses gives %v", firstOrder, call, seen, losses, wantL)
			}
			if !slices.Equal(grad, wantG) {
				t.Fatalf("first order %v, call %d: meta-gradient differs from Losses' with the same weights (rel. %g)",
					firstOrder, call, relErr(grad, wantG))
			}
		}
	}
	obj, err := NewObjective(Spec{Model: mlp, Tasks: 2, Support: 2, Query: 2, Loss: MSELoss, InShape: []int{1}, OutDim: 1,
		Steps: 1, Alpha: 0.1, MetaGradient: true})
	if err != nil {
		t.Fatal(err)
	}
	stop := errTest("stop")
	b, w := randomBatch(rng, 2, 2, 2, 1), randomParams(rng, obj.NumParams(), 0.5)
	err = obj.LossesWeighed(w, b, func(_, _ []float64) error { return stop }, make([]float64, 2), make([]float64, 2), make([]float64, len(w)))
	if err != stop {
		t.Fatalf("weigh's error: got %v", err)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
