package metalearn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
)

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
	if err := t.checkP(0, "Init", p); err != nil {
		return nil, err
	}
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
		if err := t.checkDraw(st.Iteration+1, t.tasks[k], t.weights[k]); err != nil {
			return StepStats{}, err
		}
		t.Train.Sample(t.tasks[k], t.rng, t.batch, k)
	}
	if err := t.evaluate(); err != nil {
		return StepStats{}, err
	}
	stats := StepStats{MaxLoss: math.Inf(-1)}
	for k, l := range t.losses {
		if err := t.checkLoss(k, l); err != nil {
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
	if err := t.checkP(st.Iteration+1, "Update", st.P); err != nil {
		return StepStats{}, err
	}
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
		for k, l := range losses {
			if err := t.checkLoss(k, l); err != nil {
				return err
			}
		}
		wr.Weigh(st.P, t.tasks, losses, weights)
		if err := t.checkWeights(st.Iteration+1, weights); err != nil {
			return err
		}
		return t.checkP(st.Iteration+1, "Weigh", st.P)
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

// checkLoss refuses a non-finite loss l of instance k of the iteration
// being run, naming the instance's task.
func (t *Trainer) checkLoss(k int, l float64) error {
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return fmt.Errorf("%w at iteration %d: task %q (instance %d of %d): loss %v", ErrNonFinite, t.State.Iteration+1, t.Train.Name(t.tasks[k]), k+1, len(t.tasks), l)
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
