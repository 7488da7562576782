package graph

import (
	"gorgonia.org/gorgonia"
)

// Loss maps a model's predictions and the targets of each instance's points,
// both of shape (T, N, out), to the loss of every instance, shape (T). The
// inner loop descends it on the support set; the meta-objective weighs it on
// the query set. Spec.Loss chooses one.
type Loss interface {
	Name() string
	PerTask(pred, y *gorgonia.Node) (*gorgonia.Node, error)
}

// The losses of this package.
var (
	// MSELoss is the mean over points and outputs of the squared error (the
	// sinusoid regression of the paper). It is a loss the graph
	// differentiates; metalearn.MSE describes the same quantity as a metric
	// of evaluation reports.
	MSELoss Loss = mseLoss{}
	// SoftmaxCrossEntropy is the mean over points of the cross-entropy of
	// the softmax of the logits with the target distribution (one-hot rows
	// for classification).
	SoftmaxCrossEntropy Loss = softmaxCrossEntropy{}
)

type mseLoss struct{}

func (mseLoss) Name() string { return "mse" }

func (mseLoss) PerTask(pred, y *gorgonia.Node) (*gorgonia.Node, error) {
	diff, err := axpy(pred, y, -1)
	if err != nil {
		return nil, err
	}
	s := pred.Shape()
	return rowDot(diff, diff, 1/float64(s[1]*s[2]))
}

type softmaxCrossEntropy struct{}

func (softmaxCrossEntropy) Name() string { return "softmax_cross_entropy" }

// PerTask computes, with z the logits shifted by their (stop-gradient)
// maximum per point, (1/N) sum_p sum_c y_pc (log sum_c' exp(z_pc') - z_pc):
// the shift cancels in the value and, held constant, in every derivative,
// and no op here overflows.
func (softmaxCrossEntropy) PerTask(pred, y *gorgonia.Node) (*gorgonia.Node, error) {
	s := pred.Shape()
	m, err := maxLastStop(pred)
	if err != nil {
		return nil, err
	}
	if m, err = spreadLast(m, s[2]); err != nil {
		return nil, err
	}
	z, err := axpy(pred, m, -1)
	if err != nil {
		return nil, err
	}
	e, err := expNode(z)
	if err != nil {
		return nil, err
	}
	if e, err = sumLast(e); err != nil {
		return nil, err
	}
	lse, err := logNode(e)
	if err != nil {
		return nil, err
	}
	if lse, err = spreadLast(lse, s[2]); err != nil {
		return nil, err
	}
	nll, err := axpy(lse, z, -1)
	if err != nil {
		return nil, err
	}
	return rowDot(y, nll, 1/float64(s[1]))
}

// Score computes a per-instance score of an adapted model's predictions on
// every instance's query set, outside the graph (it is not differentiated).
// Spec.Score chooses one (nil: none). Its Name is the name of the
// metalearn.Metric that describes the score in reports ("accuracy").
type Score interface {
	Name() string
	// PerTask writes the score of each of the len(dst) instances from pred and
	// y, both (len(dst), points, out) row-major.
	PerTask(pred, y []float64, points, out int, dst []float64)
}

// Accuracy is the fraction of points whose largest prediction (the first on
// ties) is at the position of the largest target (the label of a one-hot
// row).
var Accuracy Score = accuracy{}

type accuracy struct{}

func (accuracy) Name() string { return "accuracy" }

func (accuracy) PerTask(pred, y []float64, points, out int, dst []float64) {
	for t := range dst {
		hits := 0
		for p := 0; p < points; p++ {
			off := (t*points + p) * out
			if argmax(pred[off:off+out]) == argmax(y[off:off+out]) {
				hits++
			}
		}
		dst[t] = float64(hits) / float64(points)
	}
}

// argmax is the index of the first largest entry of x.
func argmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
