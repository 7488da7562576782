package results

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results/display"
	"github.com/trmaml/trmaml/rundir"
)

// loadScore sets r.Score from result.json's metric and checks what the
// reports take from the file in that metric's terms: no per-task value above
// the metric's largest possible value (an accuracy above 1), each set's worst task
// is its worst per-task value in the metric's direction (the smallest
// accuracy, the largest MSE), its CVaR entries are those of its per-task
// values (metalearn.TailMean), and its masses are one finite non-negative
// weight per task with a positive sum.
func (r *Run) loadScore(path string) error {
	m, err := metalearn.MetricNamed(r.Result.Metric)
	if err != nil {
		return fmt.Errorf("%s: metric: %w", path, err)
	}
	r.Score = display.Of(m)
	for _, s := range []struct {
		name  string
		stats rundir.Stats
	}{{"meta_test", r.Result.MetaTest}, {"meta_train", r.Result.MetaTrain}} {
		st := s.stats
		if i := m.WorstIndex(st.PerTask); st.Worst != st.PerTask[i] || st.WorstTask != st.Tasks[i] {
			return fmt.Errorf("%s: %s: worst %v (%q) is not the worst per-task %s, %v (%q)", path, s.name, st.Worst, st.WorstTask, r.Score.Label, st.PerTask[i], st.Tasks[i])
		}
		for i, v := range st.PerTask {
			if v > m.Max() {
				return fmt.Errorf("%s: %s.per_task[%d] = %v: %s values are at most %v", path, s.name, i, v, r.Score.Label, m.Max())
			}
		}
		for i, c := range st.CVaR {
			if want := metalearn.TailMean(st.PerTask, c.Alpha, m); !(math.Abs(c.Value-want) <= 1e-9*math.Max(1, math.Abs(want))) {
				return fmt.Errorf("%s: %s.cvar[%d]: CVaR_%v = %v is not that of the per-task values, %v", path, s.name, i, c.Alpha, c.Value, want)
			}
		}
		if v := max(st.Mean, st.WeightedMean); v > m.Max() {
			return fmt.Errorf("%s: %s: mean %v, weighted_mean %v: %s values are at most %v", path, s.name, st.Mean, st.WeightedMean, r.Score.Label, m.Max())
		}
		if len(st.Masses) != len(st.Tasks) {
			return fmt.Errorf("%s: %s has %d masses for %d tasks", path, s.name, len(st.Masses), len(st.Tasks))
		}
		total := 0.0
		for i, w := range st.Masses {
			if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				return fmt.Errorf("%s: %s: mass %v of task %q is not a finite number >= 0", path, s.name, w, st.Tasks[i])
			}
			total += w
		}
		if total <= 0 {
			return fmt.Errorf("%s: %s: the task masses sum to 0", path, s.name)
		}
	}
	return nil
}

// SplitByScore partitions groups by their metric, keeping their order
// within each part; parts come in the order of their first group.
func SplitByScore(groups []*Group) [][]*Group {
	var parts [][]*Group
	index := map[string]int{}
	for _, g := range groups {
		i, ok := index[g.Score.Name]
		if !ok {
			i = len(parts)
			index[g.Score.Name] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], g)
	}
	return parts
}

// Display returns e in the metric's display units (accuracy in percent).
func Display(m display.Score, e Estimate) Estimate {
	e.Mean, e.Half = m.Show(e.Mean), m.Show(e.Half)
	return e
}

// DisplayCurve returns c in the metric's display units.
func DisplayCurve(m display.Score, c Curve) Curve {
	pts := make([]Estimate, len(c.Points))
	for i, e := range c.Points {
		pts[i] = Display(m, e)
	}
	c.Points = pts
	seeds := make([][]float64, len(c.Seeds))
	for s, vs := range c.Seeds {
		seeds[s] = make([]float64, len(vs))
		for i, v := range vs {
			seeds[s][i] = m.Show(v)
		}
	}
	c.Seeds = seeds
	return c
}

// ScoreOf is the metric a run of cfg records in metrics.csv's train and
// test columns and in result.json, known before it finishes: accuracy for
// a family whose tasks are classes, MSE for regression (as run.Train
// chooses it, from the family's IO).
func ScoreOf(cfg configs.Config) display.Score {
	if fam, err := cfg.Family(); err == nil && fam.IO(cfg).Classes {
		return display.Of(metalearn.Accuracy)
	}
	return display.Of(metalearn.MSE)
}
