package innerloops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/examples/custommodel"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/graph/gradcheck"
	"github.com/trmaml/trmaml/innerloops"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	"gonum.org/v1/gonum/floats"
)

// TestMultiStepLossMetaGradient checks MAML++'s multi-step loss in exact
// second order against central differences of the full two-level
// objective it defines, sum_t weights_t sum_s v_s L_query(theta_s), at
// non-uniform step weights (part-way through the annealing), on graph's
// MLP and on the user model custommodel.ResConv; the differences are of
// the objective's own loss output, which for a multi-step loop is that sum.
func TestMultiStepLossMetaGradient(t *testing.T) {
	t.Parallel()
	mlp, err := graph.NewMLP([]int{1, 6, 5, 1}, graph.Tanh)
	if err != nil {
		t.Fatal(err)
	}
	conv := custommodel.ResConv{H: 5, W: 4, C: 1, Filters: 2, Ways: 2}
	loop := innerloops.MAMLPPMSL{MAMLPP: innerloops.MAMLPP{Steps: 3}, Iterations: 10}
	for ci, model := range []graph.Model{mlp, conv} {
		rng := rand.New(rand.NewPCG(uint64(ci), 9))
		const tasks = 2
		spec := graph.Spec{Model: model, Loss: graph.MSELoss, Tasks: tasks, Support: 4, Query: 5,
			InShape: []int{1}, OutDim: 1, Inner: loop, MetaGradient: true}
		b := sineTasks(rng, tasks, 4, 5)
		if ci == 1 {
			spec.Loss, spec.Support, spec.Query, spec.InShape, spec.OutDim = graph.SoftmaxCrossEntropy, 4, 6, []int{conv.H, conv.W, conv.C}, 2
			b = images(rng, tasks, 2, 3, conv.H*conv.W*conv.C)
		}
		obj, err := graph.NewObjective(spec)
		if err != nil {
			t.Fatal(err)
		}
		obj.AtIteration(4, 1000) // weights 0.2, 0.2, 0.6
		w, _ := testPoint(rng, model, obj.NumParams())
		weights := []float64{0.7, 1.3}
		losses, grad := make([]float64, tasks), make([]float64, len(w))
		if err := obj.Losses(w, b, weights, losses, grad); err != nil {
			t.Fatal(err)
		}
		fd := gradcheck.CentralDiff(func(w []float64) float64 {
			if err := obj.Losses(w, b, nil, losses, nil); err != nil {
				t.Fatal(err)
			}
			return floats.Dot(weights, losses)
		}, w, 1e-6)
		d := gradcheck.RelErr(grad, fd)
		t.Logf("%T: meta-gradient relative error %.2g", model, d)
		if d > 1e-6 {
			t.Errorf("%T: multi-step meta-gradient relative error %.3g > 1e-6", model, d)
		}

		// The same objective at the last step alone (MAMLPP) differs: the
		// earlier steps' losses are in the sum.
		spec.Inner = loop.MAMLPP
		last, err := graph.NewObjective(spec)
		if err != nil {
			t.Fatal(err)
		}
		lastLosses, lastGrad := make([]float64, tasks), make([]float64, len(w))
		if err := last.Losses(w, b, weights, lastLosses, lastGrad); err != nil {
			t.Fatal(err)
		}
		if gradcheck.RelErr(lastGrad, grad) < 1e-3 {
			t.Errorf("%T: the multi-step meta-gradient is the last step's", model)
		}
	}
}

