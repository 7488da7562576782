package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/memory"
	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Spec describes a meta-objective graph: a model with its loss and metric,
// the shape of a meta-batch, and the inner loop that adapts the model to each
// instance.
type Spec struct {
	Model Model
	// Loss is minimised by the inner loop on the support set and reported
	// per instance on the query set: MSELoss or SoftmaxCrossEntropy.
	Loss Loss
	// Score, if not nil, scores the adapted model on the query set (e.g.
	// Accuracy); see Objective.LossesMetric.
	Score Score
	// Tasks is the number of instances T in a batch; Support (K) and Query
	// (J) the points per instance.
	Tasks, Support, Query int
	// InShape is the shape of one input point, e.g. {1} for the sinusoid or
	// {28, 28, 1} for H x W x C images (stored row-major, (h, w, c)); OutDim
	// the length of a target (the classes of one-hot labels).
	InShape []int
	OutDim  int
	// Steps inner SGD steps of size Alpha on the support loss.
	Steps int
	Alpha float64
	// FirstOrder holds the inner gradients constant in the meta-gradient.
	FirstOrder bool
	// Inner, if not nil, is the inner loop instead of InnerSGD{Steps, Alpha,
	// FirstOrder} (those three must then be zero): a loop written outside
	// this package, e.g. with learned step sizes. Its own meta-parameters
	// follow the model's in the flat parameter vector.
	Inner InnerLoop
	// MetaGradient builds the outer gradient; without it the graph only
	// computes adapted losses (evaluation).
	MetaGradient bool
	// Lanes, for an objective without a meta-gradient, splits its tasks
	// into that many groups, each compiled into a graph of its own; the
	// graphs run at once on up to GOMAXPROCS goroutines, so that no core
	// waits for the others between two ops (lanes.go). 0 means one lane
	// per 4 tasks for tasks of at least 16 MFLOP (the CNN's), else 1: the
	// lanes depend on Tasks alone, so the values never depend on the
	// machine's cores. Against one graph they may differ in the last bits,
	// where a product's kernel rounds a row differently for fewer rows.
	// The buffers of all lanes together are about those of one graph. An
	// objective with a meta-gradient has one graph.
	Lanes int
	// Dtype of every tensor of the graph: tensor.Float64 (the zero value
	// means it) or tensor.Float32, about twice as fast with half the memory
	// on large models; the Objective converts from and to float64 at its
	// boundary.
	Dtype tensor.Dtype
}

// dtype is s.Dtype with the zero value resolved to float64.
func (s Spec) dtype() tensor.Dtype {
	if s.Dtype == (tensor.Dtype{}) {
		return tensor.Float64
	}
	return s.Dtype
}

// inDim is the length of one input point.
func (s Spec) inDim() int {
	n := 1
	for _, d := range s.InShape {
		n *= d
	}
	return n
}

func (s Spec) validate() error {
	positive := len(s.InShape) > 0
	for _, d := range s.InShape {
		positive = positive && d >= 1
	}
	switch {
	case s.Model == nil:
		return fmt.Errorf("graph: Spec.Model is nil")
	case s.Loss == nil:
		return fmt.Errorf("graph: Spec.Loss is nil (graph.MSELoss or graph.SoftmaxCrossEntropy)")
	case s.Tasks < 1 || s.Support < 1 || s.Query < 1 || s.OutDim < 1:
		return fmt.Errorf("graph: Spec needs Tasks, Support, Query, OutDim >= 1, got %d, %d, %d, %d",
			s.Tasks, s.Support, s.Query, s.OutDim)
	case !positive:
		return fmt.Errorf("graph: Spec.InShape must list positive sizes, got %v", s.InShape)
	case s.dtype() != tensor.Float64 && s.dtype() != tensor.Float32:
		return fmt.Errorf("graph: Spec.Dtype must be tensor.Float64 or tensor.Float32, got %v", s.Dtype)
	case s.Lanes < 0:
		return fmt.Errorf("graph: Spec.Lanes must be >= 0 (0: one lane per 4 tasks of a large model), got %d", s.Lanes)
	case s.Inner != nil && (s.Steps != 0 || s.Alpha != 0 || s.FirstOrder):
		return fmt.Errorf("graph: Spec.Inner is set, so Spec.Steps, Alpha and FirstOrder must be zero (the inner loop holds them), got %d, %v, %v",
			s.Steps, s.Alpha, s.FirstOrder)
	case s.Inner != nil:
		return nil
	case s.Steps < 0:
		return fmt.Errorf("graph: Spec.Steps must be >= 0, got %d", s.Steps)
	case !(s.Alpha > 0):
		return fmt.Errorf("graph: Spec.Alpha must be > 0, got %v", s.Alpha)
	}
	return nil
}

