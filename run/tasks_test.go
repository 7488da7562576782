package run

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/rundir"
)

// TestTasksRows: tasks.csv holds, at every evaluation of metrics.csv, each
// task's value, whose mean and maximum are that row's mean and worst, under
// the task names of result.json.
func TestTasksRows(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	res, err := Train(context.Background(), tinyConfig(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rundir.ReadTasks(filepath.Join(dir, rundir.TasksFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Train, res.MetaTrain.Tasks) || !slices.Equal(h.Test, res.MetaTest.Tasks) {
		t.Fatalf("tasks.csv names %d and %d tasks, not result.json's", len(h.Train), len(h.Test))
	}
	if !slices.Equal(h.Iterations, m.Iterations) || len(h.Iterations) < 3 {
		t.Fatalf("tasks.csv's iterations %v, metrics.csv's %v", h.Iterations, m.Iterations)
	}
	for r, it := range m.Iterations {
		v := func(c rundir.Column) float64 { return m.Values[c][r] }
		for _, c := range []struct {
			name        string
			values      []float64
			mean, worst float64
		}{
			{"train", h.TrainValues[r], v(rundir.TrainMean), v(rundir.TrainWorst)},
			{"test", h.TestValues[r], v(rundir.TestMean), v(rundir.TestWorst)},
		} {
			var sum float64
			for _, v := range c.values {
				sum += v
			}
			if mean := sum / float64(len(c.values)); math.Abs(mean-c.mean) > 1e-9*math.Abs(c.mean) {
				t.Errorf("iteration %d, %s: mean of the tasks %v, metrics.csv %v", it, c.name, mean, c.mean)
			}
			if worst := slices.Max(c.values); worst != c.worst {
				t.Errorf("iteration %d, %s: largest task %v, metrics.csv's worst %v", it, c.name, worst, c.worst)
			}
		}
	}
}
