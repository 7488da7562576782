package metalearn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// OutputRule is how a run turns its iterates into the returned solution.
type OutputRule string

const (
	// OutputLast returns the last iterate, as the paper's experiments do.
	OutputLast OutputRule = "last"
	// OutputAveraged is Algorithm 1's case T1 (convex tasks): the average of
	// the iterates w^1..w^T and p^1..p^T produced by the T updates.
	OutputAveraged OutputRule = "T1"
	// OutputRandom is case T2 (nonconvex tasks): the iterate after update
	// tau, with tau drawn uniformly from 1..T when training starts.
	OutputRandom OutputRule = "T2"
)

// Settings are the meta-training hyperparameters of a Trainer, in the
// spirit of gonum/optimize's Settings: every field's zero value means the
// documented default, so Settings{Iterations: 1000} trains MAML with Adam.
// Every Method draws the C task indices of an iteration independently, with
// replacement (the paper's text says "uniformly and independently"; its
// Algorithm 1 box says "unique"): the estimators are unbiased either way.
type Settings struct {
	// Method chooses and updates the task distribution p: MAML{}.New()
	// (the default), TRMAML{PLR: ...}.New(), another built-in method's
	// settings' New, or a Method of your own. A Trainer initialises it, so
	// one Method value serves one Trainer.
	Method Method
	// Iterations is T, the number of updates; it is required (>= 1).
	Iterations int
	// Batch is C, the task instances per iteration; 0 means the
	// Objective's Tasks().
	Batch int
	// Support and Query are the points of an instance's support and query
	// sets; 0 means the Objective's (see BatchShaper), and is an error for
	// an Objective that does not report them.
	Support, Query int
	// BallRadius is the radius R of W = {||w|| <= R}; 0 leaves w
	// unconstrained.
	BallRadius float64
	// Output is the rule that turns the iterates into the solution; ""
	// means OutputLast.
	Output OutputRule
	// Optimizer updates w; nil means NewAdam(1e-3, n), TensorFlow's
	// default rate. Its exported fields are its state: save them with a
	// Snapshot to checkpoint a run. One Optimizer value serves one Trainer.
	Optimizer Optimizer
	// Schedule, if not nil, sets the Optimizer's learning rate for every
	// update (the Optimizer must implement LRSetter, as SGD and Adam do);
	// between updates the Optimizer keeps its own, base, rate. nil keeps
	// the base rate throughout.
	Schedule Schedule
	// Seed seeds the generator that draws the tasks and their instances.
	Seed uint64
	// Warn, if not nil, receives what a method reports without stopping
	// the run, once (DR-MAML+ falling back from its kernel density).
	Warn func(msg string)
}

// warner is a built-in method that reports through Settings.Warn.
type warner interface{ setWarn(func(msg string)) }

// BatchShaper is an Objective that reports the support and query points
// per instance it was built for, as graph.Objective does, so that
// Settings.Support and Settings.Query can be left zero.
type BatchShaper interface {
	BatchShape() (support, query int)
}

// withDefaults returns s with its zero fields replaced by their defaults
// for obj, or an error naming the first invalid field.
func (s Settings) withDefaults(obj Objective, n int) (Settings, error) {
	if s.Method == nil {
		s.Method = MAML{}.New()
	}
	if s.Batch == 0 {
		s.Batch = obj.Tasks()
	}
	if s.Support == 0 && s.Query == 0 {
		if bs, ok := obj.(BatchShaper); ok {
			s.Support, s.Query = bs.BatchShape()
		}
	}
	if s.Output == "" {
		s.Output = OutputLast
	}
	if s.Optimizer == nil {
		s.Optimizer = NewAdam(1e-3, n)
	}
	return s, s.validate()
}

func (s Settings) validate() error {
	switch {
	case s.Iterations < 1:
		return fmt.Errorf("metalearn: Settings.Iterations must be >= 1, got %d", s.Iterations)
	case s.Batch < 1:
		return fmt.Errorf("metalearn: Settings.Batch must be >= 1, got %d", s.Batch)
	case s.Support < 1 || s.Query < 1:
		return fmt.Errorf("metalearn: Settings.Support and Query must be >= 1 (or 0 with an Objective that reports them), got %d, %d", s.Support, s.Query)
	case !(s.BallRadius >= 0) || math.IsInf(s.BallRadius, 0):
		return fmt.Errorf("metalearn: Settings.BallRadius must be finite and >= 0, got %v", s.BallRadius)
	case s.Output != OutputLast && s.Output != OutputAveraged && s.Output != OutputRandom:
		return fmt.Errorf("metalearn: Settings.Output: unknown output rule %q (allowed: last, T1, T2)", s.Output)
	}
	if _, ok := s.Optimizer.(LRSetter); s.Schedule != nil && !ok {
		return fmt.Errorf("metalearn: Settings.Schedule: optimizer %T has no settable learning rate (see LRSetter)", s.Optimizer)
	}
	return nil
}

// State is everything a run needs to continue exactly where it stopped: the
// iterates, the optimizer's moments, the output-rule accumulators and the
// random generator. It is what a checkpoint stores.
type State struct {
	Iteration int
	W, P      []float64
	// SumW and SumP accumulate the iterates for OutputAveraged.
	SumW, SumP []float64
	// Tau is the iterate kept by OutputRandom, and WTau, PTau its value.
	Tau        int
	WTau, PTau []float64
	// RNG is the binary state of the PCG generator that drives sampling.
	RNG []byte
}

// ErrNonFinite reports a NaN or infinite loss or gradient; training stops
// before the bad values reach the parameters.
var ErrNonFinite = errors.New("metalearn: non-finite loss or meta-gradient")

// ErrNonFiniteState reports an update that left w, p or the optimizer's
// state non-finite (a huge learning rate, say): training stops, as on a
// non-finite loss, before the state is saved.
var ErrNonFiniteState = errors.New("metalearn: non-finite state after the update")

// checkStep checks the updated iterates and optimizer state.
func (t *Trainer) checkStep() error {
	st := &t.State
	if i := nonFinite(st.W); i >= 0 {
		return fmt.Errorf("w[%d] = %v", i, st.W[i])
	}
	if i := nonFinite(st.P); i >= 0 {
		return fmt.Errorf("p[%d] = %v", i, st.P[i])
	}
	if err := t.Settings.Optimizer.Check(len(st.W), st.Iteration); err != nil {
		return fmt.Errorf("optimizer %v", err)
	}
	return nil
}

// StepStats summarises one iteration's sampled instances.
type StepStats struct {
	MeanLoss, MaxLoss float64
}

// Trainer is the one training driver of every Method: Algorithm 1's
// alternating stochastic descent on w (the Optimizer, then the projection
// onto the ball) and the Method's update of p, on an Objective over a
// meta-training TaskSet. Its loop is Step, called Settings.Iterations
// times; Run is that loop, stoppable through a context. Solution returns the
// output of the configured rule. A loop of your own is as short as
//
//	for tr.State.Iteration < tr.Settings.Iterations {
//		if _, err := tr.Step(); err != nil {
//			return err
//		}
//	}
//	w, p := tr.Solution()
type Trainer struct {
	// Settings are the trainer's, with the defaults filled in.
	Settings  Settings
	Objective Objective
	Train     TaskSet
	State     State

	pcg     *rand.PCG
	rng     *rand.Rand
	batch   *Batch
	tasks   []int
	weights []float64
	losses  []float64
	grad    []float64
}

