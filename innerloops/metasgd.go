package innerloops

import (
	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MetaSGD is Meta-SGD's inner loop (Li et al., 2017): Steps steps
// theta <- theta - rate * grad, elementwise, with one learned step size per
// adapted model parameter. The step sizes follow the model's parameters in
// the flat vector, one tensor of the parameter's shape per adapted tensor,
// start at inner.alpha and get their own meta-gradient.
type MetaSGD struct {
	Steps      int
	FirstOrder bool
}

func init() {
	Register("metasgd", builderFunc(func(c configs.Config, firstOrder bool) (Built, error) {
		return Built{Loop: MetaSGD{Steps: c.Inner.Steps, FirstOrder: firstOrder}, Own: c.Inner.Alpha}, nil
	}))
}

// ParamShapes implements graph.InnerLoop: a step size per adapted parameter.
func (MetaSGD) ParamShapes(model []tensor.Shape, adapted []bool) []tensor.Shape {
	var rates []tensor.Shape
	for i, s := range model {
		if adapted[i] {
			rates = append(rates, s.Clone())
		}
	}
	return rates
}

// Adapt implements graph.InnerLoop.
func (l MetaSGD) Adapt(s *graph.Support, theta, own gorgonia.Nodes) (gorgonia.Nodes, error) {
	rates := make(gorgonia.Nodes, len(theta))
	for i, a := range s.Adapted {
		if a {
			rates[i], own = own[0], own[1:]
		}
	}
	for range l.Steps {
		grads, err := s.Gradients(theta, nil, l.FirstOrder)
		if err != nil {
			return nil, err
		}
		if theta, err = graph.ScaledStep(theta, grads, rates); err != nil {
			return nil, err
		}
	}
	return theta, nil
}
