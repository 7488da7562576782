package metalearn

import (
	"math"
	"testing"
)

func TestCosineSchedule(t *testing.T) {
	t.Parallel()
	c := Cosine{Max: 1e-3, Min: 1e-6, Iterations: 60000}
	for _, tc := range []struct {
		t    int
		want float64
	}{
		{0, 1e-3},
		{15000, 1e-6 + (1e-3-1e-6)*(1+math.Sqrt2/2)/2}, // cos(pi/4)
		{30000, (1e-3 + 1e-6) / 2},                     // halfway: the midpoint
		{45000, 1e-6 + (1e-3-1e-6)*(1-math.Sqrt2/2)/2},
		{60000, 1e-6},
		{70000, 1e-6}, // past the end it stays at the minimum
	} {
		if got := c.LR(tc.t); math.Abs(got-tc.want) > 1e-18 {
			t.Errorf("LR(%d) = %.15g, want %.15g", tc.t, got, tc.want)
		}
	}
	// Monotone decreasing over the run.
	prev := math.Inf(1)
	for it := 0; it <= 60000; it += 500 {
		lr := c.LR(it)
		if lr > prev {
			t.Fatalf("LR(%d) = %g rises above %g", it, lr, prev)
		}
		prev = lr
	}
}

func TestNewSchedule(t *testing.T) {
	t.Parallel()
	s, err := NewSchedule("constant", 0.01, 0, 100)
	if err != nil || s.LR(0) != 0.01 || s.LR(99) != 0.01 {
		t.Errorf("constant: %v, %v", s, err)
	}
	s, err = NewSchedule("cosine", 0.01, 0.001, 100)
	if err != nil || math.Abs(s.LR(0)-0.01) > 1e-17 || math.Abs(s.LR(100)-0.001) > 1e-18 {
		t.Errorf("cosine: %v, %v", s, err)
	}
	if _, err := NewSchedule("step", 0.01, 0, 100); err == nil || err.Error() != `metalearn: unknown learning-rate schedule "step" (allowed: constant, cosine)` {
		t.Errorf("unknown schedule: %v", err)
	}
	if _, err := NewSchedule("cosine", 0.01, 0, 0); err == nil {
		t.Error("cosine schedule over 0 iterations accepted")
	}
}

// TestScheduleStep: the optimizer steps with the schedule's rate, keeps its
// base rate between steps, and nothing else of its state changes.
func TestScheduleStep(t *testing.T) {
	t.Parallel()
	s := Cosine{Max: 0.5, Min: 0.1, Iterations: 2}
	o := &SGD{LR: 123}
	w := []float64{1}
	for it := range 3 {
		restore, err := scheduleStep(o, s, it)
		if err != nil {
			t.Fatal(err)
		}
		o.Step(w, []float64{1})
		restore()
		if o.LR != 123 {
			t.Fatalf("rate %v after a scheduled step, want the base rate 123 back", o.LR)
		}
	}
	// Steps of 0.5, 0.3 and 0.1.
	if math.Abs(w[0]-(1-0.9)) > 1e-15 {
		t.Errorf("w = %v after steps 0.5, 0.3, 0.1 from 1", w[0])
	}
	a := NewAdam(1, 1)
	restore, err := scheduleStep(a, s, 1)
	if err != nil || math.Abs(a.LR-0.3) > 1e-15 || a.Beta1 != 0.9 {
		t.Errorf("Adam during a scheduled step: %+v, %v", a, err)
	}
	restore()
	if a.LR != 1 {
		t.Errorf("Adam's rate %v after restore, want 1", a.LR)
	}
	if _, err := scheduleStep(unratedOptimizer{}, s, 0); err == nil {
		t.Error("a schedule applied to an optimizer without a learning rate")
	}
}

// unratedOptimizer is an Optimizer without a learning rate (its methods are
// never called).
type unratedOptimizer struct{ Optimizer }