// NewTrainer prepares a run of s on obj over the meta-training tasks train,
// from the initial parameters w0. The Objective must have been built for
// Settings.Batch instances of Settings.Support and Settings.Query points.
func NewTrainer(obj Objective, train TaskSet, w0 []float64, s Settings) (*Trainer, error) {
	s, err := s.withDefaults(obj, len(w0))
	if err != nil {
		return nil, err
	}
	if obj.Tasks() != s.Batch {
		return nil, fmt.Errorf("metalearn: objective built for %d tasks, Settings.Batch is %d", obj.Tasks(), s.Batch)
	}
	if len(w0) != obj.NumParams() {
		return nil, fmt.Errorf("metalearn: %d initial parameters, the objective has %d", len(w0), obj.NumParams())
	}
	n := train.Len()
	masses := make([]float64, n)
	for i := range masses {
		masses[i] = train.Mass(i)
		if !(masses[i] > 0) || math.IsInf(masses[i], 0) {
			return nil, fmt.Errorf("metalearn: task %q has mass %v, want a positive finite number", train.Name(i), masses[i])
		}
	}
	p, err := s.Method.Init(masses, s.Batch)
	if err != nil {
		return nil, err
	}
	if w, ok := s.Method.(warner); ok && s.Warn != nil {
		w.setWarn(s.Warn)
	}
	t := &Trainer{Settings: s, Objective: obj, Train: train}
	t.pcg = rand.NewPCG(s.Seed, 0x7472_6d61_6d6c) // second word: "trmaml"
	t.rng = rand.New(t.pcg)
	st := &t.State
	st.W = append([]float64(nil), w0...)
	st.P = p
	switch s.Output {
	case OutputAveraged:
		st.SumW, st.SumP = make([]float64, len(w0)), make([]float64, n)
	case OutputRandom:
		st.Tau = 1 + t.rng.IntN(s.Iterations)
	}
	t.prepare()
	return t, nil
}

// Run calls Step until Settings.Iterations updates are done, and after each
// one calls each (if not nil) with its statistics. It checks ctx once before
// every iteration and, when ctx is done, returns ctx.Err() with the trainer
// between two iterations: Snapshot and the Optimizer's exported fields then
// checkpoint it, and a new Trainer given them (Restore) finishes the run bit
// for bit as if it had never stopped. An error of Step or of each stops Run
// and is returned as is.
func (t *Trainer) Run(ctx context.Context, each func(StepStats) error) error {
	for t.State.Iteration < t.Settings.Iterations {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := t.Step()
		if err != nil {
			return err
		}
		if each != nil {
			if err := each(st); err != nil {
				return err
			}
		}
	}
	return nil
}

// Restore replaces the trainer's state with a saved one (from a checkpoint),
// refusing a state that does not fit the trainer's settings, or the
// trainer's optimizer (restored beforehand), with an error naming the field
// ("state.P", "optimizer.T").
func (t *Trainer) Restore(st State) error {
	if err := t.checkState(st); err != nil {
		return err
	}
	if err := t.Settings.Optimizer.Check(len(st.W), st.Iteration); err != nil {
		return fmt.Errorf("optimizer.%w", err)
	}
	if err := t.pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("state.RNG: %w", err)
	}
	t.State = st
	return nil
}

