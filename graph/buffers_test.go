package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/models/conv4"
	"gorgonia.org/tensor"
)

// TestMemoryEstimateBoundsGraphs builds the training and evaluation graphs
// of the paper's CNN (5-way 28x28 images, meta-batch 8, float32) as a run
// of model conv4 does, with the evaluation sharing training's buffers
// (ShareBuffers), calls each once and checks that the model's memory
// estimate (models/conv4's Model.Memory, which sizes Slurm's --mem and
// refuses configs beyond the machine) covers the buffers the two graphs
// allocated, and is not far above them: the default build's graphs are
// what it was calibrated on (0.51-0.78 of it); the fast build's fused
// first block needs less (0.27-0.78), least in first order, where the
// first block's kernel gradient takes its batch-norm backward pass in the
// same op (convKBNBack).
func TestMemoryEstimateBoundsGraphs(t *testing.T) {
	t.Parallel()
	const ways, side = 5, 28
	for _, tc := range []struct {
		name                 string
		filters, steps       int
		order                string
		support, query       int
		evalBatch, evalQuery int
		shared               bool
	}{
		{"5-way 1-shot, evaluation in training's buffers", 64, 1, "second", 1, 10, 8, 10, true},
		{"5-way 1-shot, evaluation in its own buffers", 64, 1, "second", 1, 10, 3, 5, false},
		{"5-way 5-shot", 64, 1, "second", 5, 10, 8, 10, true},
		{"5-way 5-shot, 3 inner steps", 32, 3, "second", 5, 10, 8, 10, true},
		{"5-way 5-shot, 3 inner steps, first order", 32, 3, "first", 5, 10, 8, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			section := &conv4.Config{Filters: tc.filters, Blocks: 4, Pool: PoolMax, BatchNorm: BatchNormFixed}
			cfg := configs.Defaults()
			cfg.Task.Support, cfg.Task.Query = tc.support, tc.query
			cfg.Model.Kind, cfg.Model.Sections, cfg.Model.Dtype = conv4.Name, map[string]any{conv4.Name: section}, "float32"
			cfg.Order, cfg.Inner.Steps, cfg.Inner.Alpha = tc.order, tc.steps, 0.1
			cfg.Meta.Iterations, cfg.Meta.Batch = 1, 8
			cfg.Eval.Every, cfg.Eval.Steps, cfg.Eval.Query, cfg.Eval.Batch = 1, 0, tc.evalQuery, tc.evalBatch
			cfg.Eval.Instances, cfg.Eval.TrainInstances, cfg.Eval.FinalInstances = 8, 8, 8
			io := configs.IO{Height: side, Width: side, Channels: 1, Outputs: ways, Classes: true}
			m, err := Conv4{Filters: section.Filters, Blocks: section.Blocks, Channels: 1, Height: side, Width: side,
				Pool: section.Pool, BatchNorm: section.BatchNorm}.CNN(ways)
			if err != nil {
				t.Fatal(err)
			}
			spec := Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: cfg.Meta.Batch, Support: ways * tc.support, Query: ways * tc.query,
				InShape: m.InShape(), OutDim: ways, Steps: tc.steps, Alpha: cfg.Inner.Alpha, FirstOrder: tc.order == "first", MetaGradient: true, Dtype: tensor.Float32}
			train, err := NewObjective(spec)
			if err != nil {
				t.Fatal(err)
			}
			spec.Tasks, spec.Query, spec.Steps, spec.MetaGradient, spec.FirstOrder = tc.evalBatch, ways*tc.evalQuery, cfg.EvalSteps(), false, false
			eval, err := NewObjective(spec)
			if err != nil {
				t.Fatal(err)
			}
			eval.ShareBuffers(train)

			rng := rand.New(rand.NewPCG(1, 2))
			w := m.Init(rng)
			b := randomImages(rng, cfg.Meta.Batch, ways, tc.support, tc.query, side, side, 1)
			weights := make([]float64, b.Tasks)
			for i := range weights {
				weights[i] = 1 / float64(b.Tasks)
			}
			if err := train.Losses(w, b, weights, make([]float64, b.Tasks), make([]float64, len(w))); err != nil {
				t.Fatal(err)
			}
			trained := train.bufferBytes()
			eb := randomImages(rng, tc.evalBatch, ways, tc.support, tc.evalQuery, side, side, 1)
			if err := eval.LossesMetric(w, eb, nil, make([]float64, eb.Tasks), make([]float64, eb.Tasks), nil); err != nil {
				t.Fatal(err)
			}
			if tc.shared { // the pool holds the larger of the two graphs' buffers, not their sum
				alone, err := NewObjective(spec)
				if err != nil {
					t.Fatal(err)
				}
				if both, want := train.bufferBytes(), max(trained, arenaBytes(alone)); both > want {
					t.Errorf("training and evaluation hold %d bytes between them, more than the larger of training's %d and the evaluation's arenas alone %d", both, trained, arenaBytes(alone))
				}
			}
			est := conv4.Model{}.Memory(cfg, io)
			if est.SharedGraphs != tc.shared {
				t.Errorf("SharedGraphs %v, want %v", est.SharedGraphs, tc.shared)
			}
			graphs := est.Graphs()
			got := float64(train.bufferBytes())
			t.Logf("graphs' buffers %.0f MiB, estimate %.0f MiB (training %.0f, evaluation %.0f): %.2f", got/(1<<20), graphs/(1<<20), est.TrainGraph/(1<<20), est.EvalGraph/(1<<20), got/graphs)
			if got > graphs || got < graphs/4 {
				t.Errorf("the graphs allocated %.0f MiB, the estimate is %.0f MiB: want the estimate between 1 and 4 times it", got/(1<<20), graphs/(1<<20))
			}
		})
	}
}

