package metalearn

import "math/rand/v2"

// Batch is a meta-batch of few-shot task instances with the task axis first,
// laid out as dense row-major arrays so that a model can bind them directly:
// SupportX has shape (Tasks, Support, InDim), SupportY (Tasks, Support,
// OutDim), and QueryX, QueryY likewise with Query points.
type Batch struct {
	Tasks, Support, Query int
	InDim, OutDim         int
	SupportX, SupportY    []float64
	QueryX, QueryY        []float64
}

// NewBatch allocates a Batch for tasks instances of support and query points.
func NewBatch(tasks, support, query, inDim, outDim int) *Batch {
	return &Batch{
		Tasks: tasks, Support: support, Query: query, InDim: inDim, OutDim: outDim,
		SupportX: make([]float64, tasks*support*inDim),
		SupportY: make([]float64, tasks*support*outDim),
		QueryX:   make([]float64, tasks*query*inDim),
		QueryY:   make([]float64, tasks*query*outDim),
	}
}

// Row returns the slices of instance row t: its support inputs and targets and
// its query inputs and targets. A TaskSet fills them in Sample.
func (b *Batch) Row(t int) (sx, sy, qx, qy []float64) {
	sx = b.SupportX[t*b.Support*b.InDim : (t+1)*b.Support*b.InDim]
	sy = b.SupportY[t*b.Support*b.OutDim : (t+1)*b.Support*b.OutDim]
	qx = b.QueryX[t*b.Query*b.InDim : (t+1)*b.Query*b.InDim]
	qy = b.QueryY[t*b.Query*b.OutDim : (t+1)*b.Query*b.OutDim]
	return sx, sy, qx, qy
}

// Rows returns a Batch of instance rows [from, to) of b that shares b's
// memory: what it changes, b sees.
func (b *Batch) Rows(from, to int) *Batch {
	return &Batch{
		Tasks: to - from, Support: b.Support, Query: b.Query, InDim: b.InDim, OutDim: b.OutDim,
		SupportX: b.SupportX[from*b.Support*b.InDim : to*b.Support*b.InDim],
		SupportY: b.SupportY[from*b.Support*b.OutDim : to*b.Support*b.OutDim],
		QueryX:   b.QueryX[from*b.Query*b.InDim : to*b.Query*b.InDim],
		QueryY:   b.QueryY[from*b.Query*b.OutDim : to*b.Query*b.OutDim],
	}
}

// TaskSet is a finite set of tasks in the paper's sense: each task i is a
// distribution over few-shot instances (a support set of K points and a query
// set of J points drawn from one underlying data distribution).
type TaskSet interface {
	// Len is the number of tasks n.
	Len() int
	// Name identifies task i in reports, e.g. "amplitude [4.95,5.00)".
	Name(i int) string
	// Mass is the relative number of instances m_i of task i; MAML's empirical
	// meta-training distribution draws task i with probability m_i / sum_j m_j.
	Mass(i int) float64
	// Dims returns the input and output dimension of a data point.
	Dims() (in, out int)
	// Sample draws a fresh instance of task i into row t of b, using rng only.
	Sample(i int, rng *rand.Rand, b *Batch, t int)
}

// Objective is a model together with its unrolled inner-loop adaptation:
// for each instance t of a batch it adapts the parameters w on the support set
// and measures the loss L_t on the query set.
type Objective interface {
	// NumParams is the length of the flat parameter vector w.
	NumParams() int
	// Tasks is the number of instances per batch the objective was built for.
	Tasks() int
	// Losses writes the post-adaptation query loss of every instance of b into
	// losses (length Tasks()). If grad is not nil it also writes the gradient
	// of sum_t weights[t] * L_t with respect to w into grad (length
	// NumParams()): exact second order, or first order if the objective was
	// built so.
	Losses(w []float64, b *Batch, weights, losses, grad []float64) error
}

// WeighingObjective is an Objective whose meta-gradient weights can be
// chosen from the losses they weigh, in one evaluation: LossesWeighed writes
// the post-adaptation losses of every instance of b into losses, calls
// weigh(losses, weights) to fill weights, then writes the gradient of
// sum_t weights[t] * L_t into grad (if not nil), differentiating the same
// forward pass (graph.Objective runs its program up to the losses, then the
// rest). An error of weigh is returned as is and nothing more is computed.
// The Trainer uses it for a Weigher; an Objective without it costs such a
// method a second evaluation per iteration.
type WeighingObjective interface {
	Objective
	LossesWeighed(w []float64, b *Batch, weigh func(losses, weights []float64) error, weights, losses, grad []float64) error
}

// ScheduledObjective is an Objective whose meta-objective changes with the
// iteration, such as MAML++'s multi-step loss, annealed toward the last
// inner step (graph.MultiStepLoop): the Trainer calls AtIteration(i, n)
// before iteration i (from 0) of its n, so a resumed run gets the same
// objective at every iteration.
type ScheduledObjective interface {
	Objective
	AtIteration(i, n int)
}

// MetricObjective is an Objective that also scores the adapted model of every
// instance on its query set, e.g. by classification accuracy. Callers find it
// with a type assertion; an Objective without a metric need not implement it.
type MetricObjective interface {
	Objective
	// Metric names the score ("accuracy"), or is "" if the objective has none.
	Metric() string
	// LossesMetric is Losses that also writes the score of every instance
	// into metric (length Tasks()) when metric is not nil.
	LossesMetric(w []float64, b *Batch, weights, losses, metric, grad []float64) error
}
