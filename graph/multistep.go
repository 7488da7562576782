package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MultiStepLoop is an InnerLoop whose meta-objective weighs the query loss
// of the adapted model after each of its steps, not only after the last:
// MAML++'s multi-step loss (Antoniou et al., 2019). In an objective with a
// meta-gradient, each task's loss (the one reported and differentiated) is
// then sum_s v_s L_query(theta_s), with v = StepWeights(i, n) set by
// Objective.AtIteration before iteration i of n (StepWeights(0, 1) until
// the first call). An objective without a meta-gradient (evaluation)
// scores the last step alone, through Adapt.
type MultiStepLoop interface {
	InnerLoop
	// AdaptSteps returns the adapted parameters after every step, the
	// last being what Adapt returns.
	AdaptSteps(s *Support, theta, own gorgonia.Nodes) ([]gorgonia.Nodes, error)
	// StepWeights returns the weight of every step's query loss at
	// iteration i (from 0) of n, one per step of AdaptSteps.
	StepWeights(i, n int) []float64
}

// multiStepLosses returns sum_s v_s L_s per task, where L_s is the query
// loss (T) of the adapted parameters of step s (last, of steps[len-1], is
// given) and v_s a (T) input, every entry v's s-th weight, bound to
// o.stepWeights[s].
func (o *Objective) multiStepLosses(steps []gorgonia.Nodes, qx, qy, last *gorgonia.Node,
	newInput func(string, tensor.Shape) (*gorgonia.Node, *tensor.Dense, error)) (*gorgonia.Node, error) {
	var total *gorgonia.Node
	for s, theta := range steps {
		l := last
		if s < len(steps)-1 {
			pred, err := forwardChecked(o.spec.Model.Forward, o.spec.Model, qx, qy, theta)
			if err != nil {
				return nil, err
			}
			if l, err = o.spec.Loss.PerTask(pred, qy); err != nil {
				return nil, fmt.Errorf("graph: query loss of inner step %d: %w", s+1, err)
			}
		}
		v, d, err := newInput(fmt.Sprintf("step_weight%d", s), tensor.Shape{o.spec.Tasks})
		if err != nil {
			return nil, err
		}
		o.stepWeights = append(o.stepWeights, d)
		term, err := gorgonia.HadamardProd(v, l)
		if err != nil {
			return nil, err
		}
		if total == nil {
			total = term
		} else if total, err = Axpy(total, term, 1); err != nil {
			return nil, err
		}
	}
	o.AtIteration(0, 1)
	return total, nil
}

// AtIteration implements metalearn.ScheduledObjective: before iteration i
// of n it sets a MultiStepLoop's step weights (StepWeights(i, n)); for
// any other loop it does nothing.
func (o *Objective) AtIteration(i, n int) {
	for _, l := range o.lanes {
		l.obj.AtIteration(i, n)
	}
	if len(o.stepWeights) == 0 {
		return
	}
	v := o.spec.Inner.(MultiStepLoop).StepWeights(i, n)
	row := make([]float64, o.spec.Tasks)
	for s, d := range o.stepWeights {
		for t := range row {
			row[t] = v[s]
		}
		setFloats(d, row)
	}
}
