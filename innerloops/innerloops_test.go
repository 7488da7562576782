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

// images fills a batch of 2-way classification tasks of h*w images: a
// random image per class, points are it plus noise.
func images(rng *rand.Rand, tasks, shots, queries, pixels int) *metalearn.Batch {
	b := metalearn.NewBatch(tasks, 2*shots, 2*queries, pixels, 2)
	for t := 0; t < tasks; t++ {
		var protos [2][]float64
		for c := range protos {
			protos[c] = make([]float64, pixels)
			for i := range protos[c] {
				protos[c][i] = rng.NormFloat64()
			}
		}
		sx, sy, qx, qy := b.Row(t)
		for _, set := range [][2][]float64{{sx, sy}, {qx, qy}} {
			for p := 0; p < len(set[1])/2; p++ {
				set[1][p*2+p%2] = 1
				for i := 0; i < pixels; i++ {
					set[0][p*pixels+i] = protos[p%2][i] + 0.7*rng.NormFloat64()
				}
			}
		}
	}
	return b
}

// TestLoopsMetaGradient checks the second-order meta-gradient of every
// loop of the package, on graph's MLP and on
// the user model custommodel.ResConv, against central differences of the
// full two-level objective, and that the loop's own meta-parameters (the
// step sizes) get a nonzero meta-gradient.
func TestLoopsMetaGradient(t *testing.T) {
	t.Parallel()
	mlp, err := graph.NewMLP([]int{1, 6, 5, 1}, graph.Tanh)
	if err != nil {
		t.Fatal(err)
	}
	conv := custommodel.ResConv{H: 5, W: 4, C: 1, Filters: 2, Ways: 2}
	cases := []struct {
		name  string
		model graph.Model
		inner graph.InnerLoop
	}{
		{"ANIL, MLP", mlp, innerloops.ANIL{Steps: 2, Head: 2, Alpha: 0.3}},
		{"MAML++ per-step rates, MLP", mlp, innerloops.MAMLPP{Steps: 2}},
		{"Meta-SGD, MLP", mlp, innerloops.MetaSGD{Steps: 2}},
		{"ANIL, ResConv", conv, innerloops.ANIL{Steps: 1, Head: 2, Alpha: 0.4}},
		{"MAML++ per-step rates, ResConv", conv, innerloops.MAMLPP{Steps: 2}},
		{"Meta-SGD, ResConv", conv, innerloops.MetaSGD{Steps: 2}},
	}
	const tasks = 2
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 5))
			spec := graph.Spec{Model: c.model, Loss: graph.MSELoss, Tasks: tasks, Support: 4, Query: 5,
				InShape: []int{1}, OutDim: 1, Inner: c.inner}
			b := sineTasks(rng, tasks, 4, 5)
			if c.model == graph.Model(conv) {
				spec.Loss, spec.Support, spec.Query, spec.InShape, spec.OutDim = graph.SoftmaxCrossEntropy, 4, 6, []int{conv.H, conv.W, conv.C}, 2
				b = images(rng, tasks, 2, 3, conv.H*conv.W*conv.C)
			}
			value, err := graph.NewObjective(spec)
			if err != nil {
				t.Fatal(err)
			}
			spec.MetaGradient = true
			obj, err := graph.NewObjective(spec)
			if err != nil {
				t.Fatal(err)
			}
			w, model := testPoint(rng, c.model, obj.NumParams())
			weights := []float64{0.7, 1.3}
			losses, grad := make([]float64, tasks), make([]float64, len(w))
			if err := obj.Losses(w, b, weights, losses, grad); err != nil {
				t.Fatal(err)
			}
			fd := gradcheck.CentralDiff(func(w []float64) float64 {
				if err := value.Losses(w, b, weights, losses, nil); err != nil {
					t.Fatal(err)
				}
				return floats.Dot(weights, losses)
			}, w, 1e-6)
			d := gradcheck.RelErr(grad, fd)
			t.Logf("%d model and %d loop parameters: meta-gradient relative error %.2g", model, len(w)-model, d)
			if d > 1e-6 {
				t.Errorf("meta-gradient relative error %.3g > 1e-6", d)
			}
			if len(w) > model && floats.Dot(grad[model:], grad[model:]) < 1e-12 {
				t.Errorf("the step sizes get no meta-gradient: %v", grad[model:])
			}
		})
	}
}

// TestANILWholeModelIsMAML checks that ANIL adapting every tensor builds
// MAML's objective: the same losses and meta-gradient, bit for bit, as
// graph.InnerSGD, first and second order.
func TestANILWholeModelIsMAML(t *testing.T) {
	t.Parallel()
	mlp, err := graph.NewMLP([]int{1, 5, 1}, graph.ReLU)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	b := sineTasks(rng, 2, 3, 4)
	w := make([]float64, 16)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for _, first := range []bool{false, true} {
		var got [2][]float64
		for i, inner := range []graph.InnerLoop{innerloops.ANIL{Steps: 2, Head: 4, Alpha: 0.2, FirstOrder: first},
			graph.InnerSGD{Steps: 2, Alpha: 0.2, FirstOrder: first}} {
			obj, err := graph.NewObjective(graph.Spec{Model: mlp, Loss: graph.MSELoss, Tasks: 2, Support: 3, Query: 4,
				InShape: []int{1}, OutDim: 1, Inner: inner, MetaGradient: true})
			if err != nil {
				t.Fatal(err)
			}
			losses, grad := make([]float64, 2), make([]float64, len(w))
			if err := obj.Losses(w, b, []float64{1, 2}, losses, grad); err != nil {
				t.Fatal(err)
			}
			got[i] = append(losses, grad...)
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("first order %v: ANIL over every tensor %v, MAML %v", first, got[0], got[1])
		}
	}
}

