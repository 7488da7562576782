package graph

import (
	"testing"

	"github.com/trmaml/trmaml/metalearn"
)

// TestNamesMatchMetrics: graph computes the losses and scores that
// metalearn's Metrics describe in reports, and the two are tied by name
// alone (run looks the score up with metalearn.MetricNamed): the pairs
// must keep naming the same quantity.
func TestNamesMatchMetrics(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want metalearn.Metric
	}{{MSELoss.Name(), metalearn.MSE}, {Accuracy.Name(), metalearn.Accuracy}} {
		m, err := metalearn.MetricNamed(c.name)
		if err != nil || m != c.want {
			t.Errorf("metalearn.MetricNamed(%q) = %+v, %v; want %+v", c.name, m, err, c.want)
		}
	}
}
