package metalearn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Method decides the task distribution of a Trainer, the way a
// gonum/optimize Method decides the search direction of its driver: the
// distribution p over the n meta-training tasks that the meta-gradient
// weighs, how the C task instances of an iteration are drawn, and how p moves
// after each update of w. The Trainer holds p (in State.P, so checkpoints
// carry it) and calls Init once, then Draw C times and Update once per
// iteration; a Method keeps no state a checkpoint would need beyond p.
//
// The built-in methods are started from their settings (MethodSettings):
// MAML (the fixed empirical distribution), TRMAML (Algorithm 1's projected
// stochastic ascent on the simplex), EntropicTRMAML (exponentiated-gradient
// ascent on the simplex), CVaR (projected ascent on the capped simplex of
// level a), and DROMAML, DRMAML and DRMAMLPlus (Weigher).
type Method interface {
	// Init validates the method's settings for a task set with the given
	// positive masses (TaskSet.Mass) and C instances per iteration, and
	// returns the initial p.
	Init(masses []float64, batch int) (p []float64, err error)
	// Draw draws, with rng, the task of one of the C instances of an
	// iteration at the current p, and returns it with the weight of its loss
	// in the meta-gradient estimate (the weights of one iteration make an
	// unbiased estimate of sum_i p_i grad F_i(w)).
	Draw(rng *rand.Rand, p []float64) (task int, weight float64)
	// Update moves p in place after the update of w, from the iteration's C
	// drawn tasks and their losses, measured at the iteration's (w, p).
	Update(p []float64, tasks []int, losses []float64)
	// Check refuses (after Init) a p the method cannot have produced: one
	// outside its feasible set (the simplex; CVaR's capped simplex; MAML's
	// fixed distribution) by more than rounding. The error starts with name,
	// the field p was read from, and names the offending entry. A resumed
	// checkpoint's p goes through it, so a p saved by another method or level
	// is refused instead of silently projected or misread.
	Check(name string, p []float64) error
}

// MethodSettings are a method's settings, kept apart from its run state:
// plain values (the exported fields, with yaml tags, are the method's config
// section) that a config holds and copies by assignment. New returns a
// Method running a copy of them, ready for Init; the settings never change
// while it runs.
type MethodSettings interface {
	New() Method
}

// Weigher is a Method that weighs the instances of an iteration by their own
// post-adaptation losses (DR-MAML's tail, Group DRO's weights): after the
// losses of the C instances drawn by Draw are computed and before the
// meta-gradient is taken, the Trainer calls Weigh, whose weights replace
// Draw's. Only the backward pass is weighted: with a WeighingObjective the
// losses and the meta-gradient come from one forward pass, exact in first
// and second order. Weigh may move p in place (Group DRO moves it before
// weighing); Update is still called after the step.
type Weigher interface {
	Method
	// Weigh writes into weights the weight of each instance in the
	// meta-gradient, from the instances' tasks and finite losses at the
	// iteration's w, and may move p.
	Weigh(p []float64, tasks []int, losses, weights []float64)
}

// CandidateMethod is the settings of a method that adapts more instances per
// iteration than it back-propagates (DR-MAML's candidate batch): the
// Trainer's Settings.Batch, and the Objective's Tasks, must then be
// CandidateBatch of the configured meta-batch (see DrawnBatch).
type CandidateMethod interface {
	MethodSettings
	// CandidateBatch returns the instances to draw and adapt per
	// iteration for a meta-batch of batch, or an error naming the setting
	// that does not fit it.
	CandidateBatch(batch int) (int, error)
}

// DrawnBatch is the number of instances the method of s draws per iteration
// for a configured meta-batch: CandidateBatch for a CandidateMethod, else
// batch.
func DrawnBatch(s MethodSettings, batch int) (int, error) {
	if c, ok := s.(CandidateMethod); ok {
		return c.CandidateBatch(batch)
	}
	return batch, nil
}

// ascent is what the methods that move p by stochastic ascent share: Algorithm
// 1's sampling (the C tasks uniformly and independently, task i's loss
// weighted (n/C) p_i in the meta-gradient) and its estimate of the gradient
// in p, g_p = (n/C) sum_k f_k e_{i_k}, scaled by the step size eta_p.
type ascent struct {
	n, c  int
	scale float64 // eta_p n / C
}

// init checks the step size and sets the sizes; it returns the uniform p
// that every ascent method starts from.
func (a *ascent) init(method string, step float64, masses []float64, batch int) ([]float64, error) {
	if err := checkSizes(method, masses, batch); err != nil {
		return nil, err
	}
	if err := errStep(method, "p_lr", step); err != nil {
		return nil, err
	}
	a.n, a.c = len(masses), batch
	a.scale = step * float64(a.n) / float64(a.c)
	p := make([]float64, a.n)
	for i := range p {
		p[i] = 1 / float64(a.n)
	}
	return p, nil
}

// Draw implements Method: task i uniformly, weight (n/C) p_i.
func (a *ascent) Draw(rng *rand.Rand, p []float64) (int, float64) {
	i := rng.IntN(a.n)
	return i, float64(a.n) / float64(a.c) * p[i]
}

// Check implements Method: p must lie on the simplex.
func (a *ascent) Check(name string, p []float64) error { return checkSimplex(name, p) }

// addStep adds eta_p g_p to v.
func (a *ascent) addStep(v []float64, tasks []int, losses []float64) {
	for k, i := range tasks {
		v[i] += a.scale * losses[k]
	}
}

// checkSizes refuses an empty task set, a non-positive batch and masses that
// are not positive and finite.
func checkSizes(method string, masses []float64, batch int) error {
	if len(masses) == 0 {
		return fmt.Errorf("metalearn: %s: the meta-training task set is empty", method)
	}
	if batch < 1 {
		return fmt.Errorf("metalearn: %s: batch must be >= 1, got %d", method, batch)
	}
	for i, m := range masses {
		if !(m > 0) || math.IsInf(m, 0) {
			return fmt.Errorf("metalearn: %s: task %d has mass %v, want a positive finite number", method, i, m)
		}
	}
	return nil
}

// sumTolerance is how far from 1 the sum of a stored p may be: rounding in
// the updates and in a checkpoint's averaged iterates stays orders of
// magnitude below it.
const sumTolerance = 1e-6

// checkSimplex refuses a p with a negative entry or a sum other than 1 (up
// to sumTolerance); errors start with name.
func checkSimplex(name string, p []float64) error {
	sum := 0.0
	for i, v := range p {
		if !(v >= 0) {
			return fmt.Errorf("%s[%d] = %v: task weights must be >= 0", name, i, v)
		}
		sum += v
	}
	if !(math.Abs(sum-1) <= sumTolerance) {
		return fmt.Errorf("%s: the task weights sum to %v, want 1 (a distribution over the tasks)", name, sum)
	}
	return nil
}