// TestLoopErrors checks the one-line errors of bad loop settings, which
// name the loop (by its registered name, when the Spec gives it).
func TestLoopErrors(t *testing.T) {
	t.Parallel()
	mlp, _ := graph.NewMLP([]int{1, 4, 1}, graph.Tanh)
	base := graph.Spec{Model: mlp, Loss: graph.MSELoss, Tasks: 1, Support: 2, Query: 2, InShape: []int{1}, OutDim: 1}
	cases := []struct {
		name string
		edit func(*graph.Spec)
		want string
	}{
		{"ANIL head too large", func(s *graph.Spec) { s.Inner = innerloops.ANIL{Steps: 1, Head: 5, Alpha: 0.1} },
			"graph: inner loop innerloops.ANIL: inner.anil.head = 5: must be in [1, 4], the model's parameter tensors"},
		{"ANIL by its name", func(s *graph.Spec) { s.Inner, s.InnerName = innerloops.ANIL{Steps: 1, Head: 5, Alpha: 0.1}, "anil" },
			`graph: inner loop "anil" (innerloops.ANIL): inner.anil.head = 5: must be in [1, 4], the model's parameter tensors`},
		{"SGD without a step size", func(s *graph.Spec) { s.Inner = graph.InnerSGD{Steps: 1} }, "graph: inner loop graph.InnerSGD: needs Steps >= 0 and Alpha > 0, got 1 and 0"},
		{"inner loop and Spec steps", func(s *graph.Spec) { s.Inner, s.Steps = graph.InnerSGD{Steps: 1, Alpha: 0.1}, 1 },
			"graph: Spec.Inner is set, so Spec.Steps, Alpha and FirstOrder must be zero (the inner loop holds them), got 1, 0, false"},
	}
	for _, c := range cases {
		s := base
		c.edit(&s)
		if _, err := graph.NewObjective(s); err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// sineTasks fills a batch with sine regression tasks of random amplitude
// and phase, x uniform on [-5, 5].
func sineTasks(rng *rand.Rand, tasks, k, j int) *metalearn.Batch {
	b := metalearn.NewBatch(tasks, k, j, 1, 1)
	for t := 0; t < tasks; t++ {
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

// testPoint draws a point of n parameters at which to check a
// meta-gradient: the model's first, normal with deviation 0.6, then the
// inner loop's (step sizes) in [0.1, 0.2). It returns the model's count.
func testPoint(rng *rand.Rand, model graph.Model, n int) (w []float64, nModel int) {
	for _, s := range model.ParamShapes() {
		nModel += s.TotalSize()
	}
	w = make([]float64, n)
	for i := range w {
		if w[i] = 0.6 * rng.NormFloat64(); i >= nModel {
			w[i] = 0.1 + 0.1*rng.Float64()
		}
	}
	return w, nModel
}

// TestLoopsFromConfig trains every registered loop from a config through
// package run, as trmaml train does: the loop's own meta-parameters follow
// the model's in model.json, starting at inner.alpha, and an unknown kind
// is refused with the registered ones.
func TestLoopsFromConfig(t *testing.T) {
	t.Parallel()
	const src = `
name: loops
algorithm: trmaml
task: {family: sinusoid, support: 5, query: 5}
model: {kind: mlp, mlp: {hidden: [8]}}
inner: {kind: %s, steps: 2, alpha: 0.01}
meta: {iterations: 4, batch: 4}
eval: {every: 2, instances: 500, train_instances: 200, query: 5, batch: 100}
`
	// The MLP 1-8-1 has 25 parameters in 4 tensors, all adapted.
	own := map[string]int{"sgd": 0, "metasgd": 25, "anil": 0, "mamlpp": 2 * 4}
	for _, kind := range configs.InnerLoopNames() {
		c, err := configs.Parse("loops.yaml", []byte(fmt.Sprintf(src, kind)))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), kind)
		if _, err := run.Train(context.Background(), c, dir, run.Options{}); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		m, err := rundir.ReadModel(filepath.Join(dir, rundir.ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := own[kind]; !ok || len(m.W) != 25+n {
			t.Errorf("%s: %d parameters in model.json, want 25 and the loop's %d", kind, len(m.W), n)
		}
	}
	_, err := configs.Parse("loops.yaml", []byte(fmt.Sprintf(src, "reptile")))
	if err == nil || !strings.Contains(err.Error(), `loops.yaml:6: inner.kind = "reptile": is not registered (registered: sgd, metasgd, anil, mamlpp)`) {
		t.Errorf("unknown kind: %v", err)
	}
}
