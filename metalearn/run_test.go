package metalearn

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/internal/ctxtest"
)

// TestRunStopsAndResumesBitForBit: Run stopped through its context at any
// iteration leaves a state that, with the optimizer's fields, makes a new
// Trainer finish with exactly the iterates, solution and step statistics of
// an uninterrupted run, for every output rule, with Adam and a cosine
// schedule.
func TestRunStopsAndResumesBitForBit(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	q.mass = []float64{1, 2, 3}
	const T = 40
	settings := func(out OutputRule) Settings {
		return Settings{Method: TRMAML{PLR: 0.05}.New(), Iterations: T, Batch: 2, BallRadius: 2.5, Output: out,
			Optimizer: NewAdam(0.1, 1), Schedule: Cosine{Max: 0.1, Min: 0.01, Iterations: T}, Seed: 3}
	}
	obj := quadObjective{q: q, alpha: alpha, tasks: 2}
	bits := func(tr *Trainer, losses []float64) []uint64 {
		w, p := tr.Solution()
		var b []uint64
		for _, v := range slices.Concat(w, p, tr.State.W, tr.State.P, losses) {
			b = append(b, math.Float64bits(v))
		}
		return b
	}
	for _, out := range []OutputRule{OutputLast, OutputAveraged, OutputRandom} {
		full, err := NewTrainer(obj, q, []float64{3}, settings(out))
		if err != nil {
			t.Fatal(err)
		}
		var fullLosses []float64
		if err := full.Run(context.Background(), func(st StepStats) error {
			fullLosses = append(fullLosses, st.MeanLoss, st.MaxLoss)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := bits(full, fullLosses)
		for _, stop := range []int{0, 1, 17, T - 1, T} {
			tr, err := NewTrainer(obj, q, []float64{3}, settings(out))
			if err != nil {
				t.Fatal(err)
			}
			var losses []float64
			record := func(st StepStats) error {
				losses = append(losses, st.MeanLoss, st.MaxLoss)
				return nil
			}
			err = tr.Run(ctxtest.StopAfter(context.Background(), stop), record)
			if stop < T && !errors.Is(err, context.Canceled) || stop == T && err != nil {
				t.Fatalf("%s, stop %d: Run returned %v", out, stop, err)
			}
			if tr.State.Iteration != stop {
				t.Fatalf("%s, stop %d: stopped at iteration %d", out, stop, tr.State.Iteration)
			}
			// The checkpoint: the state and the optimizer's fields, through
			// JSON as a run directory stores them.
			snap, err := tr.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			rawState, _ := json.Marshal(snap)
			rawOpt, _ := json.Marshal(tr.Settings.Optimizer)

			s := settings(out)
			var st State
			if err := json.Unmarshal(rawState, &st); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(rawOpt, s.Optimizer); err != nil {
				t.Fatal(err)
			}
			resumed, err := NewTrainer(obj, q, []float64{0}, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := resumed.Restore(st); err != nil {
				t.Fatal(err)
			}
			if err := resumed.Run(context.Background(), record); err != nil {
				t.Fatal(err)
			}
			if got := bits(resumed, losses); !slices.Equal(got, want) {
				t.Errorf("%s, stopped at %d: resumed run differs from the uninterrupted one", out, stop)
			}
		}
	}
}

// TestRunStopsOnCallbackError: an error of Run's callback stops it after
// that iteration and is returned as is.
func TestRunStopsOnCallbackError(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	tr, err := NewTrainer(quadObjective{q, alpha, 2}, q, []float64{3}, Settings{Iterations: 10})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	err = tr.Run(context.Background(), func(StepStats) error {
		if tr.State.Iteration == 4 {
			return stop
		}
		return nil
	})
	if err != stop || tr.State.Iteration != 4 {
		t.Errorf("Run returned %v at iteration %d, want %v at 4", err, tr.State.Iteration, stop)
	}
}

// TestScheduleInStep: Step updates w at the schedule's rate (SGD from w = 0
// with gradient g moves w by -lr_t g) and leaves the optimizer at its base
// rate.
func TestScheduleInStep(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	q.a, q.c = []float64{1, 1, 1}, []float64{1, 1, 1}
	sched := Cosine{Max: 0.3, Min: 0.1, Iterations: 4}
	opt := &SGD{LR: 7}
	tr, err := NewTrainer(quadObjective{q, alpha, 1}, q, []float64{0}, Settings{Iterations: 4, Optimizer: opt, Schedule: sched})
	if err != nil {
		t.Fatal(err)
	}
	k := q.k(0, alpha)
	w := 0.0
	for it := 0; it < 4; it++ {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
		// MAML's weight for one of three equal-mass tasks with C = 1 is 1.
		w -= sched.LR(it) * 2 * k * (w - 1)
		if math.Abs(tr.State.W[0]-w) > 1e-15 || opt.LR != 7 {
			t.Errorf("iteration %d: w = %v, want %v; optimizer rate %v, want 7", it+1, tr.State.W[0], w, opt.LR)
		}
	}
}
