package graph_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/metalearn"
	omniglot "github.com/trmaml/trmaml/tasks/omniglot/data"
)

// TestCNNOnOmniglot feeds real Omniglot instances, as the Omniglot task set
// lays them out, to the full-size CNN (28x28, 4 blocks; 8 filters to stay
// quick) and checks the losses, accuracies and exact second-order
// meta-gradient against the reference CNN's analytic ones (two steps, as
// the paper's Omniglot runs adapt with several), on the synthetic fixture
// and on the real archives when the machine has them.
func TestCNNOnOmniglot(t *testing.T) {
	t.Parallel()
	t.Run("fixture", func(t *testing.T) {
		fx := omniglottest.WriteFixture(t, 1)
		rel, err := omniglot.Describe(fx.Root)
		if err != nil {
			t.Fatal(err)
		}
		d, err := omniglot.Load(fx.Root, omniglot.Options{Size: 28, NoCache: true, Release: &rel})
		if err != nil {
			t.Fatal(err)
		}
		testCNNOnOmniglot(t, d)
	})
	t.Run("omniglot", func(t *testing.T) {
		d, err := omniglot.Load(omniglottest.Root(t), omniglot.Options{Size: 28})
		if err != nil {
			t.Fatal(err)
		}
		testCNNOnOmniglot(t, d)
	})
}

func testCNNOnOmniglot(t *testing.T, d *omniglot.Dataset) {
	const tasks, ways, shots, queries, steps, alpha = 2, 5, 1, 2, 2, 0.4
	set, err := omniglot.NewTaskSet(d, omniglot.Train, omniglot.Spec{Ways: ways, Shots: shots, Queries: queries, Rotate: true})
	if err != nil {
		t.Fatal(err)
	}
	if in, out := set.Dims(); in != 28*28 || out != ways {
		t.Fatalf("task set dims %d -> %d, want 784 -> %d", in, out, ways)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	b := metalearn.NewBatch(tasks, ways*shots, ways*queries, 28*28, ways)
	for r := 0; r < tasks; r++ {
		set.Sample(rng.IntN(set.Len()), rng, b, r)
	}

	cnn, err := graph.NewCNN(28, 28, 1, 8, 4, ways, false)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := graph.NewObjective(graph.Spec{Model: cnn, Loss: graph.SoftmaxCrossEntropy, Score: graph.Accuracy,
		Tasks: tasks, Support: ways * shots, Query: ways * queries, InShape: cnn.InShape(), OutDim: ways,
		Steps: steps, Alpha: alpha, MetaGradient: true})
	if err != nil {
		t.Fatal(err)
	}
	w := cnn.Init(rng)
	weights := []float64{0.4, 0.6}
	losses, acc, grad := make([]float64, tasks), make([]float64, tasks), make([]float64, len(w))
	if err := obj.LossesMetric(w, b, weights, losses, acc, grad); err != nil {
		t.Fatal(err)
	}
	ref := reference.CNN{H: 28, W: 28, C: 1, Filters: 8, Blocks: 4, Ways: ways, Eps: 1e-5}
	_, wantLosses, wantAcc := reference.CNNMetaObjective(ref, w, b, weights, alpha, steps)
	wantGrad := reference.CNNMetaGrad(ref, w, b, weights, alpha, steps)
	dl, dg := rel(losses, wantLosses), rel(grad, wantGrad)
	t.Logf("losses %v, accuracy %v; relative error: losses %.2g, meta-gradient %.2g", losses, acc, dl, dg)
	if dl > 1e-10 || dg > 1e-8 || !reflect.DeepEqual(acc, wantAcc) {
		t.Errorf("losses %v (reference %v), accuracy %v (%v), meta-gradient relative error %.3g", losses, wantLosses, acc, wantAcc, dg)
	}
}

func rel(got, want []float64) float64 {
	var d, n float64
	for i := range got {
		d += (got[i] - want[i]) * (got[i] - want[i])
		n += want[i] * want[i]
	}
	return math.Sqrt(d / math.Max(n, 1e-300))
}
