package graph

import (
	"errors"
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/exec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Objective is the meta-objective of a Spec compiled once into a gorgonia
// graph and an evaluation order of its nodes (a program,
// graph/internal/exec). Each call rebinds the inputs (parameters, data,
// task weights) in place and reruns the program; it implements metalearn.Objective and metalearn.MetricObjective.
// Its ops keep state between runs, so one Objective must not be used by two
// goroutines at once.
type Objective struct {
	spec      Spec
	g         *Graph
	prog      *exec.Program // nil in lanes or groups
	nParams   int
	params    []*tensor.Dense // meta-parameters, bound to the param nodes
	sx, sy    *tensor.Dense
	qx, qy    *tensor.Dense
	weights   *tensor.Dense
	lossesOut int       // index of the losses in prog's values
	predOut   int       // index of the query predictions (with a metric)
	gradsOut  []int     // indices of the meta-gradients
	pred      []float64 // float64 copy of float32 query predictions
	// lanes, if not nil, are the objectives of Spec.Lanes groups of tasks,
	// which a call runs instead of this one's own (empty) graph: at once,
	// or one after another if inTurn (task groups, groups.go).
	lanes  []lane
	inTurn bool
	part   []float64 // a group's meta-gradient, summed into the call's
	// stepWeights are a MultiStepLoop's weights of its steps' query
	// losses, one (T) input per step (multistep.go).
	stepWeights []*tensor.Dense
}

// AdaptedParams is implemented by models whose inner loop adapts only some
// of their parameters (the CNN's batch-norm scale and shift are meta-learned
// but, by default, not adapted). Adapted()[i] tells whether parameter tensor
// i is adapted; a model without the method adapts all.
type AdaptedParams interface {
	Adapted() []bool
}

// NewObjective builds the graph for spec: the per-task fast weights
// theta_0 = w (broadcast over the task axis), the inner loop (by default S
// steps theta_{s+1} = theta_s - alpha * grad L_support(theta_s) over the
// adapted parameters), the per-task query loss L_t(theta_S), and, if
// spec.MetaGradient, the gradient of sum_t weights_t * L_t with respect to w
// (and the inner loop's own parameters), differentiated through the inner
// gradients unless spec.FirstOrder.
func NewObjective(spec Spec) (*Objective, error) {
	return newObjective(spec, tuning{})
}

// newObjective is NewObjective with the engine's choices of tune.
func newObjective(spec Spec, tune tuning) (*Objective, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if n := spec.lanes(); n > 1 {
		return newLanes(spec, n, tune)
	}
	if n := spec.groups(tune); n > 1 {
		return newGroups(spec, n, tune)
	}
	o := &Objective{spec: spec, g: newGraph(), predOut: -1}
	g := o.g
	T, in := spec.Tasks, spec.inDim()

	newInput := func(name string, shape tensor.Shape) (*gorgonia.Node, *tensor.Dense, error) {
		t := tensor.New(tensor.WithShape(shape...), tensor.Of(spec.dtype()))
		n := gorgonia.NewTensor(g.ExprGraph, spec.dtype(), len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name))
		return n, t, gorgonia.Let(n, t)
	}

	var err error
	var sx, sy, qx, qy, weights *gorgonia.Node
	if sx, o.sx, err = newInput("support_x", tensor.Shape{T, spec.Support, in}); err != nil {
		return nil, err
	}
	if sy, o.sy, err = newInput("support_y", tensor.Shape{T, spec.Support, spec.OutDim}); err != nil {
		return nil, err
	}
	if qx, o.qx, err = newInput("query_x", tensor.Shape{T, spec.Query, in}); err != nil {
		return nil, err
	}
	if qy, o.qy, err = newInput("query_y", tensor.Shape{T, spec.Query, spec.OutDim}); err != nil {
		return nil, err
	}
	if weights, o.weights, err = newInput("task_weights", tensor.Shape{T}); err != nil {
		return nil, err
	}

	// Meta-parameters w (the model's, then the inner loop's own) and the
	// copies of the model's along the task axis.
	shapes := spec.Model.ParamShapes()
	adapted := make([]bool, len(shapes))
	for i := range adapted {
		adapted[i] = true
	}
	if a, ok := spec.Model.(AdaptedParams); ok {
		if adapted = a.Adapted(); len(adapted) != len(shapes) {
			return nil, fmt.Errorf("graph: model lists %d adapted flags for %d parameter tensors", len(adapted), len(shapes))
		}
	}
	loop := spec.inner()
	own := loop.ParamShapes(shapes, adapted)
	w := make(gorgonia.Nodes, len(shapes)+len(own))
	theta := make(gorgonia.Nodes, len(shapes))
	for i, s := range append(append([]tensor.Shape(nil), shapes...), own...) {
		if len(s) == 0 || s.TotalSize() < 1 {
			if i >= len(shapes) {
				return nil, spec.loopError(loop, fmt.Errorf("ParamShapes gave its meta-parameter %d the shape %v, want at least 1-D and non-empty", i-len(shapes), s))
			}
			return nil, fmt.Errorf("graph: parameter tensor %d has shape %v, want at least 1-D and non-empty", i, s)
		}
		o.nParams += s.TotalSize()
		var pw *tensor.Dense
		if w[i], pw, err = newInput(fmt.Sprintf("w%d", i), s); err != nil {
			return nil, err
		}
		o.params = append(o.params, pw)
		if i >= len(shapes) {
			continue
		}
		if theta[i], err = tile(w[i], T); err != nil {
			return nil, fmt.Errorf("graph: tiling parameter %d over tasks: %w", i, err)
		}
	}

	sup := &Support{Graph: g, Model: spec.Model, Loss: spec.Loss, X: sx, Y: sy, Adapted: adapted}
	var steps []gorgonia.Nodes // a MultiStepLoop's adapted parameters, step by step
	if ms, ok := loop.(MultiStepLoop); ok && spec.MetaGradient {
		if steps, err = ms.AdaptSteps(sup, theta, w[len(shapes):]); err != nil {
			return nil, spec.loopError(loop, err)
		}
		if n := len(ms.StepWeights(0, 1)); len(steps) == 0 || n != len(steps) {
			return nil, spec.loopError(loop, fmt.Errorf("AdaptSteps returned %d steps and %d step weights", len(steps), n))
		}
		theta = steps[len(steps)-1]
	} else if theta, err = loop.Adapt(sup, theta, w[len(shapes):]); err != nil {
		return nil, spec.loopError(loop, err)
	}
	if len(theta) != len(shapes) {
		return nil, spec.loopError(loop, fmt.Errorf("Adapt returned %d parameter tensors, the model has %d", len(theta), len(shapes)))
	}
	for i, s := range shapes {
		if want := append(tensor.Shape{T}, s...); theta[i] == nil || !theta[i].Shape().Eq(want) {
			return nil, spec.loopError(loop, fmt.Errorf("Adapt returned parameter %d of shape %v, want %v (T, the model's shape)", i, shapeOf(theta[i]), want))
		}
	}
	// Nothing differentiates with respect to the adapted parameters, so
	// products by them may read their last step's terms (markAdapted).
	for i := range theta {
		if theta[i], err = markAdapted(theta[i]); err != nil {
			return nil, err
		}
	}

	forward := spec.Model.Forward
	if m, ok := spec.Model.(passModel); ok {
		p := valuesPass // nothing differentiates the query pass
		if spec.MetaGradient {
			// The meta-gradient differentiates the query pass once, and
			// nothing differentiates the meta-gradient (in first order as
			// in second: the second-order terms come from the support pass).
			p = oncePass
		}
		if f := m.forwardPass(p, spec.Model); f != nil {
			forward = f
		}
	}
	pred, err := forwardChecked(forward, spec.Model, qx, qy, theta)
	if err != nil {
		return nil, err
	}
	losses, err := spec.Loss.PerTask(pred, qy)
	if err != nil {
		return nil, fmt.Errorf("graph: query loss: %w", err)
	}
	if steps != nil {
		if losses, err = o.multiStepLosses(steps, qx, qy, losses, newInput); err != nil {
			return nil, err
		}
	}
	outputs := gorgonia.Nodes{losses}
	if spec.MetaGradient {
		weighted, err := gorgonia.HadamardProd(weights, losses)
		if err != nil {
			return nil, err
		}
		cost, err := gorgonia.Sum(weighted)
		if err != nil {
			return nil, err
		}
		grads, err := g.Grad(cost, w...)
		if err != nil {
			return nil, fmt.Errorf("graph: meta-gradient through model %T and inner loop %s: %w", spec.Model, spec.loopName(loop), err)
		}
		outputs = append(outputs, grads...)
	}
	if spec.Score != nil {
		outputs = append(outputs, pred)
	}
	var idx []int
	o.prog, idx = compile(g, outputs, tune)
	o.lossesOut = idx[0]
	if spec.MetaGradient {
		o.gradsOut = idx[1 : 1+len(w)]
	}
	if spec.Score != nil {
		o.predOut = idx[len(idx)-1]
	}
	return o, nil
}

