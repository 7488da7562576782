package run

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
)

// TestMemoryEstimateBoundsGraphs trains and evaluates the paper's CNN (64
// filters, meta-batch 8) for one step on the synthetic Omniglot and checks
// that the memory estimate (configs.Config.Memory, which sizes Slurm's
// --mem and refuses configs beyond the machine) covers the buffers the two
// graphs allocated, and is not far above them: the default build's graphs
// are what it was calibrated on; the fast build's fused first block needs
// about half.
func TestMemoryEstimateBoundsGraphs(t *testing.T) {
	t.Parallel()
	opts := fixtureOptions(t)
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
			cfg, err := configs.Parse("memory.yaml", []byte(fmt.Sprintf(`
name: memory
task:
  family: omniglot
  support: %d
  query: %d
  omniglot: {ways: 5, rotate: true, image_size: 28}
model:
  kind: conv4
  conv4: {filters: %d, blocks: 4}
  dtype: float32
order: %s
inner: {steps: %d, alpha: 0.1}
meta: {iterations: 1, batch: 8}
eval: {every: 1, instances: 8, train_instances: 8, query: %d, batch: %d, final_instances: 8}
`, tc.support, tc.query, tc.filters, tc.order, tc.steps, tc.evalQuery, tc.evalBatch)))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Build(cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			w, err := s.init(rng)
			if err != nil {
				t.Fatal(err)
			}
			in, out := s.Train.Dims()
			b := metalearn.NewBatch(cfg.Meta.Batch, s.Support, s.Query, in, out)
			weights := make([]float64, b.Tasks)
			for i := range b.Tasks {
				s.Train.Sample(i%s.Train.Len(), rng, b, i)
				weights[i] = 1 / float64(b.Tasks)
			}
			if err := s.Objective.Losses(w, b, weights, make([]float64, b.Tasks), make([]float64, len(w))); err != nil {
				t.Fatal(err)
			}
			trained := s.Objective.BufferBytes()
			if _, _, err := s.evaluate(context.Background(), w, 0, false); err != nil {
				t.Fatal(err)
			}
			if grew := s.Objective.BufferBytes() - trained; tc.shared && grew != 0 {
				t.Errorf("the evaluation allocated %d bytes of its own; with the training graph's sizes it should reuse its buffers", grew)
			}
			m := cfg.Memory()
			if m.SharedGraphs != tc.shared {
				t.Errorf("SharedGraphs %v, want %v", m.SharedGraphs, tc.shared)
			}
			graphs := m.Graphs()
			got := float64(s.Objective.BufferBytes())
			t.Logf("graphs' buffers %.0f MiB, estimate %.0f MiB (training %.0f, evaluation %.0f): %.2f", got/(1<<20), graphs/(1<<20), m.TrainGraph/(1<<20), m.EvalGraph/(1<<20), got/graphs)
			if got > graphs || got < graphs/3 {
				t.Errorf("the graphs allocated %.0f MiB, the estimate is %.0f MiB: want the estimate between 1 and 3 times it", got/(1<<20), graphs/(1<<20))
			}
		})
	}
}