// inner is the Spec's inner loop: Inner, or InnerSGD from Steps, Alpha and
// FirstOrder.
func (s Spec) inner() InnerLoop {
	if s.Inner != nil {
		return s.Inner
	}
	return InnerSGD{Steps: s.Steps, Alpha: s.Alpha, FirstOrder: s.FirstOrder}
}

// Objective is the meta-objective of a Spec compiled once into a gorgonia
// graph and an evaluation order of its nodes (a program). Each call rebinds
// the inputs (parameters, data, task weights) in place and reruns the
// program; it implements metalearn.Objective and metalearn.MetricObjective.
// Its ops keep state between runs, so one Objective must not be used by two
// goroutines at once.
type Objective struct {
	spec      Spec
	g         *Graph
	prog      program
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
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if n := spec.lanes(); n > 1 {
		return newLanes(spec, n)
	}
	if n := spec.groups(); n > 1 {
		return newGroups(spec, n)
	}
	o := &Objective{spec: spec, g: New(), predOut: -1}
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
	if theta, err = loop.Adapt(sup, theta, w[len(shapes):]); err != nil {
		return nil, err
	}
	if len(theta) != len(shapes) {
		return nil, fmt.Errorf("graph: the inner loop returned %d parameter tensors, the model has %d", len(theta), len(shapes))
	}
	// Nothing differentiates with respect to the adapted parameters, so
	// products by them may read their last step's terms (markAdapted).
	for i := range theta {
		if theta[i], err = markAdapted(theta[i]); err != nil {
			return nil, err
		}
	}

	forward := spec.Model.Forward
	v, values := ownPasses(spec.Model).(valueModel)
	d, once := ownPasses(spec.Model).(onceModel)
	switch {
	case values && !spec.MetaGradient:
		forward = v.forwardValues // nothing differentiates the query pass
	case once && spec.MetaGradient:
		// The meta-gradient differentiates the query pass once, and
		// nothing differentiates the meta-gradient (in first order as in
		// second: the second-order terms come from the support pass).
		forward = d.forwardOnce
	}
	pred, err := forward(qx, theta)
	if err != nil {
		return nil, err
	}
	losses, err := spec.Loss.PerTask(pred, qy)
	if err != nil {
		return nil, fmt.Errorf("graph: query loss: %w", err)
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
			return nil, fmt.Errorf("graph: meta-gradient: %w", err)
		}
		outputs = append(outputs, grads...)
	}
	if spec.Score != nil {
		outputs = append(outputs, pred)
	}
	o.prog.tasks = T
	idx := o.prog.compile(g, outputs)
	o.lossesOut = idx[0]
	if spec.MetaGradient {
		o.gradsOut = idx[1 : 1+len(w)]
	}
	if spec.Score != nil {
		o.predOut = idx[len(idx)-1]
	}
	return o, nil
}

// valueModel is implemented by models with a cheaper forward pass for
// graphs that take no derivative of it (same inputs, same values up to the
// order of float sums): NewObjective uses it for the query pass of an
// objective without a meta-gradient.
type valueModel interface {
	forwardValues(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error)
}

// ownPasses returns m if it is one of this package's models, whose
// valueModel and onceModel passes compute what its Forward does, and nil
// otherwise: a user's type that embeds one would inherit those passes
// and have them run instead of its own Forward.
func ownPasses(m Model) any {
	switch m.(type) {
	case CNN, *CNN:
		return m
	}
	return nil
}

// onceModel is implemented by models with a cheaper forward pass for
// graphs that differentiate it once and never differentiate that
// derivative again (same inputs, same values and first derivatives up to
// the order of float sums): NewObjective uses it for the query pass of
// an objective with a meta-gradient.
type onceModel interface {
	forwardOnce(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error)
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
		for _, s := range p.steps {
			if op, ok := s.op.(*op); ok {
				total += op.flops()
			}
		}
	}
	return total
}

// ShareBuffers makes o recycle its large intermediate values through the
// same pool as other, so that a training objective and the evaluation
// objective of the same model (whose activations have the same sizes when
// their batches match) hold one set of buffers between them instead of two:
// the process peaks at the larger of the two graphs, not their sum. Every
// pooled buffer is back in the pool when a call returns, so the two may be
// called in turn, but never at the same time (the same goroutine). Call it
// once, before either has run: BufferBytes counts o's buffers into other's
// pool.
func (o *Objective) ShareBuffers(other *Objective) {
	o.joinPool(other.programs()[0].pool, true)
}