// pass is what a graph does with a forward pass: differentiate it as
// often as it likes (Forward), not at all (valuesPass) or once and never
// that derivative again (oncePass).
type pass int

const (
	trainedPass pass = iota
	valuesPass
	oncePass
)

// forwardFunc is a forward pass, as Model.Forward.
type forwardFunc func(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error)

// modelError is an error of a model's forward pass, naming the model's
// type: a user's model is told apart from the inner loop around it.
type modelError struct {
	model Model
	err   error
}

func (e *modelError) Error() string { return fmt.Sprintf("graph: model %T: %v", e.model, e.err) }
func (e *modelError) Unwrap() error { return e.err }

// forwardChecked runs forward, a pass of model m, on inputs x and checks
// that the predictions have the shape (T, N, out) of the targets y.
func forwardChecked(forward forwardFunc, m Model, x, y *gorgonia.Node, theta gorgonia.Nodes) (*gorgonia.Node, error) {
	pred, err := forward(x, theta)
	switch {
	case err != nil:
		return nil, &modelError{m, err}
	case pred == nil:
		return nil, &modelError{m, fmt.Errorf("Forward returned no predictions for inputs of shape %v", x.Shape())}
	case !pred.Shape().Eq(y.Shape()):
		return nil, &modelError{m, fmt.Errorf("Forward returned predictions of shape %v for inputs of shape %v, want %v (T, N, out)", pred.Shape(), x.Shape(), y.Shape())}
	}
	return pred, nil
}

