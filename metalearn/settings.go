package metalearn

import (
	"fmt"
	"math"
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
