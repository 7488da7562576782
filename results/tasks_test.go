package results_test

import (
	"math"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

// TestTaskCurves: tasks.csv is loaded where the run seals it; groups of
// tasks are ranked by their final value, best first, and their curves are
// the mean over the group's tasks, estimated over seeds.
func TestTaskCurves(t *testing.T) {
	t.Parallel()
	// Two seeds at levels 1 and 3: every task's value is the mean level,
	// 2, times its resultstest pattern; rows scale by 3, 2, 1.
	specs := []resultstest.Spec{
		resultstest.New("m", "maml", "second", 1, 5, 1).WithTasks(),
		resultstest.New("m", "maml", "second", 2, 5, 3).WithTasks(),
		resultstest.New("old", "maml", "first", 1, 5, 1), // no tasks.csv
	}
	groups := loadGroups(t, writeRuns(t, specs...))
	if len(groups) != 2 {
		t.Fatalf("%d groups", len(groups))
	}
	var g, old *results.Group
	for _, x := range groups {
		if x.Key.Order == "second" {
			g = x
		} else {
			old = x
		}
	}
	if old.HasTasks() || old.TaskGroups(results.MetaTest, 5) != nil {
		t.Error("a run without tasks.csv has task curves")
	}
	if !g.HasTasks() || !slices.Equal(g.TaskNames(results.MetaTest), resultstest.TestTasks) {
		t.Fatalf("tasks.csv not loaded: names %v", g.TaskNames(results.MetaTest))
	}
	// Meta-test values are level*(1..5): best first, in groups of one,
	// two and two for n = 3 (0 | 1, 2 | 3, 4 by index).
	want := [][]int{{0}, {1, 2}, {3, 4}}
	if got := g.TaskGroups(results.MetaTest, 3); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("meta-test groups %v, want %v", got, want)
	}
	// Meta-training values level*(0.5, 0.5, 2, 3): ties keep their order.
	if got := g.TaskGroups(results.MetaTrain, 10); !slices.EqualFunc(got, [][]int{{0}, {1}, {2}, {3}}, slices.Equal) {
		t.Errorf("meta-training groups %v: want one task each, best first", got)
	}
	c := g.TaskCurve(results.MetaTest, []int{3, 4})
	for r, it := range []float64{0, 100, 200} {
		// Mean over the tasks (4 and 5 times the level), then the seeds.
		mean := 2 * 4.5 * float64(3-r)
		if c.Iterations[r] != it || math.Abs(c.Points[r].Mean-mean) > 1e-12 {
			t.Errorf("row %d: iteration %v mean %v, want %v and %v", r, c.Iterations[r], c.Points[r].Mean, it, mean)
		}
		if s := c.Seeds; s[0][r] != 4.5*float64(3-r) || s[1][r] != 3*4.5*float64(3-r) {
			t.Errorf("row %d: seeds %v %v", r, s[0][r], s[1][r])
		}
	}
}
