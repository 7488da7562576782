package metalearn

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// cvarValue is the CVaR of the losses at level a: the largest sum_i p_i L_i
// over 0 <= p_i <= 1/(a n), sum p = 1, i.e. the cap given to the largest
// losses in turn until the mass runs out.
func cvarValue(losses []float64, a float64) float64 {
	l := slices.Clone(losses)
	slices.Sort(l)
	slices.Reverse(l)
	capacity, mass, v := math.Min(1/(a*float64(len(l))), 1), 1.0, 0.0
	for _, x := range l {
		w := math.Min(capacity, mass)
		v += w * x
		mass -= w
	}
	return v
}

// minimize1D returns the minimiser of a convex function on [lo, hi] by
// golden-section search to machine precision.
func minimize1D(f func(float64) float64, lo, hi float64) float64 {
	g := (math.Sqrt(5) - 1) / 2
	for i := 0; i < 200; i++ {
		a, b := hi-g*(hi-lo), lo+g*(hi-lo)
		if f(a) < f(b) {
			hi = b
		} else {
			lo = a
		}
	}
	return (lo + hi) / 2
}

// quadLosses returns F_i(w) of the quadratic tasks.
func quadLosses(q quadTasks, alpha, w float64) []float64 {
	l := make([]float64, len(q.a))
	for i := range l {
		d := w - q.c[i]
		l[i] = q.k(i, alpha) * d * d
	}
	return l
}