// checkState refuses a state that does not fit the trainer: sizes, the
// iteration, finite values, p on the simplex, the output rule's fields.
func (t *Trainer) checkState(st State) error {
	nw, np := t.Objective.NumParams(), t.Train.Len()
	fits := func(s []float64, n int) bool { return s == nil || len(s) == n }
	switch {
	case len(st.W) != nw:
		return fmt.Errorf("state.W: %d parameters, the run's model has %d", len(st.W), nw)
	case len(st.P) != np:
		return fmt.Errorf("state.P: %d task weights, the run has %d meta-training tasks", len(st.P), np)
	case st.Iteration < 0 || st.Iteration > t.Settings.Iterations:
		return fmt.Errorf("state.Iteration = %d: must be in [0, %d], the run's iterations", st.Iteration, t.Settings.Iterations)
	case t.Settings.Output == OutputAveraged && (len(st.SumW) != nw || len(st.SumP) != np):
		return fmt.Errorf("state.SumW, state.SumP: missing or of the wrong size for output rule T1 (was the checkpoint saved with another rule?)")
	case t.Settings.Output == OutputRandom && (st.Tau < 1 || st.Tau > t.Settings.Iterations):
		return fmt.Errorf("state.Tau = %d: no valid T2 iterate index (was the checkpoint saved with another rule?)", st.Tau)
	case !fits(st.WTau, nw) || !fits(st.PTau, np):
		return fmt.Errorf("state.WTau, state.PTau: the T2 iterate has the wrong size")
	}
	for _, f := range []struct {
		name string
		v    []float64
	}{{"W", st.W}, {"P", st.P}, {"SumW", st.SumW}, {"SumP", st.SumP}, {"WTau", st.WTau}, {"PTau", st.PTau}} {
		if i := nonFinite(f.v); i >= 0 {
			return fmt.Errorf("state.%s[%d] = %v: must be finite", f.name, i, f.v[i])
		}
	}
	return t.checkFeasible(st)
}

// checkFeasible refuses a state whose p, averaged p (T1) or kept p (T2)
// lies outside the Method's feasible set.
func (t *Trainer) checkFeasible(st State) error {
	m := t.Settings.Method
	if err := m.Check("state.P", st.P); err != nil {
		return err
	}
	if t.Settings.Output == OutputAveraged {
		if st.Iteration == 0 {
			if i := slices.IndexFunc(st.SumP, func(v float64) bool { return v != 0 }); i >= 0 {
				return fmt.Errorf("state.SumP[%d] = %v at iteration 0: no iterate has been added yet, want 0", i, st.SumP[i])
			}
		} else {
			mean := clone(st.SumP)
			for i := range mean {
				mean[i] /= float64(st.Iteration)
			}
			if err := m.Check("(state.SumP / state.Iteration)", mean); err != nil {
				return err
			}
		}
	}
	if st.PTau != nil {
		return m.Check("state.PTau", st.PTau)
	}
	return nil
}

// nonFinite returns the index of the first NaN or infinite entry, or -1.
func nonFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

// Snapshot returns a deep copy of the state, with the generator's state, for
// a checkpoint.
func (t *Trainer) Snapshot() (State, error) {
	st := t.State
	st.W = clone(st.W)
	st.P = clone(st.P)
	st.SumW, st.SumP = clone(st.SumW), clone(st.SumP)
	st.WTau, st.PTau = clone(st.WTau), clone(st.PTau)
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return State{}, err
	}
	st.RNG = rng
	return st, nil
}

func clone(s []float64) []float64 {
	if s == nil {
		return nil
	}
	return append([]float64(nil), s...)
}

func (t *Trainer) prepare() {
	in, out := t.Train.Dims()
	C := t.Settings.Batch
	t.batch = NewBatch(C, t.Settings.Support, t.Settings.Query, in, out)
	t.tasks = make([]int, C)
	t.weights = make([]float64, C)
	t.losses = make([]float64, C)
	t.grad = make([]float64, t.Objective.NumParams())
}

