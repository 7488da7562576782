package metalearn

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// quadTasks is a closed-form test problem: task i has the one-dimensional
// loss f_i(w) = a_i/2 (w - c_i)^2 on both support and query data, so one
// inner step of size alpha gives F_i(w) = a_i/2 (1 - alpha a_i)^2 (w - c_i)^2.
type quadTasks struct {
	a, c, mass []float64
}

func (q quadTasks) Len() int           { return len(q.a) }
func (q quadTasks) Name(i int) string  { return string(rune('A' + i)) }
func (q quadTasks) Mass(i int) float64 { return q.mass[i] }
func (q quadTasks) Dims() (int, int)   { return 1, 1 }
func (q quadTasks) k(i int, alpha float64) float64 {
	return q.a[i] / 2 * (1 - alpha*q.a[i]) * (1 - alpha*q.a[i])
}

// Sample writes the task index as the instance's only support input.
func (q quadTasks) Sample(i int, _ *rand.Rand, b *Batch, t int) {
	sx, _, _, _ := b.Row(t)
	sx[0] = float64(i)
}

// quadObjective is the exact MAML objective of quadTasks.
type quadObjective struct {
	q     quadTasks
	alpha float64
	tasks int
}

func (o quadObjective) NumParams() int { return 1 }
func (o quadObjective) Tasks() int     { return o.tasks }

// BatchShape implements BatchShaper: one support point, one query point.
func (o quadObjective) BatchShape() (support, query int) { return 1, 1 }
func (o quadObjective) Losses(w []float64, b *Batch, weights, losses, grad []float64) error {
	if grad != nil {
		grad[0] = 0
	}
	for t := 0; t < b.Tasks; t++ {
		i := int(b.SupportX[t*b.Support])
		k, d := o.q.k(i, o.alpha), w[0]-o.q.c[i]
		losses[t] = k * d * d
		if grad != nil {
			grad[0] += weights[t] * 2 * k * d
		}
	}
	return nil
}

func newQuad() (quadTasks, float64) {
	return quadTasks{a: []float64{1, 1, 4}, c: []float64{-1, 0.5, 2}, mass: []float64{1, 1, 1}}, 0.1
}

// TestTrainerConvergesToClosedForm: TR-MAML reaches the min-max solution,
// where the two extreme tasks have equal loss, w* = (sqrt(k1) c1 + sqrt(k3)
// c3) / (sqrt(k1) + sqrt(k3)), with p* = (k3 (c3-w*), 0, k1 (w*-c1)) / sum;
// MAML reaches the average-loss minimiser sum_i k_i c_i / sum_i k_i.
func TestTrainerConvergesToClosedForm(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	k := []float64{q.k(0, alpha), q.k(1, alpha), q.k(2, alpha)}
	r1, r3 := math.Sqrt(k[0]), math.Sqrt(k[2])
	wRobust := (r1*q.c[0] + r3*q.c[2]) / (r1 + r3)
	p1, p3 := k[2]*(q.c[2]-wRobust), k[0]*(wRobust-q.c[0])
	pRobust := []float64{p1 / (p1 + p3), 0, p3 / (p1 + p3)}
	wAverage := (k[0]*q.c[0] + k[1]*q.c[1] + k[2]*q.c[2]) / (k[0] + k[1] + k[2])

	cases := []struct {
		name   string
		method Method
		wantW  float64
		wantP  []float64
	}{
		{"trmaml", TRMAML{PLR: 0.02}.New(), wRobust, pRobust},
		{"maml", MAML{}.New(), wAverage, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Settings{Method: c.method, Iterations: 40000, Batch: 2, Output: OutputAveraged}
			obj := quadObjective{q: q, alpha: alpha, tasks: s.Batch}
			s.Optimizer, s.Seed = &SGD{LR: 0.02}, 1
			tr, err := NewTrainer(obj, q, []float64{3}, s)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < s.Iterations; i++ {
				if _, err := tr.Step(); err != nil {
					t.Fatal(err)
				}
			}
			w, p := tr.Solution()
			if math.Abs(w[0]-c.wantW) > 0.02 {
				t.Errorf("w = %.4f, want %.4f", w[0], c.wantW)
			}
			for i, want := range c.wantP {
				if math.Abs(p[i]-want) > 0.05 {
					t.Errorf("p = %.3f, want %.3f", p, c.wantP)
					break
				}
			}
		})
	}
}