// trainQuad runs method on the quadratic tasks with output rule T1.
func trainQuad(t *testing.T, q quadTasks, alpha float64, m Method, iterations int) (w, p []float64) {
	t.Helper()
	s := Settings{Method: m, Iterations: iterations, Batch: 2, Output: OutputAveraged}
	s.Optimizer, s.Seed = &SGD{LR: 0.02}, 1
	tr, err := NewTrainer(quadObjective{q: q, alpha: alpha, tasks: s.Batch}, q, []float64{3}, s)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < iterations; i++ {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
	return tr.Solution()
}

// TestCVaRConvergesToClosedForm: at each level a, CVaR reaches the
// minimiser of w -> CVaR_a(F_1(w), ..., F_n(w)), computed independently by a
// golden-section search on that convex function; level 1 is the plain
// average of the tasks and level 1/3 is TR-MAML's min-max point.
func TestCVaRConvergesToClosedForm(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	for _, a := range []float64{1, 0.75, 0.5, 0.4, 1.0 / 3} {
		obj := func(w float64) float64 { return cvarValue(quadLosses(q, alpha, w), a) }
		want := minimize1D(obj, -5, 5)
		// A small eta_p: near the cap, the projection of a noisy step biases
		// p by O(eta_p) (at level 0.5 the solution's p_1 = 0.57 sits close
		// to the cap 2/3).
		w, p := trainQuad(t, q, alpha, CVaR{Level: a, PLR: 0.005}.New(), 40000)
		if math.Abs(w[0]-want) > 0.02 {
			t.Errorf("level %v: w = %.4f, want %.4f", a, w[0], want)
		}
		if gap := obj(w[0]) - obj(want); gap > 5e-3 {
			t.Errorf("level %v: CVaR at w is %.5f above the minimum %.5f", a, gap, obj(want))
		}
		for _, v := range p {
			if v > 1/(3*a)+1e-12 || v < 0 {
				t.Errorf("level %v: averaged p = %v leaves the capped simplex", a, p)
			}
		}
	}
}

// TestEntropicConvergesToClosedForm: entropic TR-MAML and DRO-MAML reach the same
// min-max point as TR-MAML (the closed form of TestTrainerConvergesToClosedForm).
func TestEntropicConvergesToClosedForm(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	k1, k3 := q.k(0, alpha), q.k(2, alpha)
	r1, r3 := math.Sqrt(k1), math.Sqrt(k3)
	wRobust := (r1*q.c[0] + r3*q.c[2]) / (r1 + r3)
	p1, p3 := k3*(q.c[2]-wRobust), k1*(wRobust-q.c[0])
	pRobust := []float64{p1 / (p1 + p3), 0, p3 / (p1 + p3)}
	// DRO-MAML (Group DRO) has the same geometry with its own estimator.
	for _, m := range []Method{EntropicTRMAML{PLR: 0.05}.New(), DROMAML{EtaQ: 0.01}.New()} {
		w, p := trainQuad(t, q, alpha, m, 40000)
		if math.Abs(w[0]-wRobust) > 0.02 {
			t.Errorf("%T: w = %.4f, want %.4f", m, w[0], wRobust)
		}
		for i := range p {
			if math.Abs(p[i]-pRobust[i]) > 0.05 {
				t.Errorf("%T: p = %.3f, want %.3f", m, p, pRobust)
				break
			}
		}
	}
}

// TestEntropicUpdate: one exponentiated-gradient step equals the direct
// formula p_i exp(eta g_i) / Z with g = (n/C) sum_k f_k e_{i_k}, and a step
// large enough to overflow exp without the log-domain shift still gives a
// distribution (all weight on the largest exponent).
func TestEntropicUpdate(t *testing.T) {
	t.Parallel()
	m := EntropicTRMAML{PLR: 0.1}.New()
	p, err := m.Init([]float64{1, 1, 1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	p[0], p[1], p[2], p[3] = 0.1, 0.2, 0.3, 0.4
	tasks, losses := []int{1, 1}, []float64{1.5, 0.5}
	want := slices.Clone(p)
	want[1] *= math.Exp(0.1 * 4 / 2 * (1.5 + 0.5))
	z := want[0] + want[1] + want[2] + want[3]
	m.Update(p, tasks, losses)
	for i := range p {
		if math.Abs(p[i]-want[i]/z) > 1e-15 {
			t.Fatalf("p = %v, want %v", p, want)
		}
	}
	m = EntropicTRMAML{PLR: 1e3}.New()
	m.Init([]float64{1, 1, 1, 1}, 2)
	m.Update(p, []int{2, 3}, []float64{1e3, 2e3})
	if p[3] != 1 || p[0] != 0 || p[1] != 0 || p[2] != 0 {
		t.Errorf("after a huge step p = %v, want all weight on task 3", p)
	}
	m = EntropicTRMAML{PLR: math.MaxFloat64}.New() // eta_p n / C overflows to +Inf
	p, _ = m.Init([]float64{1, 1, 1, 1}, 2)
	m.Update(p, []int{0, 2}, []float64{1, 1})
	if p[0] != 0.5 || p[2] != 0.5 || p[1] != 0 || p[3] != 0 {
		t.Errorf("after an overflowing step p = %v, want half on tasks 0 and 2", p)
	}
}

// TestMethodDraws: MAML draws tasks in proportion to their masses with
// weight 1/C; the ascent methods draw uniformly with weight (n/C) p_i, so
// both estimate sum_i p_i grad F_i without bias.
func TestMethodDraws(t *testing.T) {
	t.Parallel()
	masses := []float64{1, 2, 5}
	rng := rand.New(rand.NewPCG(1, 2))
	const draws = 200000
	for _, c := range []struct {
		name string
		m    Method
		freq []float64
	}{
		{"maml", MAML{}.New(), []float64{1.0 / 8, 2.0 / 8, 5.0 / 8}},
		{"trmaml", TRMAML{PLR: 1}.New(), []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{"cvar", CVaR{Level: 0.5, PLR: 1}.New(), []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
	} {
		p, err := c.m.Init(masses, 4)
		if err != nil {
			t.Fatal(err)
		}
		if c.name == "maml" && math.Abs(p[2]-5.0/8) > 1e-15 {
			t.Errorf("MAML's p = %v, want the empirical distribution", p)
		}
		if c.name != "maml" {
			p[0], p[1], p[2] = 0.5, 0.3, 0.2
		}
		count := make([]float64, 3)
		for i := 0; i < draws; i++ {
			task, weight := c.m.Draw(rng, p)
			count[task]++
			want := 0.25
			if c.name != "maml" {
				want = 3.0 / 4 * p[task]
			}
			if weight != want {
				t.Fatalf("%s: weight %v for task %d, want %v", c.name, weight, task, want)
			}
		}
		for i := range count {
			if math.Abs(count[i]/draws-c.freq[i]) > 0.005 {
				t.Errorf("%s: task %d drawn with frequency %.4f, want %.4f", c.name, i, count[i]/draws, c.freq[i])
			}
		}
	}
}

// TestCVaRLevelOneOverNIsTRMAML: at level 1/n the capped simplex is the whole
// simplex, and a CVaR run is TR-MAML's bit for bit.
func TestCVaRLevelOneOverNIsTRMAML(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	a, _ := trainQuad(t, q, alpha, TRMAML{PLR: 0.05}.New(), 500)
	b, _ := trainQuad(t, q, alpha, CVaR{Level: 1.0 / 3, PLR: 0.05}.New(), 500)
	if a[0] != b[0] {
		t.Errorf("CVaR at level 1/n: w = %v, TR-MAML %v", b[0], a[0])
	}
}

// TestRestoreChecksFeasibleP: a checkpoint's p (current, averaged for T1,
// kept for T2) must lie in the Method's feasible set: the simplex for the
// ascent methods, the capped simplex {p_i <= 1/(a n)} for CVaR (up to
// rounding), the empirical distribution for MAML. Anything else is refused
// with the field and the entry.
func TestRestoreChecksFeasibleP(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	q.mass = []float64{1, 1, 2} // MAML's p = (1/4, 1/4, 1/2)
	obj := quadObjective{q: q, alpha: alpha, tasks: 2}
	const at = 3 // the iteration the edited states claim
	twoThirds := 2.0 / 3
	for _, c := range []struct {
		name   string
		method func() Method
		output OutputRule
		p      []float64 // state.P, and for T1 SumP = at * p, for T2 PTau = p
		want   string    // "" accepts
	}{
		{"CVaR 0.5: at the cap", cvar(0.5), OutputLast, []float64{twoThirds, 1 - twoThirds, 0}, ""},
		{"CVaR 0.5: rounding above the cap", cvar(0.5), OutputLast, []float64{twoThirds * (1 + 1e-12), 1 - twoThirds*(1+1e-12), 0}, ""},
		{"CVaR 0.5: above the cap", cvar(0.5), OutputLast, []float64{0.8, 0.2, 0},
			"state.P[0] = 0.8: above the cap 1/(a n) = 0.6666666666666666 of CVaR at level a = 0.5 with n = 3 tasks"},
		{"CVaR 0.5: TR-MAML's vertex", cvar(0.5), OutputLast, []float64{0, 0, 1}, "state.P[2] = 1: above the cap"},
		{"CVaR 1: anything but uniform", cvar(1), OutputLast, []float64{0.4, 0.3, 0.3}, "state.P[0] = 0.4: above the cap 1/(a n) = 0.3333333333333333"},
		{"CVaR 1/3: the whole simplex", cvar(1.0 / 3), OutputLast, []float64{0, 0, 1}, ""},
		{"CVaR: negative", cvar(0.5), OutputLast, []float64{0.6, 0.6, -0.2}, "state.P[2] = -0.2: task weights must be >= 0"},
		{"CVaR: sum 0.9", cvar(0.5), OutputLast, []float64{0.3, 0.3, 0.3}, "state.P: the task weights sum to 0.8999999999999999, want 1"},
		{"CVaR T1: averaged p above the cap", cvar(0.5), OutputAveraged, []float64{0.8, 0.2, 0},
			"state.P[0] = 0.8: above the cap"},
		{"TR-MAML: a vertex", trmaml, OutputLast, []float64{0, 1, 0}, ""},
		{"TR-MAML: negative", trmaml, OutputLast, []float64{1.5, -0.5, 0}, "state.P[1] = -0.5: task weights must be >= 0"},
		{"TR-MAML: NaN", trmaml, OutputLast, []float64{math.NaN(), 0.5, 0.5}, "state.P[0] = NaN: must be finite"},
		{"TR-MAML T2: kept p off the simplex", trmaml, OutputRandom, []float64{0.5, 0.5, 0.5}, "state.P: the task weights sum to 1.5"},
		{"entropic: a vertex", entropic, OutputLast, []float64{1, 0, 0}, ""},
		{"entropic T1: sum 2", entropic, OutputAveraged, []float64{1, 1, 0}, "state.P: the task weights sum to 2"},
		{"MAML: its distribution", maml, OutputLast, []float64{0.25, 0.25, 0.5}, ""},
		{"MAML T1: its distribution", maml, OutputAveraged, []float64{0.25, 0.25, 0.5}, ""},
		{"MAML: uniform", maml, OutputLast, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3},
			"state.P[0] = 0.3333333333333333: MAML keeps p at the empirical distribution, which gives 0.25"},
	} {
		s := Settings{Method: c.method(), Iterations: 10, Batch: 2, Output: c.output}
		s.Optimizer, s.Seed = &SGD{LR: 0.1}, 1
		tr, err := NewTrainer(obj, q, []float64{1}, s)
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		st.Iteration, st.P = at, c.p
		switch c.output {
		case OutputAveraged:
			st.SumP = make([]float64, len(c.p))
			for i, v := range c.p {
				st.SumP[i] = at * v
			}
		case OutputRandom:
			st.Tau, st.WTau, st.PTau = at, st.W, c.p
		}
		err = tr.Restore(st)
		if c.want == "" && err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
		}
		if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Restore error\n%v\nwant it to contain\n%s", c.name, err, c.want)
		}
	}
}

// TestRestoreChecksAveragedAndKeptP: with a feasible current p, an averaged
// p (T1) or kept p (T2) outside the feasible set is still refused, naming
// its field.
func TestRestoreChecksAveragedAndKeptP(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	obj := quadObjective{q: q, alpha: alpha, tasks: 2}
	feasible := []float64{0.5, 0.5, 0}
	for _, c := range []struct {
		name   string
		output OutputRule
		edit   func(*State)
		want   string
	}{
		{"T1 mean above the cap", OutputAveraged, func(s *State) { s.SumP = []float64{2.4, 0.6, 0} },
			"(state.SumP / state.Iteration)[0] = 0.7999999999999999: above the cap"},
		{"T1 mean sums to 2", OutputAveraged, func(s *State) { s.SumP = []float64{3, 3, 0} },
			"(state.SumP / state.Iteration): the task weights sum to 2"},
		{"T1 sum before the first iteration", OutputAveraged, func(s *State) { s.Iteration, s.SumP = 0, []float64{0, 0.1, 0} },
			"state.SumP[1] = 0.1 at iteration 0: no iterate has been added yet, want 0"},
		{"T1 feasible", OutputAveraged, func(s *State) { s.SumP = []float64{1.5, 1.5, 0} }, ""},
		{"T2 kept p above the cap", OutputRandom, func(s *State) { s.Tau, s.WTau, s.PTau = 2, s.W, []float64{0, 0, 1} },
			"state.PTau[2] = 1: above the cap"},
		{"T2 feasible", OutputRandom, func(s *State) { s.Tau, s.WTau, s.PTau = 2, s.W, []float64{0, 0.5, 0.5} }, ""},
	} {
		s := Settings{Method: CVaR{Level: 0.5, PLR: 0.1}.New(), Iterations: 10, Batch: 2, Output: c.output}
		s.Optimizer, s.Seed = &SGD{LR: 0.1}, 1
		tr, err := NewTrainer(obj, q, []float64{1}, s)
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		st.Iteration, st.P = 3, feasible
		c.edit(&st)
		err = tr.Restore(st)
		if c.want == "" && err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
		}
		if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Restore error\n%v\nwant it to contain\n%s", c.name, err, c.want)
		}
	}
}

