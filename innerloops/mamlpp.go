package innerloops

import (
	"fmt"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MAMLPP is MAML++'s learned per-step, per-layer step sizes (Antoniou et
// al., 2019, "LSLR"): step s updates every adapted parameter tensor i with
// its own scalar step size rate[s][i], a meta-parameter that starts at
// inner.alpha. Its flat parameters, after the model's, are the rates step
// by step, one (1)-shaped tensor per adapted tensor. The objective scores
// the adapted model of the last step; MAMLPPMSL adds the multi-step loss.
type MAMLPP struct {
	Steps      int
	FirstOrder bool
}

// MAMLPPMSL is MAMLPP with MAML++'s multi-step loss (a graph.MultiStepLoop):
// the meta-objective weighs the query loss after every inner step, with
// weights annealed from uniform toward the last step over the first
// Iterations meta-iterations (StepWeights).
type MAMLPPMSL struct {
	MAMLPP
	Iterations int
}

func init() {
	Register("mamlpp", builderFunc(func(c configs.Config, firstOrder bool) (Built, error) {
		l := MAMLPP{Steps: c.Inner.Steps, FirstOrder: firstOrder}
		if s, ok := c.Inner.Section().(*configs.MAMLPPConfig); ok && s.MSLIterations > 0 {
			return Built{Loop: MAMLPPMSL{MAMLPP: l, Iterations: s.MSLIterations}, Own: c.Inner.Alpha}, nil
		}
		return Built{Loop: l, Own: c.Inner.Alpha}, nil
	}))
}

// ParamShapes implements graph.InnerLoop.
func (l MAMLPP) ParamShapes(_ []tensor.Shape, adapted []bool) []tensor.Shape {
	var shapes []tensor.Shape
	for range l.Steps {
		for _, a := range adapted {
			if a {
				shapes = append(shapes, tensor.Shape{1})
			}
		}
	}
	return shapes
}

// Adapt implements graph.InnerLoop.
func (l MAMLPP) Adapt(s *graph.Support, theta, own gorgonia.Nodes) (gorgonia.Nodes, error) {
	steps, err := l.AdaptSteps(s, theta, own)
	if err != nil {
		return nil, err
	}
	return steps[len(steps)-1], nil
}

// AdaptSteps returns the adapted parameters after every step.
func (l MAMLPP) AdaptSteps(s *graph.Support, theta, own gorgonia.Nodes) ([]gorgonia.Nodes, error) {
	steps := make([]gorgonia.Nodes, 0, l.Steps)
	for range l.Steps {
		grads, err := s.Gradients(theta, nil, l.FirstOrder)
		if err != nil {
			return nil, err
		}
		rates := make(gorgonia.Nodes, len(theta))
		for i, a := range s.Adapted {
			if a {
				rates[i], own = own[0], own[1:]
			}
		}
		if theta, err = graph.ScaledStep(theta, grads, rates); err != nil {
			return nil, err
		}
		steps = append(steps, theta)
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("innerloops: MAML++ needs at least one step, got %d", l.Steps)
	}
	return steps, nil
}

// MinStepWeight is the weight, times the number of steps, that the
// multi-step loss keeps on every step but the last after annealing (the
// authors' 0.03 / steps).
const MinStepWeight = 0.03

// StepWeights implements graph.MultiStepLoop with the annealing of the
// authors' code, by iteration instead of epoch: at progress p = i /
// Iterations the S-1 first steps weigh max((1-p)/S, 0.03/S) each and the
// last min((1 + (S-1) p)/S, 1 - (S-1) 0.03/S), so uniform at the start,
// (0.01, 0.01, 0.98) for three steps from p = 0.97 on. The weights sum to
// 1 throughout.
func (l MAMLPPMSL) StepWeights(i, _ int) []float64 {
	n := float64(l.Steps)
	p := float64(i) / float64(l.Iterations)
	v := make([]float64, l.Steps)
	for s := range l.Steps - 1 {
		v[s] = max((1-p)/n, MinStepWeight/n)
	}
	v[l.Steps-1] = min((1+(n-1)*p)/n, 1-(n-1)*MinStepWeight/n)
	return v
}
