package metalearn

import (
	"context"
	"slices"
	"testing"
)

// scheduledQuad is quadObjective that records the AtIteration calls.
type scheduledQuad struct {
	quadObjective
	calls *[][2]int
}

func (o scheduledQuad) AtIteration(i, n int) { *o.calls = append(*o.calls, [2]int{i, n}) }

// TestScheduledObjectiveIterations: the Trainer tells a ScheduledObjective
// every iteration's index (from 0) and the run's length before computing
// it, with and without a Weigher, Run going on from where Step left off.
func TestScheduledObjectiveIterations(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	for _, m := range []Method{MAML{}.New(), TRMAML{PLR: 1e-3}.New()} {
		var calls [][2]int
		tr, err := NewTrainer(scheduledQuad{quadObjective{q, alpha, 2}, &calls}, q, []float64{0}, Settings{Method: m, Iterations: 4, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := tr.Step(); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if want := [][2]int{{0, 4}, {1, 4}, {2, 4}, {3, 4}}; !slices.Equal(calls, want) {
			t.Errorf("%T: AtIteration calls %v, want %v", m, calls, want)
		}
	}
}
