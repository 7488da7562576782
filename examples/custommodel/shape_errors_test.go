package custommodel

import (
	"strings"
	"testing"

	"github.com/trmaml/trmaml/graph"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// linear is a user's one-layer model with its bugs: its weight declared
// with an extra input row (Rows), predictions of Extra more outputs than
// the data's, a bias of the wrong size (Bias), the task axis folded away
// (Flat), no predictions at all (Nil).
type linear struct {
	in, out, Rows, Extra int
	Bias, Flat, Nil      bool
}

func (m linear) ParamShapes() []tensor.Shape {
	s := []tensor.Shape{{m.in + m.Rows, m.out + m.Extra}}
	if m.Bias {
		s = append(s, tensor.Shape{m.out + 1})
	}
	return s
}

func (m linear) Forward(x *gorgonia.Node, p gorgonia.Nodes) (*gorgonia.Node, error) {
	if m.Nil {
		return nil, nil
	}
	z, err := graph.MatMul(x, p[0], false, false)
	if err != nil {
		return nil, err
	}
	if m.Bias {
		return graph.AddBias(z, p[1])
	}
	if m.Flat {
		s := z.Shape()
		return graph.Reshape(z, s[0]*s[1], s[2])
	}
	return z, nil
}

// squeezing is a user's inner loop that returns each parameter flattened.
type squeezing struct{}

func (squeezing) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }
func (squeezing) Adapt(s *graph.Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	out := make(gorgonia.Nodes, len(theta))
	for i, t := range theta {
		var err error
		if out[i], err = graph.Reshape(t, t.Shape().TotalSize()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TestShapeErrorsNameTheModel: a model or inner loop whose graph does not
// fit is refused when the objective is built, with an error naming the
// model's or loop's type and the shapes, not a panic.
func TestShapeErrorsNameTheModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		model graph.Model
		inner graph.InnerLoop
		want  []string
	}{
		{"weight rows", linear{in: 3, out: 2, Rows: 1}, nil, []string{"model custommodel.linear", "(2, 3, 3) and (2, 4, 2)"}},
		{"outputs", linear{in: 3, out: 2, Extra: 2}, nil, []string{"model custommodel.linear", "predictions of shape (2, 3, 4)", "want (2, 3, 2)"}},
		{"bias", linear{in: 3, out: 2, Bias: true}, nil, []string{"model custommodel.linear", "(2, 3, 2) (2, 3)"}},
		{"task axis", linear{in: 3, out: 2, Flat: true}, nil, []string{"graph: model custommodel.linear: Forward returned predictions of shape (6, 2) for inputs of shape (2, 3, 3), want (2, 3, 2) (T, N, out)"}},
		{"nil", linear{in: 3, out: 2, Nil: true}, nil, []string{"model custommodel.linear", "no predictions"}},
		{"inner loop", linear{in: 3, out: 2}, squeezing{}, []string{"inner loop custommodel.squeezing", "parameter 0 of shape (12)", "want (2, 3, 2)"}},
	} {
		inner := c.inner
		if inner == nil {
			inner = graph.InnerSGD{Steps: 1, Alpha: 0.1}
		}
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			_, err = graph.NewObjective(graph.Spec{Model: c.model, Loss: graph.MSELoss, Tasks: 2, Support: 3, Query: 3,
				InShape: []int{3}, OutDim: 2, Inner: inner, MetaGradient: true})
		}()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to say %q", c.name, err, w)
			}
		}
	}
}