// loopError is err, an error of building the inner loop l's graph or what
// it returned that does not fit the model, naming the loop: by the name it
// is registered under (Spec.InnerName), if given, and its Go type. An
// error of the model's forward pass inside the loop (modelError) names the
// model and is returned as it is.
func (s Spec) loopError(l InnerLoop, err error) error {
	if m := (*modelError)(nil); errors.As(err, &m) {
		return err
	}
	return fmt.Errorf("graph: inner loop %s: %w", s.loopName(l), err)
}

// loopName names the inner loop l: `"NAME" (TYPE)`, or TYPE without
// Spec.InnerName.
func (s Spec) loopName(l InnerLoop) string {
	if s.InnerName != "" {
		return fmt.Sprintf("%q (%T)", s.InnerName, l)
	}
	return fmt.Sprintf("%T", l)
}

// shapeOf is n's shape, or "no node" for nil.
func shapeOf(n *gorgonia.Node) any {
	if n == nil {
		return "no node"
	}
	return n.Shape()
}

// passModel is implemented by models with forward passes cheaper than
// Forward for graphs that differentiate them fewer times (same inputs, same
// values and, for oncePass, first derivatives, up to the order of float
// sums): NewObjective uses them for the query pass.
type passModel interface {
	// forwardPass returns the pass p of model, the Spec's Model, or nil for
	// Forward. It returns nil unless model is the receiver itself: a user's
	// type that embeds one of this package's models inherits this method,
	// but its own Forward must run.
	forwardPass(p pass, model Model) forwardFunc
}

// NumParams implements metalearn.Objective.
func (o *Objective) NumParams() int { return o.nParams }

// Tasks implements metalearn.Objective.
func (o *Objective) Tasks() int { return o.spec.Tasks }

// BatchShape implements metalearn.BatchShaper: the Spec's Support and Query.
func (o *Objective) BatchShape() (support, query int) { return o.spec.Support, o.spec.Query }

// FLOPs is the floating-point work of the matrix products and convolutions
// of one call (2 m n k per product, a convolution counted as its im2col
// product even where Winograd's algorithm does less), the bulk of a large
// model's arithmetic: divided by the time of a call it gives the achieved
// (for convolutions, effective) GFLOP/s.
func (o *Objective) FLOPs() float64 {
	total := 0.0
	for _, p := range o.programs() {
		for _, s := range p.Steps {
			if op, ok := s.Op.(*op); ok {
				total += op.flops()
			}
		}
	}
	return total
}

// firstGraph returns the underlying graph; of an objective in lanes, the
// first lane's (the others differ only in their number of tasks).
func (o *Objective) firstGraph() *Graph {
	if o.lanes != nil {
		return o.lanes[0].obj.g
	}
	return o.g
}

// Metric implements metalearn.MetricObjective: the name of Spec.Score, or ""
// without one.
func (o *Objective) Metric() string {
	if o.spec.Score == nil {
		return ""
	}
	return o.spec.Score.Name()
}
