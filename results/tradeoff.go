package results

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TradeoffMarkdown is the table of the trade-off between average and
// worst-case task loss: for each group (MAML, TR-MAML, entropic TR-MAML,
// CVaR levels) the final mean and worst task loss over the meta-test and
// the meta-training tasks, each the mean over seeds ± its 95% confidence
// half-width, and the mean training time per run.
func TradeoffMarkdown(groups []*Group) string {
	var b strings.Builder
	levels := CVaRLevels(groups)
	fmt.Fprintf(&b, "Final task MSE (mean over seeds ± 95%% CI half-width, Student t).%s\n\n", cvarCaption(levels, "task"))
	head := []string{"Method", "Seeds", "Meta-test mean", "Meta-test worst"}
	for _, a := range levels {
		head = append(head, "Meta-test "+cvarHead(a))
	}
	head = append(head, "Meta-train mean", "Meta-train worst")
	for _, a := range levels {
		head = append(head, "Meta-train "+cvarHead(a))
	}
	head = append(head, "Training s/run")
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|---|" + strings.Repeat("---:|", len(head)-1) + "\n")
	for _, g := range groups {
		secs := 0.0
		for _, r := range g.Runs {
			secs += r.Result.Timing.TrainSeconds + r.Result.Timing.EvalSeconds
		}
		cells := []string{g.Key.Method(), strconv.Itoa(g.Seeds())}
		for _, set := range []Set{MetaTest, MetaTrain} {
			mean, worst := MetaTestMean, MetaTestWorst
			if set == MetaTrain {
				mean, worst = MetaTrainMean, MetaTrainWorst
			}
			cells = append(cells, formatEstimate(g.Final(mean)), formatEstimate(g.Final(worst)))
			for _, a := range levels {
				cells = append(cells, formatEstimate(g.FinalCVaR(set, a)))
			}
		}
		cells = append(cells, fmt.Sprintf("%.0f", secs/float64(g.Seeds())))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// TradeoffSeedsCSV is one row per run of the trade-off's groups: the
// method, the seed, the final mean and worst task loss over the meta-test
// and the meta-training tasks, and train_worst_halved_at, the first
// evaluation iteration at which the meta-training worst-task loss is at
// most half its value at iteration 0 (empty if it never is). From a small
// initialisation every run starts on the plateau of the near-zero
// predictor; that column shows how long each seed stays there, so a slow
// seed is seen, not averaged away.
func TradeoffSeedsCSV(groups []*Group) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"method", "seed", "meta_test_mean", "meta_test_worst", "meta_train_mean", "meta_train_worst", "train_worst_halved_at"})
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, g := range groups {
		for _, r := range g.Runs {
			halved := ""
			if it, ok := r.halvedAt(TrainWorst); ok {
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

// halvedAt returns the first evaluation iteration at which metric m is at
// most half its value at the first evaluation.
func (r *Run) halvedAt(m Column) (int, bool) {
	v := r.Column(m)
	if len(v) == 0 || math.IsNaN(v[0]) {
		return 0, false
	}
	for i, x := range v {
		if x <= v[0]/2 {
			return r.Iterations[i], true
		}
	}
	return 0, false
}
