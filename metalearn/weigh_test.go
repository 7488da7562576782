package metalearn

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// recordingObjective is quadObjective that records the weights of every
// call with a gradient, and counts its evaluations.
type recordingObjective struct {
	quadObjective
	weights [][]float64
	calls   int
	nan     bool
}

func (o *recordingObjective) Losses(w []float64, b *Batch, weights, losses, grad []float64) error {
	o.calls++
	if grad != nil {
		o.weights = append(o.weights, slices.Clone(weights))
	}
	err := o.quadObjective.Losses(w, b, weights, losses, grad)
	if o.nan {
		losses[1] = math.NaN()
	}
	return err
}

// weighingObjective adds LossesWeighed: one evaluation.
type weighingObjective struct{ *recordingObjective }

func (o weighingObjective) LossesWeighed(w []float64, b *Batch, weigh func(losses, weights []float64) error, weights, losses, grad []float64) error {
	if err := o.quadObjective.Losses(w, b, make([]float64, len(weights)), losses, nil); err != nil {
		return err
	}
	if o.nan {
		losses[1] = math.NaN()
	}
	if err := weigh(losses, weights); err != nil {
		return err
	}
	return o.Losses(w, b, weights, losses, grad)
}

// TestWeigherWeightsTheGradient: the meta-gradient of a Weigher's
// iteration uses Weigh's weights, chosen from that iteration's losses;
// with a WeighingObjective the trajectory is the same as with a plain
// Objective (which costs a second evaluation); a non-finite loss stops the
// run naming the iteration before the method sees it.
func TestWeigherWeightsTheGradient(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	run := func(weighing bool, nan bool) ([]float64, *recordingObjective, error) {
		rec := &recordingObjective{quadObjective: quadObjective{q: q, alpha: alpha, tasks: 6}, nan: nan}
		var obj Objective = rec
		if weighing {
			obj = weighingObjective{rec}
		}
		s := Settings{Method: DRMAML{Alpha: 0.5}.New(), Iterations: 50, Batch: 6, Optimizer: &SGD{LR: 0.05}, Seed: 3}
		tr, err := NewTrainer(obj, q, []float64{3}, s)
		if err != nil {
			t.Fatal(err)
		}
		for range s.Iterations {
			if _, err := tr.Step(); err != nil {
				return nil, rec, err
			}
		}
		return tr.State.W, rec, nil
	}
	wPlain, plain, err := run(false, false)
	if err != nil {
		t.Fatal(err)
	}
	wWeighed, weighed, err := run(true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(wPlain, wWeighed) || plain.calls != 100 || weighed.calls != 50 {
		t.Errorf("w %v (plain, %d evaluations) vs %v (weighing, %d), want equal, 100 and 50", wPlain, plain.calls, wWeighed, weighed.calls)
	}
	for it, w := range weighed.weights {
		n := 0
		for _, x := range w {
			switch x {
			case 0:
			case 1.0 / 3:
				n++
			default:
				t.Fatalf("iteration %d: weight %v, want 0 or 1/3", it+1, x)
			}
		}
		if n != 3 {
			t.Fatalf("iteration %d: %d instances weighted, want the tail of 3", it+1, n)
		}
	}
	for _, weighing := range []bool{false, true} {
		if _, _, err := run(weighing, true); !errors.Is(err, ErrNonFinite) {
			t.Errorf("weighing %v: NaN loss gave %v, want ErrNonFinite", weighing, err)
		}
	}
}

// TestDRMAMLPlusWarnsOnce: when every iteration's losses are equal (one
// task), DR-MAML+ falls back at every iteration and Settings.Warn hears of
// it once.
func TestDRMAMLPlusWarnsOnce(t *testing.T) {
	t.Parallel()
	q := quadTasks{a: []float64{1}, c: []float64{0.5}, mass: []float64{1}}
	var msgs []string
	m := DRMAMLPlus{Alpha: 0.5}.New().(*drmamlPlusRun)
	s := Settings{Method: m, Iterations: 5, Batch: 4, Optimizer: &SGD{LR: 0.05}, Warn: func(msg string) { msgs = append(msgs, msg) }}
	tr, err := NewTrainer(quadObjective{q: q, alpha: 0.1, tasks: 4}, q, []float64{3}, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || m.Fallbacks() != 5 {
		t.Errorf("warnings %q over %d fallbacks, want one over 5", msgs, m.Fallbacks())
	}
}

// TestNonFiniteLossNamesTask: a non-finite loss stops the run naming the
// iteration and the task of the instance, for a method that weighs its
// batch (before Weigh sees the loss, with and without a WeighingObjective)
// and for one that does not.
func TestNonFiniteLossNamesTask(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	for _, tc := range []struct {
		name     string
		method   MethodSettings
		weighing bool
	}{
		{"maml", MAML{}, false},
		{"drmaml", DRMAML{Alpha: 0.5}, false},
		{"drmaml weighing", DRMAML{Alpha: 0.5}, true},
	} {
		rec := &recordingObjective{quadObjective: quadObjective{q: q, alpha: alpha, tasks: 6}, nan: true}
		var obj Objective = rec
		if tc.weighing {
			obj = weighingObjective{rec}
		}
		s := Settings{Method: tc.method.New(), Iterations: 1, Batch: 6, Optimizer: &SGD{LR: 0.05}, Seed: 3}
		tr, err := NewTrainer(obj, q, []float64{3}, s)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tr.Step()
		want := fmt.Sprintf("at iteration 1: task %q (instance 2 of 6): loss NaN", q.Name(tr.tasks[1]))
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: NaN loss gave %v, want ErrNonFinite saying %q", tc.name, err, want)
		}
	}
}