// TestShareBuffersHoldsLanes: an evaluation in two lanes, each smaller than
// training's arena but larger than it together, runs after training in
// parts of one buffer of the shared pool, not in training's and a second
// one: the pool peaks at the larger of the two graphs' own arenas, in
// both orders of the first calls.
func TestShareBuffersHoldsLanes(t *testing.T) {
	t.Parallel()
	m, err := NewCNN(16, 16, 1, 8, 2, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	w := m.Init(rng)
	tb, eb := randomImages(rng, 4, 3, 1, 2, 16, 16, 1), randomImages(rng, 4, 3, 1, 10, 16, 16, 1)
	build := func(eval bool) *Objective {
		s := Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 4, Support: 3, Query: 6,
			InShape: m.InShape(), OutDim: 3, Steps: 1, Alpha: 0.1, MetaGradient: true, Dtype: tensor.Float32}
		if eval {
			s.Query, s.MetaGradient, s.Lanes = 30, false, 2
		}
		obj, err := NewObjective(s)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	call := func(obj *Objective, eval bool) {
		b, weights, grad := tb, []float64{0.25, 0.25, 0.25, 0.25}, make([]float64, len(w))
		if eval {
			b, weights, grad = eb, nil, nil
		}
		if err := obj.LossesMetric(w, b, weights, make([]float64, 4), make([]float64, 4), grad); err != nil {
			t.Fatal(err)
		}
	}
	trainAlone, evalAlone := build(false), build(true)
	lanes, largest := 0, 0
	for _, p := range evalAlone.programs() {
		lanes += p.Arenas[0].Size()
		largest = max(largest, p.Arenas[0].Size())
	}
	if arena := trainAlone.prog.Arenas[0].Size(); largest >= arena || lanes <= arena {
		t.Fatalf("lanes' arenas of %d values, %d the largest, training's %d: want each smaller, all larger", lanes, largest, arena)
	}
	want := max(arenaBytes(trainAlone), arenaBytes(evalAlone))
	for _, evalFirst := range []bool{false, true} {
		train, eval := build(false), build(true)
		eval.ShareBuffers(train)
		for range 2 {
			if evalFirst {
				call(eval, true)
			}
			call(train, false)
			call(eval, true)
		}
		if got := train.bufferBytes(); got > want {
			t.Errorf("evaluation first %v: the shared pool peaked at %d bytes, the larger graph's arenas hold %d", evalFirst, got, want)
		}
	}
}

// arenaBytes is the memory of o's arenas side by side: what o alone holds
// when its lanes run at once. bufferBytes measures less when they happen
// to run one after another.
func arenaBytes(o *Objective) int64 {
	var n int64
	for _, p := range o.programs() {
		for _, a := range p.Arenas {
			n += int64(a.Size()) * int64(a.Dtype().Size())
		}
	}
	return n
}
