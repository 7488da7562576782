package graph

import (
	"math/rand/v2"
	"testing"
)

// benchmarkSine times one meta-iteration of the paper's sine setting: MLP
// 1-40-40-1 ReLU, 25 tasks, K = J = 5, the given number of inner steps.
func benchmarkSine(b *testing.B, steps int, firstOrder bool) {
	rng := rand.New(rand.NewPCG(1, 1))
	mlp, err := NewMLP([]int{1, 40, 40, 1}, ReLU)
	if err != nil {
		b.Fatal(err)
	}
	const tasks = 25
	obj, err := NewObjective(Spec{Model: mlp, Tasks: tasks, Support: 5, Query: 5, Loss: MSE, InShape: []int{1}, OutDim: 1,
		Steps: steps, Alpha: 1e-3, FirstOrder: firstOrder, MetaGradient: true})
	if err != nil {
		b.Fatal(err)
	}
	batch := randomBatch(rng, tasks, 5, 5, 1)
	w := randomParams(rng, obj.NumParams(), 0.1)
	weights := make([]float64, tasks)
	for i := range weights {
		weights[i] = 1.0 / tasks
	}
	losses, grad := make([]float64, tasks), make([]float64, len(w))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := obj.Losses(w, batch, weights, losses, grad); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSineSecondOrder is one exact second-order meta-iteration.
func BenchmarkSineSecondOrder(b *testing.B) { benchmarkSine(b, 1, false) }

// BenchmarkSineSecondOrderTwoSteps is an exact second-order meta-iteration
// through two inner steps.
func BenchmarkSineSecondOrderTwoSteps(b *testing.B) { benchmarkSine(b, 2, false) }

// BenchmarkSineFirstOrder is one first-order meta-iteration.
func BenchmarkSineFirstOrder(b *testing.B) { benchmarkSine(b, 1, true) }
