package run

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
)

// scores builds c and scores one evaluation batch of meta-test instances
// at the meta-parameters drawn by c's initialisation.
func scores(t *testing.T, c configs.Config) []float64 {
	t.Helper()
	s, err := Build(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.init(rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	in, out := s.EvalTest.Dims()
	b := metalearn.NewBatch(c.Eval.Batch, s.Support, c.Eval.Query, in, out)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range c.Eval.Batch {
		s.EvalTest.Sample(i%s.EvalTest.Len(), rng, b, i)
	}
	got := make([]float64, c.Eval.Batch)
	if err := s.Score(w, b, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestEvalSteps: eval.steps adapts the evaluated instances with that many
// inner steps: a run trained with one step and evaluated with three
// scores every instance as a run with three inner steps does, for MAML's
// loop and for Meta-SGD's (built again for the evaluation); eval.steps 0
// and eval.steps = inner.steps are the training loop's own.
func TestEvalSteps(t *testing.T) {
	t.Parallel()
	base := tinyConfig()
	base.Inner.Alpha = 0.01
	base.Eval.Batch = 20
	for _, kind := range []string{"sgd", "metasgd"} {
		with := func(inner, eval int) []float64 {
			c := base.Clone()
			c.Inner.Kind, c.Inner.Steps, c.Eval.Steps = kind, inner, eval
			return scores(t, c)
		}
		one, three := with(1, 0), with(3, 0)
		if slices.Equal(one, three) {
			t.Fatalf("%s: one and three inner steps score alike", kind)
		}
		if got := with(1, 3); !slices.Equal(got, three) {
			t.Errorf("%s: eval.steps 3 after inner.steps 1 scores %v, inner.steps 3 %v", kind, got[:3], three[:3])
		}
		if got := with(1, 1); !slices.Equal(got, one) {
			t.Errorf("%s: eval.steps = inner.steps scores %v, eval.steps 0 %v", kind, got[:3], one[:3])
		}
	}
}

// TestEvalStepsRefused: eval.steps outside [0, 100], or other than
// inner.steps for an inner loop that learns a step size per step.
func TestEvalStepsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind         string
		inner, steps int
		want         string
	}{
		{"sgd", 1, -1, "eval.steps = -1: must be in [0, 100]"},
		{"sgd", 1, 101, "eval.steps = 101: must be in [0, 100]"},
		{"mamlpp", 2, 3, "eval.steps = 3: must be 0 or inner.steps = 2: inner loop mamlpp learns its step sizes step by step"},
	} {
		c := tinyConfig()
		c.Inner.Kind, c.Inner.Steps, c.Eval.Steps = tc.kind, tc.inner, tc.steps
		if _, err := Build(c, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s inner.steps %d eval.steps %d: %v, want %q", tc.kind, tc.inner, tc.steps, err, tc.want)
		}
	}
	c := tinyConfig()
	c.Inner.Kind, c.Inner.Steps, c.Eval.Steps = "mamlpp", 2, 2
	if _, err := Build(c, Options{}); err != nil {
		t.Errorf("mamlpp with eval.steps = inner.steps: %v", err)
	}
}
