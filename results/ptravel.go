package results

import (
	"fmt"
	"math"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
)

// PTravel summarises how far a run's task distribution p moved over
// training, from p.csv: whether TR-MAML's adversary acted (p left its start
// for a few hard tasks) or barely moved (a step size too small for the run's
// length). For a method whose p is fixed (MAML's sampling distribution) every
// distance is 0.
type PTravel struct {
	Run        string // the run's config name and seed
	Iterations int    // the last row's iteration
	Tasks      int
	// Final and Max are the total-variation distances (half the L1 norm,
	// in [0, 1)) of the last row's p and of the farthest row's from the
	// first row's.
	Final, Max float64
	// Half and Most are the first iterations at which the distance reached
	// half and 90% of Final (0 when Final is 0).
	Half, Most int
	// Effective is exp(entropy) of the last p: the number of tasks it
	// effectively spreads over (Tasks for a uniform p).
	Effective float64
	// Top is the task with the largest final weight, TopWeight that weight
	// and TopRatio its ratio to the uniform weight 1/Tasks.
	Top       string
	TopWeight float64
	TopRatio  float64
}

// PTravelOf computes r's PTravel; it needs at least one p.csv row.
func PTravelOf(r *Run) (PTravel, error) {
	h := r.P
	if len(h.Weights) == 0 || len(h.Tasks) == 0 {
		return PTravel{}, fmt.Errorf("%s: p.csv has no rows", r.Dir)
	}
	first, last := h.Weights[0], h.Weights[len(h.Weights)-1]
	t := PTravel{Run: fmt.Sprintf("%s seed %d", r.Config.Name, r.Config.Seed), Iterations: h.Iterations[len(h.Iterations)-1], Tasks: len(h.Tasks)}
	dist := make([]float64, len(h.Weights))
	for k, p := range h.Weights {
		for i := range p {
			dist[k] += math.Abs(p[i]-first[i]) / 2
		}
		t.Max = max(t.Max, dist[k])
	}
	t.Final = dist[len(dist)-1]
	if t.Final > 0 {
		t.Half, t.Most = -1, -1
		for k, d := range dist {
			if t.Half < 0 && d >= t.Final/2 {
				t.Half = h.Iterations[k]
			}
			if t.Most < 0 && d >= 0.9*t.Final {
				t.Most = h.Iterations[k]
			}
		}
	}
	entropy := 0.0
	for i, w := range last {
		if w > 0 {
			entropy -= w * math.Log(w)
		}
		if w > t.TopWeight {
			t.Top, t.TopWeight = h.Tasks[i], w
		}
	}
	t.Effective = math.Exp(entropy)
	t.TopRatio = t.TopWeight * float64(t.Tasks)
	return t, nil
}

// PTravelMarkdown is a table of the runs' PTravel, one row per run, with
// stepSize(r) (the step size of the run's ascent on p, or "" where it has
// none) beside it.
func PTravelMarkdown(runs []*Run, stepSize func(*Run) string) (string, error) {
	var b strings.Builder
	b.WriteString("| run | step of p | iterations | TV(p, p_0) final | max | half reached at | 90% at | effective tasks | heaviest task | its weight | x uniform |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n")
	for _, r := range runs {
		t, err := PTravelOf(r)
		if err != nil {
			return "", err
		}
		at := func(it int) string {
			if t.Final == 0 {
				return "-"
			}
			return fmt.Sprint(it)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.3f | %.3f | %s | %s | %.1f of %d | %s | %.3f | %.1f |\n",
			t.Run, stepSize(r), t.Iterations, t.Final, t.Max, at(t.Half), at(t.Most), t.Effective, t.Tasks, t.Top, t.TopWeight, t.TopRatio)
	}
	return b.String(), nil
}

// MovingP returns the runs of groups whose method moves p (TR-MAML and its
// variants, not MAML), in group order.
func MovingP(groups []*Group) []*Run {
	var runs []*Run
	for _, g := range groups {
		for _, r := range g.Runs {
			if info, ok := metalearn.LookupMethod(r.Config.Algorithm); ok && !info.FixedP {
				runs = append(runs, r)
			}
		}
	}
	return runs
}

// StepP is r's step size of p, named by its setting ("p_lr = 4.8e-05",
// "eta_q = 0.01"), or "" for a method that keeps p fixed.
func StepP(r *Run) string {
	info, ok := metalearn.LookupMethod(r.Config.Algorithm)
	m := r.Config.Settings(r.Config.Algorithm)
	if !ok || info.Step == "" || m == nil {
		return ""
	}
	return fmt.Sprintf("%s = %g", info.Step, info.StepValue(m))
}
