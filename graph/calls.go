package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A call of an Objective: its arguments checked, bound to the graph's
// inputs, the program run (whole, or in two parts around the choice of
// the task weights), and its outputs copied out in float64.

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
	if err := o.prog.Run(); err != nil {
		return fmt.Errorf("graph: running the meta-objective: %w", err)
	}
	getFloats(losses, o.prog.Vals[o.lossesOut])
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
	if err := o.prog.RunSteps(o.prog.Steps[:o.prog.First]); err != nil {
		return fmt.Errorf("graph: running the meta-objective: %w", err)
	}
	getFloats(losses, o.prog.Vals[o.lossesOut])
	if err := weigh(losses, weights); err != nil {
		return err
	}
	setFloats(o.weights, weights)
	if err := o.prog.RunSteps(o.prog.Steps[o.prog.First:]); err != nil {
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
			off += getFloats(grad[off:], o.prog.Vals[i])
		}
	}
	if metric != nil {
		v := o.prog.Vals[o.predOut]
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
