package innerloops

import (
	"fmt"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ANIL (almost no inner loop; Raghu et al., 2020) adapts only the last Head
// parameter tensors of the model (its head), with Steps SGD steps of size
// Alpha; the body is meta-learned but not adapted.
type ANIL struct {
	Steps, Head int
	Alpha       float64
	FirstOrder  bool
}

func init() {
	Register("anil", builderFunc(func(c configs.Config, firstOrder bool) (Built, error) {
		s := c.Inner.Section().(*configs.ANILConfig)
		return Built{Loop: ANIL{Steps: c.Inner.Steps, Head: s.Head, Alpha: c.Inner.Alpha, FirstOrder: firstOrder}}, nil
	}))
}

// ParamShapes implements graph.InnerLoop: ANIL has no meta-parameters.
func (ANIL) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }

// Adapt implements graph.InnerLoop.
func (l ANIL) Adapt(s *graph.Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	if l.Head < 1 || l.Head > len(theta) {
		return nil, fmt.Errorf("inner.anil.head = %d: must be in [1, %d], the model's parameter tensors", l.Head, len(theta))
	}
	head := make([]bool, len(theta))
	for i := len(theta) - l.Head; i < len(theta); i++ {
		head[i] = s.Adapted[i]
	}
	for range l.Steps {
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
