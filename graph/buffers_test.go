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
				if err := alone.LossesMetric(w, eb, nil, make([]float64, eb.Tasks), make([]float64, eb.Tasks), nil); err != nil {
					t.Fatal(err)
				}
				if both, want := train.bufferBytes(), max(trained, alone.bufferBytes()); both > want {
					t.Errorf("training and evaluation hold %d bytes between them, more than the larger of training's %d and the evaluation's alone %d", both, trained, alone.bufferBytes())
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
