package graph

import (
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestInnerStepErrors checks the errors of the exported inner-loop pieces
// and of a Spec that mixes Spec.Inner with the default loop's fields.
func TestInnerStepErrors(t *testing.T) {
	t.Parallel()
	g := newGraph()
	node := func(name string, shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g.ExprGraph, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name))
	}
	theta, grad := node("theta", 2, 3, 4), node("grad", 2, 3, 4)
	mlp, _ := NewMLP([]int{1, 3, 1}, Tanh)
	base := Spec{Model: mlp, Loss: MSELoss, Tasks: 1, Support: 1, Query: 1, InShape: []int{1}, OutDim: 1}
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"rate of another shape", func() error {
			_, err := ScaledStep(gorgonia.Nodes{theta}, gorgonia.Nodes{grad}, gorgonia.Nodes{node("r", 4, 3)})
			return err
		}, "graph: ScaledStep, parameter 0: step size of shape (4, 3) for a parameter of shape (3, 4): want (3, 4) or (1)"},
		{"missing rates", func() error {
			_, err := ScaledStep(gorgonia.Nodes{theta}, gorgonia.Nodes{grad}, nil)
			return err
		}, "graph: ScaledStep: 1 gradients and 0 rates for 1 parameter tensors"},
		{"missing gradients", func() error {
			_, err := SGDStep(gorgonia.Nodes{theta}, nil, 0.1)
			return err
		}, "graph: SGDStep: 0 gradients for 1 parameter tensors"},
		{"Inner and Steps", func() error {
			s := base
			s.Inner, s.Steps = InnerSGD{Steps: 1, Alpha: 0.1}, 1
			_, err := NewObjective(s)
			return err
		}, "graph: Spec.Inner is set, so Spec.Steps, Alpha and FirstOrder must be zero"},
		{"scalar loop parameter", func() error {
			s := base
			s.Inner = scalarRate{}
			_, err := NewObjective(s)
			return err
		}, "graph: inner loop graph.scalarRate: ParamShapes gave its meta-parameter 0 the shape (), want at least 1-D and non-empty"},
	}
	for _, c := range cases {
		if err := c.run(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// scalarRate asks for a 0-D meta-parameter, which NewObjective refuses.
type scalarRate struct{ InnerSGD }

func (scalarRate) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return []tensor.Shape{{}} }
