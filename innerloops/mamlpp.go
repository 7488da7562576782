package innerloops

import (
	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MAMLPP is MAML++'s learned per-step, per-layer step sizes (Antoniou et
// al., 2019, "LSLR"): step s updates every adapted parameter tensor i with
// its own scalar step size rate[s][i], a meta-parameter that starts at
// inner.alpha. Its flat parameters, after the model's, are the rates step
// by step, one (1)-shaped tensor per adapted tensor. MAML++'s multi-step
// loss (the query loss after every step) is not part of it: the objective
// scores the adapted model of the last step.
type MAMLPP struct {
	Steps      int
	FirstOrder bool
}

func init() {
	Register("mamlpp", builderFunc(func(c configs.Config, firstOrder bool) (Built, error) {
		return Built{Loop: MAMLPP{Steps: c.Inner.Steps, FirstOrder: firstOrder}, Own: c.Inner.Alpha}, nil
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
	}
	return theta, nil
}
