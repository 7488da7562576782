package results

import (
	"fmt"
	"strings"
)

// TradeoffMarkdown is the table of the trade-off between average and
// worst-case task loss: for each group (MAML, TR-MAML, entropic TR-MAML,
// CVaR levels) the final mean and worst task loss over the meta-test and
// the meta-training tasks, each the mean over seeds ± its 95% confidence
// half-width, and the mean training time per run.
func TradeoffMarkdown(groups []*Group) string {
	var b strings.Builder
	b.WriteString("Final task MSE (mean over seeds ± 95% CI half-width, Student t).\n\n")
	b.WriteString("| Method | Seeds | Meta-test mean | Meta-test worst | Meta-train mean | Meta-train worst | Training s/run |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range groups {
		secs := 0.0
		for _, r := range g.Runs {
			secs += r.Result.Timing.TrainSeconds + r.Result.Timing.EvalSeconds
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %.0f |\n", g.Key.Method(), g.Seeds(),
			formatEstimate(g.Final(MetaTestMean)), formatEstimate(g.Final(MetaTestWorst)),
			formatEstimate(g.Final(MetaTrainMean)), formatEstimate(g.Final(MetaTrainWorst)), secs/float64(g.Seeds()))
	}
	return b.String()
}
