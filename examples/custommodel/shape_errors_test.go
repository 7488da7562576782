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
// fit, or whose own ops fail, is refused when the objective is built (for
// training and for evaluation), with an error naming the model's type, or
// the loop's registered name (Spec.InnerName) and type, not a panic. An
// error of the model's forward pass inside the loop names the model alone.
func TestShapeErrorsNameTheModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		model     graph.Model
		inner     graph.InnerLoop
		want      []string
		trainOnly bool // an error of the meta-gradient, which evaluation does not build
	}{
		{"weight rows", linear{in: 3, out: 2, Rows: 1}, nil, []string{"model custommodel.linear", "(2, 3, 3) and (2, 4, 2)"}, false},
		{"outputs", linear{in: 3, out: 2, Extra: 2}, nil, []string{"model custommodel.linear", "predictions of shape (2, 3, 4)", "want (2, 3, 2)"}, false},
		{"bias", linear{in: 3, out: 2, Bias: true}, nil, []string{"model custommodel.linear", "(2, 3, 2) (2, 3)"}, false},
		{"task axis", linear{in: 3, out: 2, Flat: true}, nil, []string{"graph: model custommodel.linear: Forward returned predictions of shape (6, 2) for inputs of shape (2, 3, 3), want (2, 3, 2) (T, N, out)"}, false},
		{"nil", linear{in: 3, out: 2, Nil: true}, nil, []string{"model custommodel.linear", "no predictions"}, false},
		{"the model's error in a loop", linear{in: 3, out: 2, Flat: true}, modelOnly{}, []string{"graph: model custommodel.linear: Forward returned predictions of shape (6, 2)"}, false},
		{"inner loop", linear{in: 3, out: 2}, squeezing{}, []string{`inner loop "mine" (custommodel.squeezing)`, "parameter 0 of shape (12)", "want (2, 3, 2)"}, false},
		{"loop's own op", linear{in: 3, out: 2}, mismatched{}, []string{`graph: inner loop "mine" (custommodel.mismatched): `, "axpy"}, false},
		{"loop's own op, multi-step", linear{in: 3, out: 2}, multiMismatched{}, []string{`graph: inner loop "mine" (custommodel.multiMismatched): `, "axpy"}, false},
		{"empty meta-parameter", linear{in: 3, out: 2}, emptyOwn{}, []string{`graph: inner loop "mine" (custommodel.emptyOwn): ParamShapes gave its meta-parameter 0 the shape (0)`}, false},
		{"refused op", linear{in: 3, out: 2}, softmaxRate{}, []string{`inner loop "mine" (custommodel.softmaxRate)`, "model custommodel.linear", "Softmax"}, true},
	} {
		inner := c.inner
		if inner == nil {
			inner = graph.InnerSGD{Steps: 1, Alpha: 0.1}
		}
		for _, meta := range []bool{true, false} {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s: panic %v", c.name, r)
					}
				}()
				_, err = graph.NewObjective(graph.Spec{Model: c.model, Loss: graph.MSELoss, Tasks: 2, Support: 3, Query: 3,
					InShape: []int{3}, OutDim: 2, Inner: inner, InnerName: "mine", MetaGradient: meta})
			}()
			if c.trainOnly && !meta {
				if err != nil {
					t.Errorf("%s, evaluation: %v", c.name, err)
				}
				continue
			}
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%s (meta-gradient %v): error %v, want it to say %q", c.name, meta, err, w)
				}
			}
			if strings.HasPrefix(c.want[0], "model ") || strings.HasPrefix(c.want[0], "graph: model ") {
				if err != nil && strings.Contains(err.Error(), "inner loop") {
					t.Errorf("%s: error %v names the loop around the model", c.name, err)
				}
			}
		}
	}
}

// A user's inner loops whose own graph operations fail: adding a node of
// another shape to the parameters (mismatched), the same in a multi-step
// loop's AdaptSteps (multiMismatched), a meta-parameter of no size
// (emptyOwn), a learned step size through SoftMax, which the meta-gradient
// refuses (softmaxRate), and a loop that only runs the model (modelOnly).
type mismatched struct{}

func (mismatched) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }
func (mismatched) Adapt(s *graph.Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	n, err := gorgonia.Add(theta[0], theta[0])
	if err != nil {
		return nil, err
	}
	if _, err := graph.Axpy(n, s.X, 1); err != nil {
		return nil, err
	}
	return theta, nil
}

type multiMismatched struct{ mismatched }

func (l multiMismatched) AdaptSteps(s *graph.Support, theta, own gorgonia.Nodes) ([]gorgonia.Nodes, error) {
	theta, err := l.Adapt(s, theta, own)
	return []gorgonia.Nodes{theta}, err
}
func (multiMismatched) StepWeights(int, int) []float64 { return []float64{1} }

type emptyOwn struct{ squeezing }

func (emptyOwn) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return []tensor.Shape{{0}} }

type softmaxRate struct{}

func (softmaxRate) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return []tensor.Shape{{1}} }
func (softmaxRate) Adapt(s *graph.Support, theta, own gorgonia.Nodes) (gorgonia.Nodes, error) {
	rate, err := gorgonia.SoftMax(own[0])
	if err != nil {
		return nil, err
	}
	grads, err := s.Gradients(theta, nil, false)
	if err != nil {
		return nil, err
	}
	return graph.ScaledStep(theta, grads, gorgonia.Nodes{rate})
}

type modelOnly struct{}

func (modelOnly) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }
func (modelOnly) Adapt(s *graph.Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	if _, err := s.Cost(theta); err != nil {
		return nil, err
	}
	return theta, nil
}
