package metalearn

import (
	"fmt"
	"math"
	"strings"
)

// Metric describes the per-task score that evaluation statistics are taken
// over: its name as recorded in a run's result.json and which direction is
// better. The direction decides what "worst" means: the largest MSE but the
// smallest accuracy. (How reports label and scale it is package
// results/display's.)
type Metric struct {
	// Name identifies the metric in result.json: "mse" or "accuracy".
	Name string
	// HigherIsBetter is true for scores (accuracy), false for losses (MSE).
	HigherIsBetter bool
}

// The metrics of the task families.
var (
	// MSE is the mean squared error of regression.
	MSE = Metric{Name: "mse"}
	// Accuracy is the fraction of query points classified correctly.
	Accuracy = Metric{Name: "accuracy", HigherIsBetter: true}
)

// Metrics lists every known metric.
var Metrics = []Metric{MSE, Accuracy}

// Max is the largest value the metric can take: 1 for accuracy (a
// fraction of the query points), +Inf for MSE. Reports refuse files with
// values above it.
func (m Metric) Max() float64 {
	if m.Name == Accuracy.Name {
		return 1
	}
	return math.Inf(1)
}

// MetricNamed returns the metric with the given Name.
func MetricNamed(name string) (Metric, error) {
	var names []string
	for _, m := range Metrics {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return Metric{}, fmt.Errorf("unknown metric %q (allowed: %s)", name, strings.Join(names, ", "))
}

// Worse reports whether a is strictly worse than b.
func (m Metric) Worse(a, b float64) bool {
	if m.HigherIsBetter {
		return a < b
	}
	return a > b
}

// WorstIndex returns the index of the worst value of xs (the first one on
// ties), or -1 for an empty slice. A NaN is worse than any number.
func (m Metric) WorstIndex(xs []float64) int {
	worst := -1
	for i, x := range xs {
		switch {
		case worst < 0:
			worst = i
		case math.IsNaN(xs[worst]):
		case math.IsNaN(x) || m.Worse(x, xs[worst]):
			worst = i
		}
	}
	return worst
}