// joinPool moves o's buffers into pool to and has its ops take theirs from
// it; with borrow, they may borrow larger buffers (memory.Pool.Get) and
// allocate, when nothing free fits, what the op would take in a graph of
// all of o's tasks.
func (o *Objective) joinPool(to *memory.Pool, borrow bool) {
	from := o.programs()[0].pool
	if from == to {
		return
	}
	to.Absorb(from)
	for _, p := range o.programs() { // the lanes of o share from
		for _, s := range p.steps {
			op, ok := s.op.(*op)
			if !ok || op.pool != from {
				continue
			}
			op.pool = to
			if borrow {
				op.borrow = op.outShape.TotalSize()
				if p.tasks < o.spec.Tasks && len(op.outShape) > 0 && op.outShape[0] == p.tasks {
					op.borrow = op.borrow / p.tasks * o.spec.Tasks
				}
			}
		}
		p.pool = to
	}
}

// BufferBytes is the memory of the large intermediate values (the CNN's
// activations and their gradients) that o's buffer pool has allocated so
// far, shared with the objectives of ShareBuffers: the pool keeps every
// buffer for reuse, so after a call of each this is the graphs' peak.
// Parameters, batches and small values are not counted.
func (o *Objective) BufferBytes() int64 { return o.programs()[0].pool.Bytes() }