// Step runs one meta-iteration: the Method draws C task instances and their
// weights, the Objective gives their losses and the weighted meta-gradient,
// then w is updated (at the Schedule's learning rate, if there is one) and
// projected, and the Method updates p from the losses, as in Algorithm 1.
func (t *Trainer) Step() (StepStats, error) {
	s := t.Settings
	st := &t.State
	C := s.Batch
	for k := range t.tasks {
		t.tasks[k], t.weights[k] = s.Method.Draw(t.rng, st.P)
		t.Train.Sample(t.tasks[k], t.rng, t.batch, k)
	}
	if err := t.evaluate(); err != nil {
		return StepStats{}, err
	}
	stats := StepStats{MaxLoss: math.Inf(-1)}
	for _, l := range t.losses {
		if err := t.checkLoss(l); err != nil {
			return StepStats{}, err
		}
		stats.MeanLoss += l / float64(C)
		stats.MaxLoss = math.Max(stats.MaxLoss, l)
	}
	for _, g := range t.grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return StepStats{}, fmt.Errorf("%w at iteration %d: meta-gradient entry %v", ErrNonFinite, st.Iteration+1, g)
		}
	}

	if err := t.update(); err != nil {
		return StepStats{}, err
	}
	ProjectBall(st.W, s.BallRadius)
	s.Method.Update(st.P, t.tasks, t.losses)
	st.Iteration++
	if err := t.checkStep(); err != nil {
		return StepStats{}, fmt.Errorf("%w at iteration %d: %v", ErrNonFiniteState, st.Iteration, err)
	}

	switch s.Output {
	case OutputAveraged:
		for i, v := range st.W {
			st.SumW[i] += v
		}
		for i, v := range st.P {
			st.SumP[i] += v
		}
	case OutputRandom:
		if st.Iteration == st.Tau {
			st.WTau, st.PTau = clone(st.W), clone(st.P)
		}
	}
	return stats, nil
}

// evaluate computes the iteration's losses and weighted meta-gradient; a
// Weigher chooses the weights from the losses in between (from the same
// forward pass if the Objective is a WeighingObjective, else from a
// first evaluation without the gradient).
func (t *Trainer) evaluate() error {
	st := &t.State
	if so, ok := t.Objective.(ScheduledObjective); ok {
		so.AtIteration(st.Iteration, t.Settings.Iterations)
	}
	wr, ok := t.Settings.Method.(Weigher)
	if !ok {
		return t.Objective.Losses(st.W, t.batch, t.weights, t.losses, t.grad)
	}
	weigh := func(losses, weights []float64) error {
		for _, l := range losses {
			if err := t.checkLoss(l); err != nil {
				return err
			}
		}
		wr.Weigh(st.P, t.tasks, losses, weights)
		return nil
	}
	if wo, ok := t.Objective.(WeighingObjective); ok {
		return wo.LossesWeighed(st.W, t.batch, weigh, t.weights, t.losses, t.grad)
	}
	if err := t.Objective.Losses(st.W, t.batch, nil, t.losses, nil); err != nil {
		return err
	}
	if err := weigh(t.losses, t.weights); err != nil {
		return err
	}
	return t.Objective.Losses(st.W, t.batch, t.weights, t.losses, t.grad)
}

// checkLoss refuses a non-finite loss of the iteration being run.
func (t *Trainer) checkLoss(l float64) error {
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return fmt.Errorf("%w at iteration %d: task loss %v", ErrNonFinite, t.State.Iteration+1, l)
	}
	return nil
}

// update steps the optimizer on w, at the schedule's rate for this
// iteration if there is one, and puts the base rate back.
func (t *Trainer) update() error {
	s, w := t.Settings, t.State.W
	if s.Schedule == nil {
		s.Optimizer.Step(w, t.grad)
		return nil
	}
	restore, err := scheduleStep(s.Optimizer, s.Schedule, t.State.Iteration)
	if err != nil {
		return err
	}
	s.Optimizer.Step(w, t.grad)
	restore()
	return nil
}

// Solution returns the output of the configured rule for the iterations run
// so far (before the T2 iterate is reached, the current iterate).
func (t *Trainer) Solution() (w, p []float64) {
	st := &t.State
	switch t.Settings.Output {
	case OutputAveraged:
		if st.Iteration > 0 {
			w, p = clone(st.SumW), clone(st.SumP)
			for i := range w {
				w[i] /= float64(st.Iteration)
			}
			for i := range p {
				p[i] /= float64(st.Iteration)
			}
			return w, p
		}
	case OutputRandom:
		if st.WTau != nil {
			return clone(st.WTau), clone(st.PTau)
		}
	}
	return clone(st.W), clone(st.P)
}
