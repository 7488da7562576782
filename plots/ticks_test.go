package plots

import (
	"cmp"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

func TestDecadeTicks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lo, hi float64
		labels []string
	}{
		// Fifteen decades: every fifth labelled, down from 1.
		{3e-15, 0.8, []string{"1e-15", "1e-10", "1e-5", "1"}},
		{0.002, 0.5, []string{"0.001", "0.01", "0.1", "1"}},
	} {
		var labels []string
		for _, tk := range (decadeTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if !slices.Equal(labels, c.labels) {
			t.Errorf("decade labels of [%g, %g] = %q, want %q", c.lo, c.hi, labels, c.labels)
		}
	}
}

// TestStepTicks: whole numbers on iteration and count axes (thousands
// as "20k" from 10,000), percentages on accuracy axes, no "-0", no
// decimals where none are needed.
func TestStepTicks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		ticker plot.Ticker
		lo, hi float64
		labels []string
	}{
		{"iterations", iterationTicks{}, 0, 200, []string{"0", "50", "100", "150", "200"}},
		{"few iterations", iterationTicks{}, 0, 3, []string{"0", "1", "2", "3"}},
		{"many iterations", iterationTicks{}, 0, 70000, []string{"0", "20k", "40k", "60k"}},
		{"counts", countTicks{}, 0, 1.05, []string{"0", "1"}},
		{"counts", countTicks{}, 0, 8.4, []string{"0", "2", "4", "6", "8"}},
		{"accuracy", percentTicks{}, 37.5, 48, []string{"38%", "40%", "42%", "44%", "46%", "48%"}},
		{"accuracy", percentTicks{}, 0, 100, []string{"0%", "20%", "40%", "60%", "80%", "100%"}},
		{"negative zero", denseTicks{}, -1e-12, 1, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
	} {
		var labels []string
		for _, tk := range c.ticker.Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if !slices.Equal(labels, c.labels) {
			t.Errorf("%s: labels of [%g, %g] = %q, want %q", c.name, c.lo, c.hi, labels, c.labels)
		}
	}
}

func TestDenseTicks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lo, hi float64
		labels []string
	}{
		{0, 2.79, []string{"0", "0.5", "1", "1.5", "2", "2.5"}},
		{0, 9.9, []string{"0", "2", "4", "6", "8"}},
		// Multiples of a step that floats do not hold exactly (3 * 0.1).
		{0, 0.37, []string{"0", "0.1", "0.2", "0.3"}},
		{0, 1.3, []string{"0", "0.25", "0.5", "0.75", "1", "1.25"}},
		{0, 3.3e-5, []string{"0", "1e-05", "2e-05", "3e-05"}},
	} {
		ticks := (denseTicks{}).Ticks(c.lo, c.hi)
		slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
		var labels []string
		for _, tk := range ticks {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if !slices.Equal(labels, c.labels) {
			t.Errorf("dense labels of [%g, %g] = %q, want %q", c.lo, c.hi, labels, c.labels)
		}
	}
}

func TestGappedAxis(t *testing.T) {
	t.Parallel()
	// amps are n evenly spaced coordinates from lo, step apart.
	amps := func(lo, step float64, n int) []float64 {
		var out []float64
		for i := range n {
			out = append(out, lo+step*float64(i))
		}
		return out
	}
	for _, c := range []struct {
		name   string
		amps   []float64
		labels []string
		breaks int
	}{
		// The sine tasks: 95 easy amplitudes, a gap, 5 hard ones. "1" sat
		// 13 units before "4.95" and overprinted it at single width.
		{"sine", append(amps(0.1, 0.01, 95), amps(4.95, 0.01, 5)...), []string{"0.2", "0.6", "4.95"}, 1},
		{"one range", amps(0, 1, 20), []string{"0", "8", "16"}, 0},
	} {
		x, ticks, breaks := gappedAxis(c.amps)
		var labels []string
		for i, tk := range ticks {
			labels = append(labels, tk.Label)
			if i > 0 && tk.Value-ticks[i-1].Value < float64(len(c.amps))/6 {
				t.Errorf("%s: ticks %q and %q %g units apart", c.name, ticks[i-1].Label, tk.Label, tk.Value-ticks[i-1].Value)
			}
		}
		if !slices.Equal(labels, c.labels) || len(breaks) != c.breaks || len(x) != len(c.amps) || !slices.IsSorted(x) {
			t.Errorf("%s: ticks %q, %d breaks, x %v; want %q, %d", c.name, labels, len(breaks), x, c.labels, c.breaks)
		}
	}
}
