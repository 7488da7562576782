package metalearn

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// faulty is a user's method gone wrong: MAML with hooks that spoil what
// Init, Draw, Weigh or Update give the Trainer, and a Check that lets any p
// through, as a careless user's would.
type faulty struct {
	Method
	init   func(p []float64) []float64
	draw   func(task int, weight float64) (int, float64)
	weigh  func(weights []float64)
	update func(p []float64)
}

func (f *faulty) Init(masses []float64, batch int) ([]float64, error) {
	p, err := f.Method.Init(masses, batch)
	if f.init != nil && err == nil {
		p = f.init(p)
	}
	return p, err
}

func (f *faulty) Draw(rng *rand.Rand, p []float64) (int, float64) {
	i, w := f.Method.Draw(rng, p)
	if f.draw != nil {
		return f.draw(i, w)
	}
	return i, w
}

func (f *faulty) Update(p []float64, tasks []int, losses []float64) {
	f.Method.Update(p, tasks, losses)
	if f.update != nil {
		f.update(p)
	}
}

func (f *faulty) Check(string, []float64) error { return nil }

// faultyWeigher is faulty with a Weigh.
type faultyWeigher struct{ *faulty }

func (f faultyWeigher) Weigh(p []float64, tasks []int, losses, weights []float64) {
	for k := range weights {
		weights[k] = 1 / float64(len(weights))
	}
	f.weigh(weights)
}

// TestMethodContractRefused: whatever a method gets wrong (p not a
// distribution over the tasks, a task index out of range, a weight that is
// not a finite number >= 0) stops NewTrainer or the first bad Step with
// ErrMethod, naming the method, the call, the iteration and what is
// allowed, and Step leaves the iteration count where it was.
func TestMethodContractRefused(t *testing.T) {
	t.Parallel()
	set := func(i int, v float64) func(p []float64) { return func(p []float64) { p[i] = v } }
	initSet := func(i int, v float64) func(p []float64) []float64 {
		return func(p []float64) []float64 { p[i] = v; return p }
	}
	for _, c := range []struct {
		name string
		m    Method
		want string // in the error; "" for a method that is fine
	}{
		{"fine", &faulty{Method: MAML{}.New()}, ""},
		{"init short", &faulty{Method: MAML{}.New(), init: func(p []float64) []float64 { return p[:2] }}, "Init returned 2 task weights, the task set has 3"},
		{"init NaN", &faulty{Method: MAML{}.New(), init: initSet(1, math.NaN())}, "Init: p[1] = NaN: must be a finite number >= 0"},
		{"init negative", &faulty{Method: MAML{}.New(), init: initSet(0, -0.1)}, "Init: p[0] = -0.1: must be a finite number >= 0"},
		{"init zero", &faulty{Method: MAML{}.New(), init: func(p []float64) []float64 { return make([]float64, len(p)) }}, "Init: p: the task weights sum to 0, want 1"},
		{"update Inf", &faulty{Method: MAML{}.New(), update: set(2, math.Inf(1))}, "at iteration 1: Update: p[2] = +Inf: must be a finite number >= 0"},
		{"update negative", &faulty{Method: MAML{}.New(), update: set(2, -1)}, "at iteration 1: Update: p[2] = -1: must be a finite number >= 0"},
		{"update sum", &faulty{Method: MAML{}.New(), update: set(0, 0.9)}, "at iteration 1: Update: p: the task weights sum to"},
		{"draw task", &faulty{Method: MAML{}.New(), draw: func(int, float64) (int, float64) { return 3, 0.5 }}, "at iteration 1: Draw returned task 3: must be in [0, 2]"},
		{"draw weight NaN", &faulty{Method: MAML{}.New(), draw: func(i int, _ float64) (int, float64) { return i, math.NaN() }}, "at iteration 1: Draw returned weight NaN for task"},
		{"draw weight negative", &faulty{Method: MAML{}.New(), draw: func(i int, _ float64) (int, float64) { return i, -0.5 }}, "must be a finite number >= 0"},
		{"weigh Inf", faultyWeigher{&faulty{Method: MAML{}.New(), weigh: func(w []float64) { w[1] = math.Inf(-1) }}}, "at iteration 1: Weigh gave instance 2 weight -Inf: must be a finite number >= 0"},
	} {
		q, alpha := newQuad()
		s := Settings{Method: c.m, Iterations: 3, Batch: 2, Optimizer: &SGD{LR: 0.1}, Seed: 1}
		tr, err := NewTrainer(quadObjective{q, alpha, 2}, q, []float64{3}, s)
		for err == nil && tr.State.Iteration < s.Iterations {
			it := tr.State.Iteration
			if _, err = tr.Step(); err != nil && tr.State.Iteration != it {
				t.Errorf("%s: the refused step moved the iteration from %d to %d", c.name, it, tr.State.Iteration)
			}
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "":
		case !errors.Is(err, ErrMethod) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "metalearn.faulty"):
			t.Errorf("%s: error %v, want ErrMethod naming the method and %q", c.name, err, c.want)
		}
	}
}
