package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// InnerLoop adapts the per-task copies of a model's parameters to each
// task's support set, as graph nodes, so that the meta-gradient is
// differentiated through it. InnerSGD is MAML's loop (what NewObjective runs
// when Spec.Inner is nil); a loop written elsewhere (Meta-SGD's learned
// step sizes, MAML++'s per-step rates, ANIL's adapted head) plugs in
// through Spec.Inner and is built from Support.Cost, Support.Gradients,
// SGDStep and ScaledStep.
type InnerLoop interface {
	// ParamShapes lists the shapes of the loop's own meta-parameters (e.g.
	// Meta-SGD's step sizes) given the model's parameter shapes and which of
	// them the model adapts (Support.Adapted); nil for none. They follow the
	// model's in the flat parameter vector and get a meta-gradient too, so
	// each must influence the adapted model. Keep every shape at least 1-D.
	ParamShapes(model []tensor.Shape, adapted []bool) []tensor.Shape
	// Adapt returns the adapted per-task parameters, one node per model
	// parameter tensor with the shape of theta's. theta[i] holds the T
	// per-task copies (T, shape...) of the model's parameter i; own[i] is
	// the loop's parameter i, without a task axis.
	Adapt(s *Support, theta, own gorgonia.Nodes) (gorgonia.Nodes, error)
}

// Support is a batch's support set as an inner loop sees it.
type Support struct {
	Graph *Graph
	Model Model
	Loss  Loss
	// X (T, K, in) and Y (T, K, out) are the support points of every task.
	X, Y *gorgonia.Node
	// Adapted[i] tells whether the model adapts its parameter tensor i (the
	// model's AdaptedParams; all true for a model without the method).
	Adapted []bool
}

// Cost returns the support loss of the per-task parameters theta, summed
// over the tasks: a scalar node to differentiate.
func (s *Support) Cost(theta gorgonia.Nodes) (*gorgonia.Node, error) {
	pred, err := forwardChecked(s.Model.Forward, s.Model, s.X, s.Y, theta)
	if err != nil {
		return nil, err
	}
	losses, err := s.Loss.PerTask(pred, s.Y)
	if err != nil {
		return nil, fmt.Errorf("graph: support loss: %w", err)
	}
	return gorgonia.Sum(losses)
}

// Gradients returns the gradient of Cost(theta) with respect to every
// parameter tensor i with adapt[i] (nil for the others); a nil adapt means
// s.Adapted. With firstOrder each gradient is wrapped in StopGradient, so
// the meta-gradient treats it as a constant (first-order MAML); otherwise
// the meta-gradient differentiates through it, exactly.
func (s *Support) Gradients(theta gorgonia.Nodes, adapt []bool, firstOrder bool) (gorgonia.Nodes, error) {
	if adapt == nil {
		adapt = s.Adapted
	}
	if len(adapt) != len(theta) {
		return nil, fmt.Errorf("graph: %d adapted flags for %d parameter tensors", len(adapt), len(theta))
	}
	cost, err := s.Cost(theta)
	if err != nil {
		return nil, err
	}
	var wrt gorgonia.Nodes
	for i, a := range adapt {
		if a {
			wrt = append(wrt, theta[i])
		}
	}
	if len(wrt) == 0 {
		return make(gorgonia.Nodes, len(theta)), nil
	}
	grads, err := s.Graph.Grad(cost, wrt...)
	if err != nil {
		return nil, fmt.Errorf("graph: inner gradient: %w", err)
	}
	out := make(gorgonia.Nodes, len(theta))
	for i, k := 0, 0; i < len(theta); i++ {
		if !adapt[i] {
			continue
		}
		if out[i] = grads[k]; firstOrder {
			if out[i], err = StopGradient(out[i]); err != nil {
				return nil, err
			}
		}
		k++
	}
	return out, nil
}

