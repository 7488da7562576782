package results_test

import (
	"math"
	"testing"

	"github.com/trmaml/trmaml/results"
)

func TestTCritical95(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		want float64
	}{{0, 0}, {1, 0}, {2, 12.7062}, {3, 4.3027}, {5, 2.7764}, {30, 2.0452}} {
		if got := results.TCritical95(c.n); !near(got, c.want, 1e-4) {
			t.Errorf("TCritical95(%d) = %.5f, want %.4f", c.n, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		xs         []float64
		mean, half float64
		n          int
	}{
		// s = 1, half = 4.3027 / sqrt(3).
		{[]float64{1, 2, 3}, 2, 4.3027 / math.Sqrt(3), 3},
		// NaN left out; s = sqrt(2), half = 12.7062 * sqrt(2) / sqrt(2).
		{[]float64{1, math.NaN(), 3}, 2, 12.7062, 2},
		// s = sqrt((9 + 1 + 1 + 1) / 3) = 2; t(3 dof) = 3.1824, half = 3.1824 * 2 / sqrt(4).
		{[]float64{0, 4, 4, 4}, 3, 3.1824, 4},
		{[]float64{7}, 7, 0, 1},
	} {
		e := results.Summarize(c.xs)
		if !near(e.Mean, c.mean, 1e-12) || !near(e.Half, c.half, 1e-3) || e.N != c.n {
			t.Errorf("Summarize(%v) = %+v, want mean %g half %.4f n %d", c.xs, e, c.mean, c.half, c.n)
		}
	}
	if e := results.Summarize([]float64{math.NaN()}); !math.IsNaN(e.Mean) || e.N != 0 {
		t.Errorf("Summarize(NaN) = %+v, want NaN mean over 0 values", e)
	}
}
