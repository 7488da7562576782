package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/internal/cputime"
	"gorgonia.org/tensor"
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
	obj, err := NewObjective(Spec{Model: mlp, Tasks: tasks, Support: 5, Query: 5, Loss: MSELoss, InShape: []int{1}, OutDim: 1,
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
	cpu := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if err := obj.Losses(w, batch, weights, losses, grad); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu)*1e3/float64(b.N), "cpu-ms/op")
}

// cpuSeconds is the process's user and system CPU time so far: on a shared
// machine it shows an iteration's work better than wall time.
func cpuSeconds() float64 {
	d, _ := cputime.Process()
	return d.Seconds()
}

// BenchmarkSineSecondOrder is one exact second-order meta-iteration.
func BenchmarkSineSecondOrder(b *testing.B) { benchmarkSine(b, 1, false) }

// BenchmarkSineSecondOrderTwoSteps is an exact second-order meta-iteration
// through two inner steps.
func BenchmarkSineSecondOrderTwoSteps(b *testing.B) { benchmarkSine(b, 2, false) }

// BenchmarkSineFirstOrder is one first-order meta-iteration.
func BenchmarkSineFirstOrder(b *testing.B) { benchmarkSine(b, 1, true) }

// benchmarkOmniglot times one meta-iteration of MAML's Omniglot setting:
// 28x28x1 images, 4 blocks of 64 filters, 8 tasks, N-way 1-shot with 10
// query images per class, one inner step of size 0.1, float32 (the
// yardstick's setting, ../shared/peers/torch_conv4).
func benchmarkOmniglot(b *testing.B, ways int, firstOrder bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	const tasks, shots, queries = 8, 1, 10
	m, err := NewCNN(28, 28, 1, 64, 4, ways, false)
	if err != nil {
		b.Fatal(err)
	}
	obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: tasks,
		Support: ways * shots, Query: ways * queries, InShape: m.InShape(), OutDim: ways,
		Steps: 1, Alpha: 0.1, FirstOrder: firstOrder, MetaGradient: true, Dtype: tensor.Float32})
	if err != nil {
		b.Fatal(err)
	}
	batch := randomImages(rng, tasks, ways, shots, queries, 28, 28, 1)
	w := m.Init(rng)
	weights := make([]float64, tasks)
	for i := range weights {
		weights[i] = 1.0 / tasks
	}
	losses, acc, grad := make([]float64, tasks), make([]float64, tasks), make([]float64, len(w))
	// The first run allocates the buffers that later runs reuse.
	if err := obj.LossesMetric(w, batch, weights, losses, acc, grad); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := obj.LossesMetric(w, batch, weights, losses, acc, grad); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(obj.FLOPs()/1e9, "GFLOP/op")
}

// BenchmarkOmniglot5Way1ShotSecondOrder is one exact second-order
// meta-iteration of 5-way 1-shot Omniglot.
func BenchmarkOmniglot5Way1ShotSecondOrder(b *testing.B) { benchmarkOmniglot(b, 5, false) }

// BenchmarkOmniglot5Way1ShotFirstOrder is its first-order variant.
func BenchmarkOmniglot5Way1ShotFirstOrder(b *testing.B) { benchmarkOmniglot(b, 5, true) }

// BenchmarkOmniglot20Way1ShotSecondOrder is one exact second-order
// meta-iteration of 20-way 1-shot Omniglot.
func BenchmarkOmniglot20Way1ShotSecondOrder(b *testing.B) { benchmarkOmniglot(b, 20, false) }
