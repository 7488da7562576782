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

func TestPlainTicks(t *testing.T) {
	t.Parallel()
	for _, tk := range (plainTicks{}).Ticks(50, 100) {
		if tk.Label != "" && (tk.Label == "50.00" || len(tk.Label) > 3) {
			t.Errorf("label %q, want the shortest form such as 75", tk.Label)
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
		{0, 9.9, []string{"0", "3", "6", "9"}}, // ten ticks: only the major ones
		// Multiples of a step that floats do not hold exactly (3 * 0.1).
		{0, 0.37, []string{"0", "0.1", "0.2", "0.3"}},
		{0, 1.3, []string{"0", "0.4", "0.8", "1.2"}},
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
