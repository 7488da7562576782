package plots

import (
	"math"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/display"
)

// TestTradeoffRange: a loss axis runs from 0 to a tenth past the largest
// value; an accuracy axis (percent) over the values' own range widened by
// a tenth of it on either side, never past 0 or 100%.
func TestTradeoffRange(t *testing.T) {
	t.Parallel()
	mse, acc := display.Of(metalearn.MSE), display.Of(metalearn.Accuracy)
	for _, c := range []struct {
		name   string
		score  display.Score
		vs     []float64
		lo, hi float64
	}{
		{"loss from zero", mse, []float64{1.5, 4, 2}, 0, 4.4},
		{"accuracy from the data", acc, []float64{80, 90, 85}, 79, 91},
		{"accuracy at the ceiling", acc, []float64{95, 99.8}, 94.52, 100},
		{"accuracy at the floor", acc, []float64{0.5, 20}, 0, 21.95},
		{"one value", acc, []float64{90}, 89, 91},
	} {
		lo, hi := tradeoffRange(c.score, c.vs)
		if math.Abs(lo-c.lo) > 1e-9 || math.Abs(hi-c.hi) > 1e-9 {
			t.Errorf("%s: range [%g, %g], want [%g, %g]", c.name, lo, hi, c.lo, c.hi)
		}
	}
}

// TestBarReach: a confidence bar keeps its half-width inside the axis and
// is cut at its ends, so an accuracy's never passes 100%.
func TestBarReach(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		e            results.Estimate
		lo, hi       float64
		below, above float64
	}{
		{"inside", results.Estimate{Mean: 90, Half: 2}, 80, 100, 2, 2},
		{"cut at 100%", results.Estimate{Mean: 98.5, Half: 4}, 80, 100, 4, 1.5},
		{"cut at the axis's start", results.Estimate{Mean: 81, Half: 4}, 80, 100, 1, 4},
		{"loss cut at 0", results.Estimate{Mean: 0.5, Half: 2}, 0, 4.4, 0.5, 2},
	} {
		below, above := barReach(c.e, c.lo, c.hi)
		if math.Abs(below-c.below) > 1e-12 || math.Abs(above-c.above) > 1e-12 {
			t.Errorf("%s: reach (%g, %g), want (%g, %g)", c.name, below, above, c.below, c.above)
		}
	}
}
