package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// composedCNN is graph.CNN's paper network (max pooling, batch norm)
// written with the standalone layers a user composes: Conv (stride 1,
// padding 1, bias), BatchNorm, MaxPool2, ReLU, Flatten and Linear. It has
// CNN's parameters and adapted flags, but none of the fused block ops (a
// field, not an embedded CNN, so that none of CNN's own passes is promoted).
type composedCNN struct{ cnn graph.CNN }

func (m composedCNN) ParamShapes() []tensor.Shape { return m.cnn.ParamShapes() }
func (m composedCNN) Adapted() []bool             { return m.cnn.Adapted() }

func (m composedCNN) Forward(x *gorgonia.Node, p gorgonia.Nodes) (*gorgonia.Node, error) {
	n := x.Shape()[1]
	cnn := m.cnn
	h, w, c := cnn.H, cnn.W, cnn.C
	z := x
	for l := range cnn.Blocks {
		k := p[4*l : 4*l+4]
		y, err := graph.Conv(z, k[0], k[1], h, w, c, 1, 1)
		if err != nil {
			return nil, err
		}
		if y, err = graph.BatchNorm(y, k[2], k[3], cnn.Eps); err != nil {
			return nil, err
		}
		if y, err = graph.MaxPool2(y, h, w); err != nil {
			return nil, err
		}
		if z, err = graph.ReLU.Apply(y); err != nil {
			return nil, err
		}
		h, w, c = h/2, w/2, cnn.Filters
	}
	f, err := graph.Flatten(z, n)
	if err != nil {
		return nil, err
	}
	head := p[4*cnn.Blocks:]
	return graph.Linear(f, head[0], head[1])
}

// TestFusedBlocksEqualComposedLayers: the CNN's fused blocks (bias, batch
// norm and max-pool in one op; the whole first block as one op in
// evaluation and in the once-differentiated query pass) give the losses,
// the exact second-order meta-gradient and the evaluation losses of the
// same network composed from the standalone layers, to 1e-9 in float64
// and 1e-4 in float32, on one- and three-channel odd-sized images.
func TestFusedBlocksEqualComposedLayers(t *testing.T) {
	t.Parallel()
	for ci, s := range []graph.Conv4{
		{Filters: 6, Blocks: 2, Channels: 1, Height: 11, Width: 10, Pool: graph.PoolMax, BatchNorm: graph.BatchNormFixed},
		{Filters: 4, Blocks: 2, Channels: 3, Height: 9, Width: 8, Pool: graph.PoolMax, BatchNorm: graph.BatchNormAdapt},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%d channels, batch norm %s, %v", s.Channels, s.BatchNorm, dt), func(t *testing.T) {
				const tasks, ways, shots, queries = 2, 3, 2, 2
				fused, err := s.CNN(ways)
				if err != nil {
					t.Fatal(err)
				}
				tol := 1e-9
				if dt == tensor.Float32 {
					tol = 1e-4
				}
				rng := rand.New(rand.NewPCG(uint64(ci), 11))
				w := fused.Init(rng)
				for i := range w {
					w[i] += 0.2 * rng.NormFloat64()
				}
				in := s.Height * s.Width * s.Channels
				b := metalearn.NewBatch(tasks, ways*shots, ways*queries, in, ways)
				for _, xs := range [][]float64{b.SupportX, b.QueryX} {
					for i := range xs {
						xs[i] = rng.NormFloat64()
					}
				}
				for t := range tasks {
					for p := range ways * shots {
						b.SupportY[(t*ways*shots+p)*ways+p%ways] = 1
					}
					for p := range ways * queries {
						b.QueryY[(t*ways*queries+p)*ways+(p+1)%ways] = 1
					}
				}
				weights := []float64{0.8, 1.3}
				run := func(m graph.Model, meta bool) (losses, grad []float64) {
					obj, err := graph.NewObjective(graph.Spec{Model: m, Loss: graph.SoftmaxCrossEntropy, Tasks: tasks,
						Support: ways * shots, Query: ways * queries, InShape: fused.InShape(), OutDim: ways,
						Steps: 2, Alpha: 0.3, MetaGradient: meta, Dtype: dt})
					if err != nil {
						t.Fatal(err)
					}
					losses = make([]float64, tasks)
					ws := []float64(nil)
					if meta {
						grad, ws = make([]float64, len(w)), weights
					}
					if err := obj.Losses(w, b, ws, losses, grad); err != nil {
						t.Fatal(err)
					}
					return losses, grad
				}
				fl, fg := run(fused, true)
				cl, cg := run(composedCNN{fused}, true)
				if d := relDiff(fl, cl); d > tol {
					t.Errorf("training losses: fused %v, composed %v (relative %.2g)", fl, cl, d)
				}
				if d := relDiff(fg, cg); d > tol {
					t.Errorf("meta-gradient: fused and composed differ by %.2g relative", d)
				}
				fe, _ := run(fused, false)
				ce, _ := run(composedCNN{fused}, false)
				if d := relDiff(fe, ce); d > tol {
					t.Errorf("evaluation losses: fused %v, composed %v (relative %.2g)", fe, ce, d)
				}
				t.Logf("relative differences: losses %.2g, meta-gradient %.2g, evaluation %.2g", relDiff(fl, cl), relDiff(fg, cg), relDiff(fe, ce))
			})
		}
	}
}

// relDiff is |a - b| / |b| in the Euclidean norm.
func relDiff(a, b []float64) float64 {
	var d, n float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += b[i] * b[i]
	}
	return math.Sqrt(d / n)
}
