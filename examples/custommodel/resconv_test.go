package custommodel

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/graph/gradcheck"
	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// images fills a batch of classification tasks: every class a random image,
// every point that image plus noise, one-hot labels.
func images(rng *rand.Rand, tasks, ways, shots, queries, pixels int) *metalearn.Batch {
	b := metalearn.NewBatch(tasks, ways*shots, ways*queries, pixels, ways)
	for t := 0; t < tasks; t++ {
		protos := make([][]float64, ways)
		for c := range protos {
			protos[c] = make([]float64, pixels)
			for i := range protos[c] {
				protos[c][i] = rng.NormFloat64()
			}
		}
		sx, sy, qx, qy := b.Row(t)
		for _, set := range []struct{ x, y []float64 }{{sx, sy}, {qx, qy}} {
			for p := 0; p < len(set.y)/ways; p++ {
				c := p % ways
				set.y[p*ways+c] = 1
				for i := 0; i < pixels; i++ {
					set.x[p*pixels+i] = protos[c][i] + 0.7*rng.NormFloat64()
				}
			}
		}
	}
	return b
}

func relErr(got, want []float64) float64 {
	var d, n float64
	for i := range got {
		d += (got[i] - want[i]) * (got[i] - want[i])
		n += want[i] * want[i]
	}
	return math.Sqrt(d / math.Max(n, 1e-300))
}

// TestResConvMetaGradient checks the second-order MAML meta-gradient of the
// user model, one and two inner steps, against central differences of the
// full two-level objective (the weighted query losses after adaptation,
// evaluated by the same graph without its gradient), and that first order
// differs clearly, so dropping second-order terms cannot pass.
func TestResConvMetaGradient(t *testing.T) {
	t.Parallel()
	const tasks, ways, shots, queries = 2, 2, 2, 3
	for _, steps := range []int{1, 2} {
		rng := rand.New(rand.NewPCG(uint64(steps), 17))
		m := ResConv{H: 6, W: 5, C: 1, Filters: 3, Ways: ways}
		b := images(rng, tasks, ways, shots, queries, m.H*m.W*m.C)
		weights := []float64{0.6, 1.4}
		build := func(first, grad bool) *graph.Objective {
			obj, err := graph.NewObjective(graph.Spec{Model: m, Loss: graph.SoftmaxCrossEntropy, Score: graph.Accuracy,
				Tasks: tasks, Support: ways * shots, Query: ways * queries, InShape: []int{m.H, m.W, m.C}, OutDim: ways,
				Inner: graph.InnerSGD{Steps: steps, Alpha: 0.3, FirstOrder: first}, MetaGradient: grad})
			if err != nil {
				t.Fatal(err)
			}
			return obj
		}
		value := build(false, false)
		w := make([]float64, value.NumParams())
		for i := range w {
			w[i] = 0.4 * rng.NormFloat64()
		}
		losses := make([]float64, tasks)
		total := func(w []float64) float64 {
			if err := value.Losses(w, b, weights, losses, nil); err != nil {
				t.Fatal(err)
			}
			return weights[0]*losses[0] + weights[1]*losses[1]
		}
		want := gradcheck.CentralDiff(total, w, 1e-6)
		grads := map[bool][]float64{}
		for _, first := range []bool{false, true} {
			grads[first] = make([]float64, len(w))
			if err := build(first, true).Losses(w, b, weights, losses, grads[first]); err != nil {
				t.Fatal(err)
			}
		}
		d, orders := relErr(grads[false], want), relErr(grads[true], want)
		t.Logf("%d steps: second-order relative error %.2g, first order off by %.2g", steps, d, orders)
		if d > 1e-6 {
			t.Errorf("%d steps: meta-gradient relative error %.3g > 1e-6", steps, d)
		}
		if orders < 1e-2 {
			t.Errorf("%d steps: test problem too weak, first order is only %.2g off", steps, orders)
		}
	}
}

// softmaxHead is a user model that ends in gorgonia's SoftMax, whose
// derivative is wrong when differentiated a second time.
type softmaxHead struct{ in, out int }

func (m softmaxHead) ParamShapes() []tensor.Shape { return []tensor.Shape{{m.in, m.out}} }

func (m softmaxHead) Forward(x *gorgonia.Node, p gorgonia.Nodes) (*gorgonia.Node, error) {
	z, err := graph.MatMul(x, p[0], false, false)
	if err != nil {
		return nil, err
	}
	s := z.Shape()
	if z, err = graph.Reshape(z, s[0]*s[1], s[2]); err != nil {
		return nil, err
	}
	if z, err = gorgonia.SoftMax(z); err != nil {
		return nil, err
	}
	return graph.Reshape(z, s...)
}

// TestUnsafeOpRefused checks that a user model built on a gorgonia op with
// a wrong nested derivative gets a clear error naming the op instead of a
// wrong meta-gradient.
func TestUnsafeOpRefused(t *testing.T) {
	t.Parallel()
	_, err := graph.NewObjective(graph.Spec{Model: softmaxHead{3, 2}, Loss: graph.MSELoss, Tasks: 2, Support: 3, Query: 3,
		InShape: []int{3}, OutDim: 2, Inner: graph.InnerSGD{Steps: 1, Alpha: 0.1}, MetaGradient: true})
	var unsupported *graph.UnsupportedOpError
	if !errors.As(err, &unsupported) || !unsupported.Nested || !strings.Contains(err.Error(), "SoftMax") {
		t.Fatalf("second order through gorgonia.SoftMax: error %v, want an UnsupportedOpError naming SoftMax", err)
	}
}
