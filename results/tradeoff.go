package results

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// TradeoffMarkdown is the table of the trade-off between average and
// worst-case task score: for each group (MAML, TR-MAML, entropic TR-MAML,
// the robust methods, CVaR levels) the final mean and worst task value
// over the meta-test and the meta-training tasks, each the mean over seeds
// ± its 95% confidence half-width in the groups' metric (all one) and its
// display units (accuracy in percent), and the mean cost per run
// (runCost). The worst task is the largest loss or the smallest accuracy, and
// CVaR averages the largest losses or the smallest accuracies.
func TradeoffMarkdown(groups []*Group) string {
	var b strings.Builder
	levels, score, noun := CVaRLevels(groups), groups[0].Score, TaskNoun(groups)
	what := noun + " " + score.Label
	if score.Unit != "" {
		what += " in " + score.Unit
	}
	direction := ""
	if score.HigherIsBetter {
		direction = fmt.Sprintf(" Higher is better: 'worst' is the lowest %s %s.", noun, score.Label)
	}
	fmt.Fprintf(&b, "Final %s (mean over seeds ± 95%% CI half-width, Student t).%s%s\n\n", what, direction, cvarCaption(levels, noun))
	head := []string{"Method", "Seeds", "Meta-test mean", "Meta-test worst"}
	for _, a := range levels {
		head = append(head, "Meta-test "+cvarHead(a))
	}
	head = append(head, "Meta-train mean", "Meta-train worst")
	for _, a := range levels {
		head = append(head, "Meta-train "+cvarHead(a))
	}
	costHead, cost := runCost(groups)
	head = append(head, costHead)
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|---|" + strings.Repeat("---:|", len(head)-1) + "\n")
	for _, g := range groups {
		secs := 0.0
		for _, r := range g.Runs {
			secs += cost(r.Result.Timing)
		}
		cells := []string{g.Key.Method(), strconv.Itoa(g.Seeds())}
		for _, set := range []Set{MetaTest, MetaTrain} {
			mean, worst := set.Finals()
			cells = append(cells, formatEstimate(Display(score, g.Final(mean))), formatEstimate(Display(score, g.Final(worst))))
			for _, a := range levels {
				cells = append(cells, formatEstimate(Display(score, g.FinalCVaR(set, a))))
			}
		}
		cells = append(cells, fmt.Sprintf("%.0f", secs/float64(g.Seeds())))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// runCost is the trade-off table's cost column: its heading and the
// seconds of training plus evaluation of one run. It is processor time
// (result.json's timing.cpu) when every run recorded it, since wall-clock
// time counts the hours a run waited on a shared machine or lay
// interrupted; wall-clock time otherwise, and the heading says which. The
// heading marks processor time as estimated when a run shared its process
// with others (trmaml experiment -jobs), whose time was split equally.
func runCost(groups []*Group) (string, func(rundir.Timing) float64) {
	shared := false
	for _, g := range groups {
		for _, r := range g.Runs {
			c := r.Result.Timing.CPU
			if c == nil {
				return "Wall-clock s/run", func(t rundir.Timing) float64 { return t.TrainSeconds + t.EvalSeconds }
			}
			shared = shared || c.Shared
		}
	}
	head := "CPU s/run"
	if shared {
		head = "CPU s/run (estimated: shared processes)"
	}
	return head, func(t rundir.Timing) float64 { return t.CPU.TrainSeconds + t.CPU.EvalSeconds }
}

// TradeoffSeedsCSV is one row per run of the trade-off's groups (all of
// one metric): the method, the seed, the final mean and worst task value
// over the meta-test and the meta-training tasks, in stored units (MSE, or
// accuracy as a fraction, as result.json and metrics.csv hold them), and
// train_worst_halved_at, the first evaluation iteration at which the
// meta-training worst task's distance from a perfect score is at most half
// its distance at iteration 0 (empty if it never is): for a loss, the
// worst-task loss halved; for accuracy, the worst task's error
// 1 - accuracy halved (from chance, 80% error on 5-way, to 40%). From a
// small initialisation every sinusoid run starts on the plateau of the
// near-zero predictor, and a classifier's worst task starts at chance;
// that column shows how long each seed stays there, so a slow seed is
// seen, not averaged away. A score without a best value (no Max) leaves
// it empty.
func TradeoffSeedsCSV(groups []*Group) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"method", "seed", "meta_test_mean", "meta_test_worst", "meta_train_mean", "meta_train_worst", "train_worst_halved_at"})
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, g := range groups {
		for _, r := range g.Runs {
			halved := ""
			if it, ok := r.halvedAt(TrainWorst, g.Score.Metric); ok {
				halved = strconv.Itoa(it)
			}
			w.Write([]string{g.Key.Method(), strconv.FormatUint(r.Config.Seed, 10),
				num(MetaTestMean.Value(&r.Result)), num(MetaTestWorst.Value(&r.Result)),
				num(MetaTrainMean.Value(&r.Result)), num(MetaTrainWorst.Value(&r.Result)), halved})
		}
	}
	w.Flush()
	return b.String()
}

// halvedAt returns the first evaluation iteration at which column c, in
// metric m, is at most half as far from m's best value (0 for a loss,
// m.Max() for a score) as at the first evaluation; false if it never is,
// or m has no best value.
func (r *Run) halvedAt(c Column, m metalearn.Metric) (int, bool) {
	gap := func(x float64) float64 { return x }
	if m.HigherIsBetter {
		top := m.Max()
		if math.IsInf(top, 1) {
			return 0, false
		}
		gap = func(x float64) float64 { return top - x }
	}
	v := r.Column(c)
	if len(v) == 0 || math.IsNaN(v[0]) {
		return 0, false
	}
	for i, x := range v {
		if gap(x) <= gap(v[0])/2 {
			return r.Iterations[i], true
		}
	}
	return 0, false
}