// TestTrainerDeterministicAndResumable: the same seed gives the same run,
// and a run restored from a snapshot continues exactly as the original.
func TestTrainerDeterministicAndResumable(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	obj := quadObjective{q: q, alpha: alpha, tasks: 2}
	run := func(steps int, from *State) (*Trainer, State) {
		s := Settings{Method: TRMAML{PLR: 0.05}.New(), Iterations: 100, Batch: 2, Output: OutputRandom}
		s.Optimizer, s.Seed = &SGD{LR: 0.05}, 42
		tr, err := NewTrainer(obj, q, []float64{3}, s)
		if err != nil {
			t.Fatal(err)
		}
		if from != nil {
			if err := tr.Restore(*from); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < steps; i++ {
			if _, err := tr.Step(); err != nil {
				t.Fatal(err)
			}
		}
		st, err := tr.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		return tr, st
	}
	_, full := run(60, nil)
	_, again := run(60, nil)
	_, half := run(30, nil)
	_, resumed := run(30, &half)
	for name, st := range map[string]State{"same seed": again, "resumed": resumed} {
		if st.W[0] != full.W[0] || st.Iteration != full.Iteration || string(st.RNG) != string(full.RNG) {
			t.Errorf("%s: w %v iteration %d, want %v %d", name, st.W, st.Iteration, full.W, full.Iteration)
		}
		for i := range st.P {
			if st.P[i] != full.P[i] {
				t.Errorf("%s: p %v, want %v", name, st.P, full.P)
			}
		}
	}
}

// nanObjective returns a NaN loss, as a diverging run would.
type nanObjective struct{ quadObjective }

func (o nanObjective) Losses(w []float64, b *Batch, weights, losses, grad []float64) error {
	for i := range losses {
		losses[i] = math.NaN()
	}
	return nil
}

func TestTrainerStopsOnNonFinite(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	s := Settings{Method: MAML{}.New(), Iterations: 10, Batch: 2, Output: OutputLast}
	s.Optimizer, s.Seed = &SGD{LR: 0.1}, 1
	tr, err := NewTrainer(nanObjective{quadObjective{q, alpha, 2}}, q, []float64{3}, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(); err == nil || !errors.Is(err, ErrNonFinite) {
		t.Fatalf("Step() error = %v, want ErrNonFinite", err)
	}
	if tr.State.W[0] != 3 || tr.State.Iteration != 0 {
		t.Errorf("a non-finite step changed the state: w %v iteration %d", tr.State.W, tr.State.Iteration)
	}
}

func TestSettingsRefused(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	good := Settings{Method: MAML{}.New(), Iterations: 10, Batch: 2, Output: OutputLast, Optimizer: &SGD{LR: 0.1}, Seed: 1}
	for name, mutate := range map[string]func(*Settings){
		"iterations":       func(s *Settings) { s.Iterations = 0 },
		"batch":            func(s *Settings) { s.Batch = -1 },
		"batch not built":  func(s *Settings) { s.Batch = 3 },
		"support":          func(s *Settings) { s.Support, s.Query = -1, 1 },
		"schedule":         func(s *Settings) { s.Optimizer, s.Schedule = unratedOptimizer{}, Constant(0.1) },
		"p lr":             func(s *Settings) { s.Method = TRMAML{PLR: -1}.New() },
		"p lr nan":         func(s *Settings) { s.Method = TRMAML{PLR: math.NaN()}.New() },
		"entropic p lr":    func(s *Settings) { s.Method = EntropicTRMAML{PLR: math.Inf(1)}.New() },
		"cvar p lr":        func(s *Settings) { s.Method = CVaR{Level: 0.5, PLR: -1}.New() },
		"cvar level 0":     func(s *Settings) { s.Method = CVaR{Level: 0, PLR: 1}.New() },
		"cvar level above": func(s *Settings) { s.Method = CVaR{Level: 1.5, PLR: 1}.New() },
		"cvar level nan":   func(s *Settings) { s.Method = CVaR{Level: math.NaN(), PLR: 1}.New() },
		"radius":           func(s *Settings) { s.BallRadius = -1 },
		"output":           func(s *Settings) { s.Output = "T3" },
	} {
		s := good
		mutate(&s)
		if _, err := NewTrainer(quadObjective{q, alpha, 2}, q, []float64{0}, s); err == nil {
			t.Errorf("%s: NewTrainer accepted %+v", name, s)
		}
	}
	// An Objective that does not report its batch shape needs Support and
	// Query.
	_, err := NewTrainer(unshaped{quadObjective{q, alpha, 2}}, q, []float64{0}, good)
	if want := "metalearn: Settings.Support and Query must be >= 1 (or 0 with an Objective that reports them), got 0, 0"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// unshaped hides an Objective's BatchShape.
type unshaped struct{ Objective }

// TestSettingsDefaults: the zero fields of Settings mean the documented
// defaults.
func TestSettingsDefaults(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	tr, err := NewTrainer(quadObjective{q, alpha, 2}, q, []float64{0}, Settings{Iterations: 10})
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Settings
	if _, ok := s.Method.(*mamlRun); !ok {
		t.Errorf("Method = %T, want a running MAML", s.Method)
	}
	if a, ok := s.Optimizer.(*Adam); !ok || a.LR != 1e-3 || len(a.M) != 1 {
		t.Errorf("Optimizer = %+v, want NewAdam(1e-3, 1)", s.Optimizer)
	}
	if s.Batch != 2 || s.Support != 1 || s.Query != 1 || s.Output != OutputLast || s.Schedule != nil || s.BallRadius != 0 {
		t.Errorf("settings %+v: want Batch 2, Support 1, Query 1, Output last, no schedule, no ball", s)
	}
}

// TestEvaluateClosedForm: per-task losses are deterministic for quadTasks, so
// the statistics must equal the closed form, and every task is measured.
func TestEvaluateClosedForm(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	q.mass = []float64{1, 1, 2}
	ev := NewEvaluator(quadObjective{q, alpha, 4}, 1, 1, 1, 1)
	w := []float64{0.3}
	st, err := ev.Evaluate(w, q, 10, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	total := 0
	for i := range q.a {
		d := w[0] - q.c[i]
		want = append(want, q.k(i, alpha)*d*d)
		if st.Count[i] < 3 || st.Count[i] > 4 {
			t.Errorf("task %d measured %d times, want 3 or 4 of 10", i, st.Count[i])
		}
		total += st.Count[i]
	}
	if total != 10 {
		t.Errorf("%d instances evaluated, want 10", total)
	}
	mean := (want[0] + want[1] + want[2]) / 3
	std := math.Sqrt(((want[0]-mean)*(want[0]-mean) + (want[1]-mean)*(want[1]-mean) + (want[2]-mean)*(want[2]-mean)) / 3)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean", st.Mean, mean},
		{"weighted mean", st.WeightedMean, (want[0] + want[1] + 2*want[2]) / 4},
		{"worst", st.Worst, math.Max(want[0], math.Max(want[1], want[2]))},
		{"std", st.Std, std},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, err := ev.Evaluate(w, q, 2, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("Evaluate accepted fewer instances than tasks")
	}
}

// TestRestoreRefusesMismatchedState: a checkpoint saved under another
// output rule or size is refused with an error, never a panic.
func TestRestoreRefusesMismatchedState(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	obj := quadObjective{q: q, alpha: alpha, tasks: 2}
	base := Settings{Method: TRMAML{PLR: 0.1}.New(), Iterations: 10, Batch: 2, Output: OutputLast}
	base.Optimizer, base.Seed = &SGD{LR: 0.1}, 1
	tr, err := NewTrainer(obj, q, []float64{1}, base)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := tr.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		output OutputRule
		edit   func(*State)
	}{
		"last to T1":    {OutputAveraged, func(*State) {}},
		"last to T2":    {OutputRandom, func(*State) {}},
		"short p":       {OutputLast, func(s *State) { s.P = s.P[:2] }},
		"past the end":  {OutputLast, func(s *State) { s.Iteration = 11 }},
		"bad T2 weight": {OutputLast, func(s *State) { s.WTau = []float64{1, 2} }},
	} {
		s := base
		s.Method = TRMAML{PLR: 0.1}.New()
		s.Output = c.output
		s.Optimizer, s.Seed = &SGD{LR: 0.1}, 1
		tr, err := NewTrainer(obj, q, []float64{1}, s)
		if err != nil {
			t.Fatal(err)
		}
		st := saved
		st.P = append([]float64(nil), saved.P...)
		c.edit(&st)
		if err := tr.Restore(st); err == nil {
			t.Errorf("%s: Restore accepted the state", name)
		}
	}
}

// TestRestoreRefusesDamagedState: values that fit in size but cannot come
// from a run (zeroed or negative p, non-finite numbers, an optimizer state
// of the wrong size or step count) are refused with the field's name.
func TestRestoreRefusesDamagedState(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	obj := quadObjective{q: q, alpha: alpha, tasks: 2}
	s := Settings{Method: TRMAML{PLR: 0.05}.New(), Iterations: 10, Batch: 2, Output: OutputAveraged}
	newTrainer := func() *Trainer {
		s := s
		s.Method = TRMAML{PLR: 0.05}.New() // one Method value per Trainer
		s.Optimizer, s.Seed = NewAdam(0.1, 1), 1
		tr, err := NewTrainer(obj, q, []float64{1}, s)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := newTrainer()
	for range 3 {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
	saved, err := tr.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	savedAdam := *tr.Settings.Optimizer.(*Adam)
	for _, c := range []struct {
		name, want string
		edit       func(*State, *Adam)
	}{
		{"zeroed p", "state.P: the task weights sum to 0", func(s *State, _ *Adam) { clear(s.P) }},
		{"negative p", "state.P[0] = -0.5: task weights must be >= 0", func(s *State, _ *Adam) { s.P[0], s.P[1] = -0.5, 1.5 }},
		{"NaN w", "state.W[0] = NaN: must be finite", func(s *State, _ *Adam) { s.W[0] = math.NaN() }},
		{"Inf sum", "state.SumW[0] = +Inf: must be finite", func(s *State, _ *Adam) { s.SumW[0] = math.Inf(1) }},
		{"bad RNG", "state.RNG", func(s *State, _ *Adam) { s.RNG = []byte("x") }},
		{"Adam T 0", "optimizer.T = 0, want 3", func(_ *State, a *Adam) { a.T = 0 }},
		{"Adam M empty", "optimizer.M has 0 entries, want 1", func(_ *State, a *Adam) { a.M = nil }},
		{"Adam V negative", "optimizer.V[0] = -1: must be finite and >= 0", func(_ *State, a *Adam) { a.V = []float64{-1} }},
		{"Adam lr NaN", "optimizer.LR = NaN: must be finite and >= 0", func(_ *State, a *Adam) { a.LR = math.NaN() }},
	} {
		tr := newTrainer()
		st := saved
		st.W, st.P, st.SumW = clone(saved.W), clone(saved.P), clone(saved.SumW)
		a := tr.Settings.Optimizer.(*Adam)
		*a = savedAdam
		a.M, a.V = clone(savedAdam.M), clone(savedAdam.V)
		c.edit(&st, a)
		if err := tr.Restore(st); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Restore error %v, want %q", c.name, err, c.want)
		}
	}
	tr = newTrainer()
	*tr.Settings.Optimizer.(*Adam) = savedAdam
	if err := tr.Restore(saved); err != nil {
		t.Errorf("the undamaged state is refused: %v", err)
	}
}

// overflowOptimizer is SGD whose update overflows w, as Adam with a huge
// learning rate does on a real model while the losses are still finite.
type overflowOptimizer struct{ SGD }

func (o *overflowOptimizer) Step(w, grad []float64) {
	o.SGD.Step(w, grad)
	w[0] *= math.MaxFloat64
}

// TestTrainerStopsOnNonFiniteOptimizerState: an update that leaves w
// non-finite stops training, naming the iteration, instead of saving an
// infinite state into the next checkpoint.
func TestTrainerStopsOnNonFiniteOptimizerState(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	s := Settings{Method: MAML{}.New(), Iterations: 10, Batch: 2, Output: OutputLast}
	s.Optimizer, s.Seed = &overflowOptimizer{SGD{LR: 0.1}}, 1
	tr, err := NewTrainer(quadObjective{q, alpha, 2}, q, []float64{3}, s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Step()
	if !errors.Is(err, ErrNonFiniteState) || !strings.Contains(err.Error(), "at iteration 1: w[0] = +Inf") {
		t.Fatalf("error %v, want ErrNonFiniteState at iteration 1 naming w[0]", err)
	}
}
