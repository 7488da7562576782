package results

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/trmaml/trmaml/rundir"
)

// LoadUnfinished reads a run directory without a result.json (running or
// interrupted) that has evaluated after training began, verified against
// its manifest like Load: its config, metrics.csv and p.csv up to the last
// evaluation. Its Result holds what that evaluation measured (the
// meta-test and meta-training mean, worst, std and CVaR at the levels
// metrics.csv records; no per-task values, weighted means or timing, which
// are NaN or empty), and Unfinished is set, so that figures draw its
// curves to that evaluation and tables mark it.
func LoadUnfinished(dir string) (*Run, error) {
	sealed, err := rundir.Verify(dir)
	if err != nil {
		return nil, err
	}
	if sealed.Finished {
		return Load(dir)
	}
	r := &Run{Dir: dir, Config: sealed.Config, Unfinished: true, Score: ScoreOf(sealed.Config)}
	m, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		return nil, err
	}
	r.Iterations, r.metrics = m.Iterations, m.Values
	if len(r.Iterations) == 0 {
		return nil, fmt.Errorf("%s: no evaluation yet", filepath.Join(dir, rundir.MetricsFile))
	}
	p, err := rundir.ReadP(filepath.Join(dir, rundir.PFile))
	if err != nil {
		return nil, err
	}
	// metrics.csv and p.csv are written one after the other: keep the
	// evaluations both have.
	n := min(len(r.Iterations), len(p.Iterations))
	if !slices.Equal(p.Iterations[:n], r.Iterations[:n]) {
		return nil, fmt.Errorf("%s: iterations %v differ from those of %s, %v", filepath.Join(dir, rundir.PFile), p.Iterations, rundir.MetricsFile, r.Iterations)
	}
	r.Iterations, p.Iterations, p.Weights = r.Iterations[:n], p.Iterations[:n], p.Weights[:n]
	for c := range r.metrics {
		r.metrics[c] = r.metrics[c][:n]
	}
	// A run evaluated only before training says nothing of its method, and
	// would drag its row's statistics to the initial model's.
	if r.LastIteration() == 0 {
		return nil, fmt.Errorf("%s: only the evaluation before training (iteration 0) so far", filepath.Join(dir, rundir.MetricsFile))
	}
	r.P = p
	if err := r.loadTasks(dir, sealed); err != nil {
		return nil, err
	}
	last := n - 1
	stats := func(mean, worst, std Column, cvar func(rundir.CVaRColumns) []float64) rundir.Stats {
		st := rundir.Stats{Mean: r.metrics[mean][last], Worst: r.metrics[worst][last], Std: r.metrics[std][last], WeightedMean: math.NaN()}
		for _, cv := range m.CVaR {
			st.CVaR = append(st.CVaR, rundir.TailStat{Alpha: cv.Alpha, Value: cvar(cv)[last]})
		}
		return st
	}
	train := func(cv rundir.CVaRColumns) []float64 { return cv.Train }
	test := func(cv rundir.CVaRColumns) []float64 { return cv.Test }
	c := r.Config
	r.Result = rundir.Result{
		Name: c.Name, Algorithm: c.Algorithm, Order: c.Order, Seed: c.Seed, Iterations: c.Meta.Iterations, Output: c.Meta.Output,
		Metric:    r.Score.Name,
		MetaTest:  stats(TestMean, TestWorst, TestStd, test),
		MetaTrain: stats(TrainMean, TrainWorst, TrainStd, train),
		FinalP:    p.Weights[last],
		Timing:    rundir.Timing{MsPerIteration: math.NaN()},
	}
	r.Result.MetaTrain.Tasks = p.Tasks
	return r, nil
}

// LastIteration is the iteration of the run's last evaluation.
func (r *Run) LastIteration() int { return r.Iterations[len(r.Iterations)-1] }

// Unfinished reports whether some run of the group is unfinished.
func (g *Group) Unfinished() bool {
	return slices.ContainsFunc(g.Runs, func(r *Run) bool { return r.Unfinished })
}

// UnfinishedNote says which of the group's runs are unfinished and how
// far they got ("unfinished: seed 2 at iteration 20000 of 70000"), or "".
func (g *Group) UnfinishedNote() string {
	note := ""
	for _, r := range g.Runs {
		if r.Unfinished {
			if note == "" {
				note = "unfinished:"
			} else {
				note += ","
			}
			note += fmt.Sprintf(" seed %d at iteration %d of %d", r.Config.Seed, r.LastIteration(), r.Config.Meta.Iterations)
		}
	}
	return note
}

// Finished returns the groups with only their finished runs (a group may
// be left with none): what per-task statistics, which unfinished runs do
// not have, are computed from.
func Finished(groups []*Group) []*Group {
	out := make([]*Group, len(groups))
	for i, g := range groups {
		f := *g
		f.Runs = slices.DeleteFunc(slices.Clone(g.Runs), func(r *Run) bool { return r.Unfinished })
		out[i] = &f
	}
	return out
}

// FinishedGroups is Finished without the groups left with no run.
func FinishedGroups(groups []*Group) []*Group {
	return slices.DeleteFunc(Finished(groups), func(g *Group) bool { return len(g.Runs) == 0 })
}