// SGDStep returns theta[i] - alpha*grads[i] for every i with a gradient,
// and theta[i] itself where grads[i] is nil.
func SGDStep(theta, grads gorgonia.Nodes, alpha float64) (gorgonia.Nodes, error) {
	if len(grads) != len(theta) {
		return nil, fmt.Errorf("graph: SGDStep: %d gradients for %d parameter tensors", len(grads), len(theta))
	}
	next := append(gorgonia.Nodes(nil), theta...)
	for i, g := range grads {
		if g == nil {
			continue
		}
		var err error
		if next[i], err = axpy(theta[i], g, -alpha); err != nil {
			return nil, fmt.Errorf("graph: SGDStep, parameter %d: %w", i, err)
		}
	}
	return next, nil
}

// ScaledStep returns theta[i] - rates[i] * grads[i] for every i with a
// gradient (theta[i] itself where grads[i] is nil; rates[i] may then be nil
// too), where the step sizes
// rates[i] are nodes, typically meta-parameters, shared by the tasks: of
// the shape of one task's parameter i (a step size per parameter, as in
// Meta-SGD) or of shape (1) (one per tensor, as in MAML++'s per-layer,
// per-step rates). The meta-gradient reaches the rates through the step.
func ScaledStep(theta, grads, rates gorgonia.Nodes) (gorgonia.Nodes, error) {
	if len(grads) != len(theta) || len(rates) != len(theta) {
		return nil, fmt.Errorf("graph: ScaledStep: %d gradients and %d rates for %d parameter tensors", len(grads), len(rates), len(theta))
	}
	next := append(gorgonia.Nodes(nil), theta...)
	for i, g := range grads {
		if g == nil {
			continue
		}
		r, err := spreadRate(rates[i], theta[i].Shape())
		if err != nil {
			return nil, fmt.Errorf("graph: ScaledStep, parameter %d: %w", i, err)
		}
		d, err := mul(r, g)
		if err != nil {
			return nil, fmt.Errorf("graph: ScaledStep, parameter %d: %w", i, err)
		}
		if next[i], err = axpy(theta[i], d, -1); err != nil {
			return nil, fmt.Errorf("graph: ScaledStep, parameter %d: %w", i, err)
		}
	}
	return next, nil
}

// spreadRate copies the step size r over the per-task parameter shape
// (T, s...): r has shape (s...) or (1).
func spreadRate(r *gorgonia.Node, to tensor.Shape) (*gorgonia.Node, error) {
	rs := r.Shape()
	switch {
	case rs.Eq(to[1:]):
		return tile(r, to[0])
	case rs.TotalSize() == 1 && len(rs) == 1:
		t, err := tile(r, to.TotalSize())
		if err != nil {
			return nil, err
		}
		return reshape(t, to)
	}
	return nil, fmt.Errorf("step size of shape %v for a parameter of shape %v: want %v or (1)", rs, to[1:], to[1:])
}

// InnerSGD is MAML's inner loop: Steps steps of plain gradient descent
// with step size Alpha on the support loss, over the tensors the model
// adapts; with FirstOrder the meta-gradient holds the inner gradients
// constant. (metalearn.SGD is the outer optimiser of the meta-parameters.)
type InnerSGD struct {
	Steps      int
	Alpha      float64
	FirstOrder bool
}

// ParamShapes implements InnerLoop: InnerSGD has no meta-parameters.
func (InnerSGD) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }

// Adapt implements InnerLoop.
func (l InnerSGD) Adapt(s *Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	if l.Steps < 0 || !(l.Alpha > 0) {
		return nil, fmt.Errorf("needs Steps >= 0 and Alpha > 0, got %d and %v", l.Steps, l.Alpha)
	}
	for step := 0; step < l.Steps; step++ {
		grads, err := s.Gradients(theta, nil, l.FirstOrder)
		if err != nil {
			return nil, fmt.Errorf("graph: inner step %d: %w", step+1, err)
		}
		if theta, err = SGDStep(theta, grads, l.Alpha); err != nil {
			return nil, err
		}
	}
	return theta, nil
}
