package graph

import (
	"fmt"

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
	// InnerName, if not empty, is the name the inner loop is registered
	// under (the config's inner.kind): errors of building the loop's graph
	// give it beside the loop's Go type.
	InnerName string
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
