package metalearn

import (
	"errors"
	"fmt"
	"math"
)

// ErrMethod reports a Method that broke its contract: a p that is not a
// distribution over the tasks (or outside the method's own Check), a task
// index out of range, or an instance weight that is not a finite number
// >= 0. The Trainer checks what every call gives it and stops at the first
// bad value, before it reaches w, p or a checkpoint; the error names the
// method's type, the call and the iteration.
var ErrMethod = errors.New("metalearn: the method broke its contract")

// methodError is an ErrMethod for the trainer's method at iteration it
// (0: in NewTrainer).
func (t *Trainer) methodError(it int, format string, args ...any) error {
	at := "in NewTrainer"
	if it > 0 {
		at = fmt.Sprintf("at iteration %d", it)
	}
	return fmt.Errorf("%w: method %T %s: %s", ErrMethod, t.Settings.Method, at, fmt.Sprintf(format, args...))
}

// checkP refuses a p that the method's call left outside the simplex over
// the n tasks, or outside its own feasible set (Method.Check).
func (t *Trainer) checkP(it int, call string, p []float64) error {
	if n := t.Train.Len(); len(p) != n {
		return t.methodError(it, "%s returned %d task weights, the task set has %d", call, len(p), n)
	}
	for i, v := range p {
		if !isWeight(v) {
			return t.methodError(it, "%s: p[%d] = %v: must be a finite number >= 0", call, i, v)
		}
	}
	if err := checkSimplex(call+": p", p); err != nil {
		return t.methodError(it, "%v", err)
	}
	if err := t.Settings.Method.Check(call+": p", p); err != nil {
		return t.methodError(it, "%v", err)
	}
	return nil
}

// checkDraw refuses a task index outside the task set or a weight that is
// not a finite number >= 0, from Draw at iteration it.
func (t *Trainer) checkDraw(it, task int, weight float64) error {
	if n := t.Train.Len(); task < 0 || task >= n {
		return t.methodError(it, "Draw returned task %d: must be in [0, %d]", task, n-1)
	}
	if !isWeight(weight) {
		return t.methodError(it, "Draw returned weight %v for task %q: must be a finite number >= 0", weight, t.Train.Name(task))
	}
	return nil
}

// checkWeights refuses an instance weight from Weigh that is not a finite
// number >= 0.
func (t *Trainer) checkWeights(it int, weights []float64) error {
	for k, w := range weights {
		if !isWeight(w) {
			return t.methodError(it, "Weigh gave instance %d weight %v: must be a finite number >= 0", k+1, w)
		}
	}
	return nil
}

func isWeight(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }
