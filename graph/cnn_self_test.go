package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/metalearn"
)

func randomImagesTmp(rng *rand.Rand, tasks, ways, shots, queries, h, w, c int) *metalearn.Batch {
	in := h * w * c
	b := metalearn.NewBatch(tasks, ways*shots, ways*queries, in, ways)
	fill := func(x, y []float64, per int) {
		for p := 0; p < ways*per; p++ {
			y[p*ways+p%ways] = 1
			for i := 0; i < in; i++ {
				x[p*in+i] = rng.Float64()
			}
		}
	}
	for t := 0; t < tasks; t++ {
		sx, sy, qx, qy := b.Row(t)
		fill(sx, sy, shots)
		fill(qx, qy, queries)
	}
	return b
}

func TestCNNSelfFD(t *testing.T) {
	for _, steps := range []int{1, 2} {
		for _, abn := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(3, 41))
			m, _ := NewCNN(6, 5, 1, 3, 2, 2, abn)
			b := randomImagesTmp(rng, 2, 2, 2, 3, 6, 5, 1)
			w := m.Init(rng)
			for i := range w {
				w[i] += 0.2 * rng.NormFloat64()
			}
			weights := []float64{0.7, 1.6}
			spec := Spec{Model: m, Loss: SoftmaxCrossEntropy, Tasks: 2, Support: 4, Query: 6, InShape: m.InShape(), OutDim: 2, Steps: steps, Alpha: 0.4}
			val, err := NewObjective(spec)
			if err != nil {
				t.Fatal(err)
			}
			losses := make([]float64, 2)
			f := func(w []float64) float64 {
				if err := val.Losses(w, b, nil, losses, nil); err != nil {
					t.Fatal(err)
				}
				return weights[0]*losses[0] + weights[1]*losses[1]
			}
			want := reference.CentralDiff(f, w, 1e-6)
			grads := map[bool][]float64{}
			for _, first := range []bool{false, true} {
				spec.MetaGradient, spec.FirstOrder = true, first
				obj, err := NewObjective(spec)
				if err != nil {
					t.Fatal(err)
				}
				grad := make([]float64, len(w))
				for r := 0; r < 2; r++ {
					if err := obj.Losses(w, b, weights, losses, grad); err != nil {
						t.Fatal(err)
					}
				}
				grads[first] = grad
			}
			t.Logf("steps %d adaptBN %v: second vs FD %.3g; first vs FD %.3g", steps, abn, relErr(grads[false], want), relErr(grads[true], want))
		}
	}
}