// TestMultiStepLossByHand computes MAML++'s multi-step loss of a linear
// model y = a x + b by hand: two steps theta_s = theta_{s-1} - r_s *
// grad L_support(theta_{s-1}) with per-step, per-tensor rates r_s, the
// mean squared error, and the weights of StepWeights half-way through the
// annealing, (0.25, 0.75); the objective's losses equal it, and at the
// start (uniform weights) and after the annealing (0.015, 0.985) too.
func TestMultiStepLossByHand(t *testing.T) {
	t.Parallel()
	lin, err := graph.NewMLP([]int{1, 1}, graph.ReLU)
	if err != nil {
		t.Fatal(err)
	}
	loop := innerloops.MAMLPPMSL{MAMLPP: innerloops.MAMLPP{Steps: 2}, Iterations: 10}
	obj, err := graph.NewObjective(graph.Spec{Model: lin, Loss: graph.MSELoss, Tasks: 1, Support: 3, Query: 2,
		InShape: []int{1}, OutDim: 1, Inner: loop, MetaGradient: true})
	if err != nil {
		t.Fatal(err)
	}
	sx, sy := []float64{-1, 0.5, 2}, []float64{0.3, -0.2, 1.1}
	qx, qy := []float64{1.5, -0.5}, []float64{0.7, 0.1}
	b := metalearn.NewBatch(1, 3, 2, 1, 1)
	copy(b.SupportX, sx)
	copy(b.SupportY, sy)
	copy(b.QueryX, qx)
	copy(b.QueryY, qy)
	// w: a, b, then the rates of step 1 (a, b) and step 2 (a, b)
	w := []float64{0.8, -0.4, 0.05, 0.1, 0.2, 0.15}
	mse := func(a, c float64, x, y []float64) (l, ga, gc float64) {
		for i := range x {
			r := a*x[i] + c - y[i]
			l += r * r / float64(len(x))
			ga += 2 * r * x[i] / float64(len(x))
			gc += 2 * r / float64(len(x))
		}
		return l, ga, gc
	}
	a, c := w[0], w[1]
	_, ga, gc := mse(a, c, sx, sy)
	a1, c1 := a-w[2]*ga, c-w[3]*gc
	l1, _, _ := mse(a1, c1, qx, qy)
	_, ga, gc = mse(a1, c1, sx, sy)
	a2, c2 := a1-w[4]*ga, c1-w[5]*gc
	l2, _, _ := mse(a2, c2, qx, qy)
	for _, at := range []struct {
		i      int
		v1, v2 float64
	}{{0, 0.5, 0.5}, {5, 0.25, 0.75}, {10, 0.015, 0.985}, {5000, 0.015, 0.985}} {
		if v := loop.StepWeights(at.i, 10000); math.Abs(v[0]-at.v1) > 1e-15 || math.Abs(v[1]-at.v2) > 1e-15 {
			t.Errorf("StepWeights at iteration %d: %v, want (%v, %v)", at.i, v, at.v1, at.v2)
		}
		obj.AtIteration(at.i, 10000)
		losses := make([]float64, 1)
		if err := obj.Losses(w, b, nil, losses, nil); err != nil {
			t.Fatal(err)
		}
		want := at.v1*l1 + at.v2*l2
		if math.Abs(losses[0]-want) > 1e-14*math.Abs(want) {
			t.Errorf("iteration %d: loss %.17g, by hand %.17g (steps %.6g, %.6g)", at.i, losses[0], want, l1, l2)
		}
	}
}

// TestMultiStepLossFromConfig trains MAML++ with inner.mamlpp.msl_iterations
// through run.Train: the multi-step loss changes the trained model against
// the last step alone, and a single inner step is refused naming the field.
func TestMultiStepLossFromConfig(t *testing.T) {
	t.Parallel()
	const src = `
name: msl
algorithm: trmaml
task: {family: sinusoid, support: 5, query: 5}
model: {kind: mlp, mlp: {hidden: [8]}}
inner: {kind: mamlpp, steps: %d, alpha: 0.01, mamlpp: {msl_iterations: %d}}
meta: {iterations: 4, batch: 4}
eval: {every: 2, instances: 500, train_instances: 200, query: 5, batch: 100}
`
	trained := map[int][]float64{}
	for _, msl := range []int{0, 3} {
		c, err := configs.Parse("msl.yaml", []byte(fmt.Sprintf(src, 2, msl)))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "run")
		if _, err := run.Train(context.Background(), c, dir, run.Options{}); err != nil {
			t.Fatal(err)
		}
		m, err := rundir.ReadModel(filepath.Join(dir, rundir.ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		trained[msl] = m.W
	}
	if slices.Equal(trained[0], trained[3]) {
		t.Errorf("msl_iterations 3 trained the model of msl_iterations 0")
	}
	_, err := configs.Parse("msl.yaml", []byte(fmt.Sprintf(src, 1, 3)))
	if err == nil || !strings.Contains(err.Error(), "msl.yaml:6: inner.mamlpp.msl_iterations = 3: weighs the query losses of several inner steps: needs inner.steps >= 2, got 1") {
		t.Errorf("a multi-step loss of one step: %v", err)
	}
}
