package metalearn

import (
	"math"
	"testing"
)

func TestMetricWorst(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		m    Metric
		xs   []float64
		want int
	}{
		{MSE, []float64{0.5, 2, 1, 2}, 1},
		{Accuracy, []float64{0.9, 0.4, 0.95, 0.4}, 1},
		{Accuracy, []float64{0.9}, 0},
		{MSE, nil, -1},
		{MSE, []float64{1, nan, 3}, 1},
		{Accuracy, []float64{nan, 0.1}, 0},
	} {
		if got := c.m.WorstIndex(c.xs); got != c.want {
			t.Errorf("%s.WorstIndex(%v) = %d, want %d", c.m.Name, c.xs, got, c.want)
		}
	}
}

func TestMetricNamedAndLabels(t *testing.T) {
	for _, m := range Metrics {
		got, err := MetricNamed(m.Name)
		if err != nil || got != m {
			t.Errorf("MetricNamed(%q) = %v, %v", m.Name, got, err)
		}
	}
	if _, err := MetricNamed("mae"); err == nil || err.Error() != `unknown metric "mae" (allowed: mse, accuracy)` {
		t.Errorf("MetricNamed(mae): %v", err)
	}
	if got := MSE.Axis("task"); got != "task MSE" {
		t.Errorf("MSE axis %q", got)
	}
	if got := Accuracy.Axis("final task"); got != "final task accuracy (%)" {
		t.Errorf("accuracy axis %q", got)
	}
	if Accuracy.Show(0.875) != 87.5 || MSE.Show(0.25) != 0.25 {
		t.Error("Show does not scale accuracy to percent or keeps MSE")
	}
}

func TestNewTaskStatsDirection(t *testing.T) {
	per := []float64{0.9, 0.5, 0.7}
	mass := []float64{2, 1, 1}
	acc := NewTaskStats(per, []int{1, 1, 1}, mass, Accuracy)
	if acc.WorstTask != 1 || acc.Worst != 0.5 {
		t.Errorf("accuracy worst = task %d (%v), want task 1 (0.5)", acc.WorstTask, acc.Worst)
	}
	if math.Abs(acc.WeightedMean-0.75) > 1e-15 || math.Abs(acc.Mean-0.7) > 1e-15 {
		t.Errorf("weighted mean %v, mean %v, want 0.75, 0.7", acc.WeightedMean, acc.Mean)
	}
	loss := NewTaskStats(per, []int{1, 1, 1}, mass, MSE)
	if loss.WorstTask != 0 || loss.Worst != 0.9 {
		t.Errorf("MSE worst = task %d (%v), want task 0 (0.9)", loss.WorstTask, loss.Worst)
	}
}
