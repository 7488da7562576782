package metalearn

import (
	"fmt"
	"math"
	"math/rand/v2"

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
	losses    []float64
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

// Evaluate draws instances task instances of set for parameters w. The
// instances are spread as evenly as possible (every task gets
// floor(instances/n) and a random subset of tasks one more) so that no task
// goes unmeasured; the paper draws tasks uniformly at random, which has the
// same expectation. It needs instances >= set.Len().
func (e *Evaluator) Evaluate(w []float64, set TaskSet, instances int, rng *rand.Rand) (TaskStats, error) {
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
			// shape, and their losses are ignored.
			set.Sample(order[(start+r)%instances], rng, e.batch, r)
		}
		if err := e.Objective.Losses(w, e.batch, nil, e.losses, nil); err != nil {
			return TaskStats{}, err
		}
		for r := 0; r < rows; r++ {
			l := e.losses[r]
			if math.IsNaN(l) || math.IsInf(l, 0) {
				return TaskStats{}, fmt.Errorf("%w in evaluation on task %q: loss %v", ErrNonFinite, set.Name(order[start+r]), l)
			}
			sum[order[start+r]] += l
			count[order[start+r]]++
		}
	}
	mass := make([]float64, n)
	for i := range sum {
		sum[i] /= float64(count[i])
		mass[i] = set.Mass(i)
	}
	// Losses: lower is better, as for MSE.
	return NewTaskStats(sum, count, mass, MSE), nil
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
	st.WorstTask = m.WorstIndex(perTask)
	st.Worst = perTask[st.WorstTask]
	return st
}
