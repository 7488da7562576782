package plots

import (
	"slices"
	"testing"
)

func TestDecadeTicks(t *testing.T) {
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
	for _, tk := range (plainTicks{}).Ticks(50, 100) {
		if tk.Label != "" && (tk.Label == "50.00" || len(tk.Label) > 3) {
			t.Errorf("label %q, want the shortest form such as 75", tk.Label)
		}
	}
}