// Graph returns the underlying graph, for inspection (node counts, dot); of
// an objective in lanes, the first lane's (the others differ only in their
// number of tasks).
func (o *Objective) Graph() *Graph {
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

// Losses implements metalearn.Objective.
func (o *Objective) Losses(w []float64, b *metalearn.Batch, weights, losses, grad []float64) error {
	return o.LossesMetric(w, b, weights, losses, nil, grad)
}

// LossesMetric implements metalearn.MetricObjective: Losses, and the metric of
// every instance's adapted model on its query set into metric if not nil.
func (o *Objective) LossesMetric(w []float64, b *metalearn.Batch, weights, losses, metric, grad []float64) error {
	if err := o.check(w, b, weights, losses, metric, grad); err != nil {
		return err
	}
	if o.inTurn {
		return o.runGroups(w, b, weights, losses, metric, grad)
	}
	if o.lanes != nil {
		return o.runLanes(w, b, losses, metric)
	}
	o.bind(w, b)
	if weights != nil {
		setFloats(o.weights, weights)
	}
	if err := o.prog.run(); err != nil {
		return fmt.Errorf("graph: running the meta-objective: %w", err)
	}
	getFloats(losses, o.prog.vals[o.lossesOut])
	o.outputs(b, grad, metric)
	return nil
}

// LossesWeighed implements metalearn.WeighingObjective: one run of the
// program, stopped after the losses (whose steps come first) for weigh to
// choose the weights, then resumed through the meta-gradient. The
// arithmetic is LossesMetric's with those weights, bit for bit, and the
// forward pass runs once.
func (o *Objective) LossesWeighed(w []float64, b *metalearn.Batch, weigh func(losses, weights []float64) error, weights, losses, grad []float64) error {
	if len(weights) != o.spec.Tasks {
		return fmt.Errorf("graph: weights has length %d, want %d", len(weights), o.spec.Tasks)
	}
	if err := o.check(w, b, weights, losses, nil, grad); err != nil {
		return err
	}
	if o.inTurn {
		// Groups run their tasks' programs one after another, so every
		// loss is known only after a forward pass of all of them: the
		// losses first, then the weighted meta-gradient.
		if err := o.runGroups(w, b, nil, losses, nil, nil); err != nil {
			return err
		}
		if err := weigh(losses, weights); err != nil {
			return err
		}
		return o.runGroups(w, b, weights, losses, nil, grad)
	}
	if o.lanes != nil { // no meta-gradient: nothing to weigh after the losses
		if err := o.runLanes(w, b, losses, nil); err != nil {
			return err
		}
		return weigh(losses, weights)
	}
	o.bind(w, b)
	if err := o.prog.runSteps(o.prog.steps[:o.prog.first]); err != nil {
		return fmt.Errorf("graph: running the meta-objective: %w", err)
	}
	getFloats(losses, o.prog.vals[o.lossesOut])
	if err := weigh(losses, weights); err != nil {
		return err
	}
	setFloats(o.weights, weights)
	if err := o.prog.runSteps(o.prog.steps[o.prog.first:]); err != nil {
		return fmt.Errorf("graph: running the meta-objective: %w", err)
	}
	o.outputs(b, grad, nil)
	return nil
}

// check refuses arguments of LossesMetric that do not fit the objective.
func (o *Objective) check(w []float64, b *metalearn.Batch, weights, losses, metric, grad []float64) error {
	s := o.spec
	switch {
	case len(w) != o.nParams:
		return fmt.Errorf("graph: %d parameters given, the model has %d", len(w), o.nParams)
	case b.Tasks != s.Tasks || b.Support != s.Support || b.Query != s.Query || b.InDim != s.inDim() || b.OutDim != s.OutDim:
		return fmt.Errorf("graph: batch of %d tasks (K=%d, J=%d, dims %d->%d) does not fit the graph (%d tasks, K=%d, J=%d, dims %d (%v)->%d)",
			b.Tasks, b.Support, b.Query, b.InDim, b.OutDim, s.Tasks, s.Support, s.Query, s.inDim(), s.InShape, s.OutDim)
	case len(losses) != s.Tasks:
		return fmt.Errorf("graph: losses has length %d, want %d", len(losses), s.Tasks)
	case metric != nil && s.Score == nil:
		return fmt.Errorf("graph: this objective was built without a score (Spec.Score)")
	case metric != nil && len(metric) != s.Tasks:
		return fmt.Errorf("graph: metric has length %d, want %d", len(metric), s.Tasks)
	case grad != nil && !s.MetaGradient:
		return fmt.Errorf("graph: this objective was built without a meta-gradient")
	case grad != nil && len(grad) != o.nParams:
		return fmt.Errorf("graph: grad has length %d, want %d", len(grad), o.nParams)
	case grad != nil && len(weights) != s.Tasks:
		return fmt.Errorf("graph: weights has length %d, want %d", len(weights), s.Tasks)
	}
	return nil
}

// bind copies the parameters w and the batch b into the graph's inputs.
func (o *Objective) bind(w []float64, b *metalearn.Batch) {
	off := 0
	for _, p := range o.params {
		off += setFloats(p, w[off:])
	}
	setFloats(o.sx, b.SupportX)
	setFloats(o.sy, b.SupportY)
	setFloats(o.qx, b.QueryX)
	setFloats(o.qy, b.QueryY)
}

// outputs copies the meta-gradient into grad and scores the predictions
// into metric, each if not nil, after a run.
func (o *Objective) outputs(b *metalearn.Batch, grad, metric []float64) {
	s := o.spec
	if grad != nil {
		off := 0
		for _, i := range o.gradsOut {
			off += getFloats(grad[off:], o.prog.vals[i])
		}
	}
	if metric != nil {
		v := o.prog.vals[o.predOut]
		pred, ok := v.Data().([]float64)
		if !ok { // float32: convert into a reused buffer
			if o.pred == nil {
				o.pred = make([]float64, v.Shape().TotalSize())
			}
			getFloats(o.pred, v)
			pred = o.pred
		}
		s.Score.PerTask(pred, b.QueryY, s.Query, s.OutDim, metric)
	}
}

// setFloats copies src into the tensor t (float64 or float32) and returns
// the number of values copied.
func setFloats(t *tensor.Dense, src []float64) int {
	if d, ok := t.Data().([]float64); ok {
		return copy(d, src)
	}
	d := t.Float32s()
	n := min(len(d), len(src))
	for i, v := range src[:n] {
		d[i] = float32(v)
	}
	return n
}

// getFloats copies the values of v (float64 or float32, scalar or tensor)
// into dst and returns the number copied.
func getFloats(dst []float64, v gorgonia.Value) int {
	switch d := v.Data().(type) {
	case []float64:
		return copy(dst, d)
	case []float32:
		n := min(len(d), len(dst))
		for i, x := range d[:n] {
			dst[i] = float64(x)
		}
		return n
	case float64:
		dst[0] = d
	case float32:
		dst[0] = float64(d)
	}
	return 1
}

// program evaluates the nodes a set of outputs depends on, in an order where
// every node follows its inputs; nodes nothing reads (differentiation also
// builds the gradients of data and constants) are never run. It replaces
// gorgonia's TapeMachine, whose per-run cost (a goroutine locked to a thread,
// per-instruction bookkeeping, reallocation of every register after Reset)
// showed in profiles. The ops of this package keep their output buffers
// between runs; large ones (the CNN's activations) go back to a pool after
// their last reader in a run, so the peak memory is that of the values
// alive at once (liveness), not of the whole graph.
type program struct {
	steps []step
	vals  []gorgonia.Value
	pool  *memory.Pool // shared with other programs by ShareBuffers
	tasks int          // of the graph (a lane's share of its objective's)
	// first is the number of steps the first output needs (the losses):
	// they come first, so runs of [0, first) and [first, len(steps)) are
	// the whole program in its order, with the losses known in between.
	first int
}

// step computes vals[i] = op(vals[args]...) for a node with an op; input
// nodes have no step and keep the value bound to them. After the step, the
// ops in release have had their last reader.
type step struct {
	i       int
	op      gorgonia.Op
	args    []int
	name    string
	release []*op
}

// pooledSize is the smallest output (in elements) whose buffer is recycled:
// below it, the bookkeeping costs more than the memory is worth.
const pooledSize = 1 << 14

// compile lists the steps for outputs and returns the value index of each.
func (p *program) compile(g *Graph, outputs gorgonia.Nodes) []int {
	index := map[*gorgonia.Node]int{}
	for k, out := range outputs {
		for _, n := range g.postOrder(out) {
			if _, ok := index[n]; ok {
				continue
			}
			i := len(p.vals)
			index[n] = i
			p.vals = append(p.vals, n.Value())
			if n.Op() == nil {
				continue
			}
			s := step{i: i, op: n.Op(), name: n.Name()}
			for _, c := range g.children(n) {
				s.args = append(s.args, index[c])
			}
			p.steps = append(p.steps, s)
		}
		if k == 0 {
			p.first = len(p.steps)
		}
	}
	idx := make([]int, len(outputs))
	isOut := map[int]bool{}
	for k, out := range outputs {
		idx[k] = index[out]
		isOut[idx[k]] = true
	}
	// Liveness: the last step reading each value. A value read by a
	// gorgonia op is never recycled: such an op may return a view of it.
	last := map[int]int{}
	foreign := map[int]bool{}
	for si, s := range p.steps {
		_, ours := s.op.(*op)
		for _, a := range s.args {
			last[a] = si
			foreign[a] = foreign[a] || !ours
		}
	}
	p.firstTiles(isOut)
	p.pool = memory.NewPool()
	for _, s := range p.steps {
		o, ok := s.op.(*op)
		if !ok || isOut[s.i] || foreign[s.i] || o.outShape.TotalSize() < pooledSize {
			continue
		}
		if r, read := last[s.i]; read {
			o.pool = p.pool
			p.steps[r].release = append(p.steps[r].release, o)
		}
	}
	return idx
}

// firstTiles makes every tile step whose value is read only as the tiled
// b of products (bmm's tiledB, which reads b[0]) and is no output write its
// first copy only, and every other tile step all copies: the meta-weights'
// tiles of an MLP, (25, 40, 40) for the sine MLP, of which the products
// read one (40, 40) copy. It changes the graph's ops in place, so it
// relies on every graph being compiled into one program (NewObjective).
func (p *program) firstTiles(isOut map[int]bool) {
	onlyFirst := map[int]bool{}
	for _, s := range p.steps {
		if o, ok := s.op.(*op); ok {
			if _, ok := o.k.(tileKernel); ok && !isOut[s.i] {
				onlyFirst[s.i] = true
			}
		}
	}
	for _, s := range p.steps {
		o, ours := s.op.(*op)
		k, isBmm := bmmKernel{}, false
		if ours {
			k, isBmm = o.k.(bmmKernel)
		}
		for j, a := range s.args {
			if !isBmm || !k.tiledB || j != 1 {
				delete(onlyFirst, a)
			}
		}
	}
	for _, s := range p.steps {
		if o, ok := s.op.(*op); ok {
			if k, ok := o.k.(tileKernel); ok {
				o.k = tileKernel{n: k.n, first: onlyFirst[s.i]}
			}
		}
	}
}

// run evaluates every step once.
func (p *program) run() error { return p.runSteps(p.steps) }

// runSteps runs steps, a part of p.steps in its order.
func (p *program) runSteps(steps []step) error {
	var in [8]gorgonia.Value
	for _, s := range steps {
		args := in[:0]
		for _, a := range s.args {
			args = append(args, p.vals[a])
		}
		v, err := s.op.Do(args...)
		if err != nil {
			return fmt.Errorf("node %q (%v): %w", s.name, s.op, err)
		}
		p.vals[s.i] = v
		for _, o := range s.release {
			o.release()
		}
	}
	return nil
}