func cvar(level float64) func() Method {
	return func() Method { return CVaR{Level: level, PLR: 0.1}.New() }
}
func trmaml() Method   { return TRMAML{PLR: 0.1}.New() }
func entropic() Method { return EntropicTRMAML{PLR: 0.1}.New() }
func maml() Method     { return MAML{}.New() }

// TestZeroSettingsRefused: every built-in method's zero settings either
// mean something (MAML has none) or are refused, both by its registration's
// Check (a config) and by Init (a library caller): a zero step size of p
// would train MAML on the uniform distribution under another name.
func TestZeroSettingsRefused(t *testing.T) {
	t.Parallel()
	for _, info := range Methods() {
		typ := reflect.TypeOf(info.New()).Elem()
		zero := reflect.New(typ).Interface().(MethodSettings)
		if typ.NumField() == 0 {
			if _, err := zero.New().Init([]float64{1, 1}, 2); err != nil {
				t.Errorf("%s: settings-free zero value refused: %v", info.Name, err)
			}
			continue
		}
		if info.Check == nil || len(info.Check(zero)) == 0 {
			t.Errorf("%s: Check accepts the zero settings %+v", info.Name, zero)
		}
		if _, err := zero.New().Init([]float64{1, 1}, 2); err == nil {
			t.Errorf("%s: Init accepts the zero settings %+v", info.Name, zero)
		}
	}
}

// TestMethodSteps: every method that moves p registers the step size of
// its ascent, and Step names the yaml key StepValue reads (checked through
// the settings' YAML encoding); a method that keeps p fixed registers none.
func TestMethodSteps(t *testing.T) {
	for _, m := range Methods() {
		if m.FixedP {
			if m.Step != "" || m.StepValue != nil {
				t.Errorf("%s keeps p fixed but registers a step %q", m.Name, m.Step)
			}
			continue
		}
		if m.Step == "" || m.StepValue == nil {
			t.Errorf("%s moves p but registers no step size", m.Name)
			continue
		}
		s := m.New()
		raw, err := yaml.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := yaml.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		if v, ok := fields[m.Step].(float64); !ok || v != m.StepValue(s) {
			t.Errorf("%s: setting %s is %v in YAML, StepValue reads %v", m.Name, m.Step, fields[m.Step], m.StepValue(s))
		}
	}
}
