package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// Final is a statistic of result.json, the output rule's solution after
// training.
type Final int

// The final statistics: mean, worst, std and weighted mean (weights: the
// training distribution) of the per-task losses of result.json's meta_test
// and meta_train, and the cost of training.
const (
	MetaTestMean Final = iota
	MetaTestWorst
	MetaTestStd
	MetaTestWeightedMean
	MetaTrainMean
	MetaTrainWorst
	MetaTrainStd
	MetaTrainWeightedMean
	MsPerIteration // training wall-clock milliseconds per iteration
)

// Value returns statistic f of one result.
func (f Final) Value(res *rundir.Result) float64 {
	switch f {
	case MetaTestMean:
		return res.MetaTest.Mean
	case MetaTestWorst:
		return res.MetaTest.Worst
	case MetaTestStd:
		return res.MetaTest.Std
	case MetaTestWeightedMean:
		return res.MetaTest.WeightedMean
	case MetaTrainMean:
		return res.MetaTrain.Mean
	case MetaTrainWorst:
		return res.MetaTrain.Worst
	case MetaTrainStd:
		return res.MetaTrain.Std
	case MetaTrainWeightedMean:
		return res.MetaTrain.WeightedMean
	case MsPerIteration:
		return res.Timing.MsPerIteration
	}
	panic(fmt.Sprintf("results: unknown Final %d", f))
}

// Final returns statistic f estimated over the group's seeds.
func (g *Group) Final(f Final) Estimate {
	vals := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		vals[i] = f.Value(&r.Result)
	}
	return Summarize(vals)
}

// CVaRLevels are the levels alpha of the eval.cvar_alpha lists of the
// groups' runs, each once, in increasing order: the CVaR_alpha columns of
// the reports.
func CVaRLevels(groups []*Group) []float64 {
	var levels []float64
	for _, g := range groups {
		for _, r := range g.Runs {
			for _, a := range r.Config.Eval.CVaRAlpha {
				if !slices.Contains(levels, a) {
					levels = append(levels, a)
				}
			}
		}
	}
	slices.Sort(levels)
	return levels
}

// FinalCVaR returns CVaR_alpha over the tasks of set (the mean of the worst
// fraction 1-alpha of result.json's per-task values, metalearn.TailMean in
// the group's metric), estimated over the group's seeds. It is computed
// from the per-task values, so it exists at any level for any finished
// run; an unfinished run, which has none yet, enters with its last
// evaluation's CVaR if metrics.csv records that level, else is left out.
func (g *Group) FinalCVaR(set Set, alpha float64) Estimate {
	vals := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		if r.Unfinished { // no per-task values: the last evaluation's, if recorded
			vals[i] = math.NaN()
			if v, ok := set.of(&r.Result).CVaRAt(alpha); ok {
				vals[i] = v
			}
			continue
		}
		vals[i] = r.CVaR(set, alpha, g.Score.Metric)
	}
	return Summarize(vals)
}

// CVaR is CVaR_alpha over the tasks of set of the finished run r: the mean
// of the worst fraction 1-alpha of its per-task values in metric m
// (metalearn.TailMean). An unfinished run has no per-task values yet
// (FinalCVaR takes its last evaluation's instead).
func (r *Run) CVaR(set Set, alpha float64, m metalearn.Metric) float64 {
	return metalearn.TailMean(set.of(&r.Result).PerTask, alpha, m)
}

// cvarHead is the column head of CVaR_alpha.
func cvarHead(alpha float64) string { return "CVaR_" + strconv.FormatFloat(alpha, 'g', -1, 64) }

// cvarCaption explains the CVaR columns of a table, if it has any.
func cvarCaption(levels []float64, noun string) string {
	if len(levels) == 0 {
		return ""
	}
	return fmt.Sprintf(" CVaR_alpha is the mean of the worst fraction 1-alpha of the %ss (the boundary %s counted in part).", noun, noun)
}

// FinalP returns the meta-training task names and each task's final weight
// (Run.FinalP) estimated over the group's seeds.
func (g *Group) FinalP() (tasks []string, p []Estimate) {
	tasks = g.Runs[0].P.Tasks
	p = make([]Estimate, len(tasks))
	vals := make([]float64, len(g.Runs))
	for i := range tasks {
		for j, r := range g.Runs {
			vals[j] = r.FinalP()[i]
		}
		p[i] = Summarize(vals)
	}
	return tasks, p
}
