package innerloops

import (
	"fmt"

	"github.com/trmaml/trmaml/graph"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ANIL (almost no inner loop) adapts only the last Head parameter tensors
// of the model (its head), with Steps SGD steps of size Alpha; the body is
// meta-learned but not adapted.
type ANIL struct {
	Steps, Head int
	Alpha       float64
	FirstOrder  bool
}

// ParamShapes implements graph.InnerLoop: ANIL has no meta-parameters.
func (ANIL) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }

// Adapt implements graph.InnerLoop.
func (l ANIL) Adapt(s *graph.Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	if l.Head < 1 || l.Head > len(theta) {
		return nil, fmt.Errorf("innerloops: ANIL.Head must be in 1..%d (the parameter tensors), got %d", len(theta), l.Head)
	}
	head := make([]bool, len(theta))
	for i := len(theta) - l.Head; i < len(theta); i++ {
		head[i] = true
	}
	for step := 0; step < l.Steps; step++ {
		grads, err := s.Gradients(theta, head, l.FirstOrder)
		if err != nil {
			return nil, err
		}
		if theta, err = graph.SGDStep(theta, grads, l.Alpha); err != nil {
			return nil, err
		}
	}
	return theta, nil
}

// PerStepSGD is MAML++'s learned per-layer, per-step step sizes: step s
// updates every adapted parameter tensor i with its own scalar step size
// rate[s][i], a meta-parameter. Its flat parameters, after the model's, are
// the rates step by step, one (1)-shaped tensor per adapted tensor.
type PerStepSGD struct{ Steps int }

// ParamShapes implements graph.InnerLoop.
func (l PerStepSGD) ParamShapes(_ []tensor.Shape, adapted []bool) []tensor.Shape {
	var shapes []tensor.Shape
	for s := 0; s < l.Steps; s++ {
		for _, a := range adapted {
			if a {
				shapes = append(shapes, tensor.Shape{1})
			}
		}
	}
	return shapes
}

// Adapt implements graph.InnerLoop.
func (l PerStepSGD) Adapt(s *graph.Support, theta, own gorgonia.Nodes) (gorgonia.Nodes, error) {
	for step := 0; step < l.Steps; step++ {
		grads, err := s.Gradients(theta, nil, false)
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
