package metalearn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// TaskStats are the paper's statistics of a model over a task set: each
// task's average post-adaptation loss, and the mean, worst (largest) and
// standard deviation of those averages across tasks. Evaluate measures
// losses; NewTaskStats takes any Metric.
type TaskStats struct {
	// Mean weighs every task equally; WeightedMean weighs task i by its
	// TaskSet.Mass, the distribution MAML optimises.
	Mean, WeightedMean float64
	Worst              float64
	// WorstTask is the index of the worst task: the largest loss (the
	// smallest score for a metric where higher is better).
	WorstTask int
	// Std is the population standard deviation across tasks (numpy's
	// default, as the paper's code computed it).
	Std float64
	// PerTask[i] is task i's loss averaged over its Count[i] instances.
	PerTask []float64
	Count   []int
}

// Evaluator runs the paper's evaluation protocol with an Objective built
// without a meta-gradient: draw task instances spread uniformly over a task
// set, adapt on each one's support points with the inner loop, measure the
// loss on its held-out query points, and average per task. Like its
// Objective, an Evaluator serves one goroutine at a time.
type Evaluator struct {
	Objective Objective
	batch     *Batch
	losses    []float64 // the values of a batch's instances
}

// NewEvaluator returns an Evaluator for instances with the given numbers of
// support and query points and data dimensions.
func NewEvaluator(obj Objective, support, query, in, out int) *Evaluator {
	return &Evaluator{
		Objective: obj,
		batch:     NewBatch(obj.Tasks(), support, query, in, out),
		losses:    make([]float64, obj.Tasks()),
	}
}

// Evaluate draws instances task instances of set for parameters w and
// measures each one's post-adaptation query loss. The instances are spread
// as evenly as possible (every task gets floor(instances/n) and a random
// subset of tasks one more) so that no task goes unmeasured; the paper draws
// tasks uniformly at random, which has the same expectation. It needs
// instances >= set.Len().
func (e *Evaluator) Evaluate(w []float64, set TaskSet, instances int, rng *rand.Rand) (TaskStats, error) {
	loss := func(w []float64, b *Batch, out []float64) error { return e.Objective.Losses(w, b, nil, out, nil) }
	// Losses: lower is better, as for MSE.
	return e.EvaluateScore(w, set, instances, rng, MSE, loss)
}

// Scorer writes a value for every instance row of b, for parameters w, into
// out (one per row of b): a loss, or a score of the adapted model such as
// its query accuracy.
type Scorer func(w []float64, b *Batch, out []float64) error

// EvaluateScore is Evaluate with the per-instance values given by score and
// the statistics in metric m's direction (the worst task of an accuracy is
// the least accurate). It draws the same instances as Evaluate.
func (e *Evaluator) EvaluateScore(w []float64, set TaskSet, instances int, rng *rand.Rand, m Metric, score Scorer) (TaskStats, error) {
	n := set.Len()
	if instances < n {
		return TaskStats{}, fmt.Errorf("metalearn: %d evaluation instances cannot cover %d tasks", instances, n)
	}
	// Task of each instance: a random permutation repeated, cut at instances.
	order := make([]int, instances)
	perm := rng.Perm(n)
	for i := range order {
		order[i] = perm[i%n]
	}
	sum := make([]float64, n)
	count := make([]int, n)
	T := e.batch.Tasks
	for start := 0; start < instances; start += T {
		rows := min(T, instances-start)
		for r := 0; r < T; r++ {
			// Rows past the last instance are filled to keep the graph's
			// shape, and their values are ignored.
			set.Sample(order[(start+r)%instances], rng, e.batch, r)
		}
		if err := score(w, e.batch, e.losses); err != nil {
			return TaskStats{}, err
		}
		for r := 0; r < rows; r++ {
			v := e.losses[r]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				what := "loss"
				if m.HigherIsBetter {
					what = m.Name
				}
				return TaskStats{}, fmt.Errorf("%w in evaluation on task %q: %s %v", ErrNonFinite, set.Name(order[start+r]), what, v)
			}
			sum[order[start+r]] += v
			count[order[start+r]]++
		}
	}
	mass := make([]float64, n)
	for i := range sum {
		sum[i] /= float64(count[i])
		mass[i] = set.Mass(i)
	}
	return NewTaskStats(sum, count, mass, m), nil
}

// NewTaskStats returns the statistics of the per-task averages perTask
// (over count[i] instances each) under metric m: the mean, the mean weighted
// by the task masses, the population standard deviation, and the worst task
// in m's direction (the largest loss, the smallest accuracy). It keeps
// perTask and count.
func NewTaskStats(perTask []float64, count []int, mass []float64, m Metric) TaskStats {
	st := TaskStats{PerTask: perTask, Count: count}
	st.Mean, st.Std = stat.PopMeanStdDev(perTask, nil)
	st.WeightedMean = stat.Mean(perTask, mass)
	if nonFinite([]float64{st.Mean, st.Std, st.WeightedMean}) >= 0 && nonFinite(perTask) < 0 {
		// Finite values whose sum or squares overflow (a diverging run's
		// losses): the same statistics of the values scaled to at most 1.
		scale := 0.0
		for _, v := range perTask {
			scale = math.Max(scale, math.Abs(v))
		}
		scaled := make([]float64, len(perTask))
		for i, v := range perTask {
			scaled[i] = v / scale
		}
		st.Mean, st.Std = stat.PopMeanStdDev(scaled, nil)
		st.Mean, st.Std = st.Mean*scale, st.Std*scale
		st.WeightedMean = stat.Mean(scaled, mass) * scale
	}
	st.WorstTask = m.WorstIndex(perTask)
	st.Worst = perTask[st.WorstTask]
	return st
}

// TailMean is CVaR_alpha of values (one per task, the tasks equally
// likely) in metric m's direction: the mean of the worst fraction 1-alpha
// of them, the boundary task counted in part, i.e. the largest
// sum_i q_i v_i over the distributions q with q_i <= 1/((1-alpha) n) (for
// a score where higher is better, the smallest). alpha in (0, 1); near 1 it
// tends to the worst task, near 0 to the mean.
func TailMean(values []float64, alpha float64, m Metric) float64 {
	v := slices.Clone(values)
	slices.Sort(v)
	if !m.HigherIsBetter {
		slices.Reverse(v)
	}
	capacity, mass, sum := 1/((1-alpha)*float64(len(v))), 1.0, 0.0
	for _, x := range v {
		if mass <= 0 {
			break
		}
		q := math.Min(capacity, mass)
		sum += q * x
		mass -= q
	}
	return sum
}
