package results

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/trmaml/trmaml/rundir"
)

// loadTasks reads the run's tasks.csv if its manifest seals one (runs
// started before the file existed have none; Verify checked it): its rows
// must be evaluations of metrics.csv, in order; a run stopped between the
// two files has fewer.
func (r *Run) loadTasks(dir string, sealed *rundir.Sealed) error {
	if _, ok := sealed.Manifest.Sum(rundir.TasksFile); !ok {
		return nil
	}
	path := filepath.Join(dir, rundir.TasksFile)
	h, err := rundir.ReadTasks(path)
	if err != nil {
		return err
	}
	n := min(len(h.Iterations), len(r.Iterations))
	if !slices.Equal(h.Iterations[:n], r.Iterations[:n]) {
		return fmt.Errorf("%s: iterations %v differ from those of %s, %v", path, h.Iterations, rundir.MetricsFile, r.Iterations)
	}
	r.Tasks = &h
	return nil
}

// taskRow returns the values of set's tasks at the run's evaluation row,
// nil where tasks.csv has none.
func (r *Run) taskRow(set Set, row int) []float64 {
	h := r.Tasks
	if h == nil || row >= len(h.Iterations) {
		return nil
	}
	if set == MetaTrain {
		return h.TrainValues[row]
	}
	return h.TestValues[row]
}

// HasTasks reports whether some run of the group has tasks.csv.
func (g *Group) HasTasks() bool {
	return slices.ContainsFunc(g.Runs, func(r *Run) bool { return r.Tasks != nil })
}

// TaskNames are the names of set's tasks in the group's tasks.csv (nil if
// it has none).
func (g *Group) TaskNames(set Set) []string {
	for _, r := range g.Runs {
		if r.Tasks != nil {
			if set == MetaTrain {
				return r.Tasks.Train
			}
			return r.Tasks.Test
		}
	}
	return nil
}

// TaskCurve returns the mean value over the tasks of set with the given
// indices (tasks.csv's columns) at each evaluation, estimated over the
// group's seeds that have tasks.csv.
func (g *Group) TaskCurve(set Set, tasks []int) Curve {
	return g.curve(func(r *Run, row int) float64 {
		v := r.taskRow(set, row)
		if v == nil || len(tasks) == 0 {
			return math.NaN()
		}
		sum := 0.0
		for _, i := range tasks {
			sum += v[i]
		}
		return sum / float64(len(tasks))
	})
}

// TaskGroups splits set's tasks into n groups of nearly equal size by their
// value at the group's last evaluation (mean over its seeds), best first
// (lowest loss, highest accuracy): what a figure draws one curve for each
// of, so that the curves of every group of tasks, from the easiest to the
// hardest, show over training. Every group of a figure shares the
// grouping of one (the reference), so that their curves are of the same
// tasks. Nil if the group has no tasks.csv.
func (g *Group) TaskGroups(set Set, n int) [][]int {
	var final []float64
	count := 0
	for _, r := range g.Runs {
		if r.Tasks == nil {
			continue
		}
		v := r.taskRow(set, len(r.Tasks.Iterations)-1)
		if final == nil {
			final = make([]float64, len(v))
		}
		if len(v) != len(final) {
			return nil // seeds of different task sets: GroupRuns keeps them apart
		}
		for i, x := range v {
			final[i] += x
		}
		count++
	}
	if count == 0 || len(final) == 0 {
		return nil
	}
	order := make([]int, len(final))
	for i := range order {
		order[i] = i
	}
	better := g.Score.HigherIsBetter
	slices.SortStableFunc(order, func(a, b int) int {
		if better {
			a, b = b, a
		}
		switch {
		case final[a] < final[b]:
			return -1
		case final[a] > final[b]:
			return 1
		}
		return 0
	})
	n = min(n, len(order))
	groups := make([][]int, n)
	for k := range groups {
		groups[k] = order[k*len(order)/n : (k+1)*len(order)/n]
	}
	return groups
}
