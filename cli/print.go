package cli

import (
	"fmt"
	"io"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results/display"
	"github.com/trmaml/trmaml/rundir"
)

func printResult(w io.Writer, r *rundir.Result) {
	if r.Output == "best_val" {
		fmt.Fprintf(w, "evaluated: the model of iteration %d, the best on the meta-validation tasks (meta.output best_val)\n", r.BestValIteration)
	}
	metric, err := metalearn.MetricNamed(r.Metric)
	if err != nil {
		metric = metalearn.MSE
	}
	m := display.Of(metric)
	rows := []struct {
		name string
		s    rundir.Stats
	}{{"meta-train", r.MetaTrain}, {"meta-test", r.MetaTest}}
	defer func() { // CVaR at eval.cvar_alpha's levels, if any
		for _, row := range rows {
			for _, c := range row.s.CVaR {
				fmt.Fprintf(w, "%-10s CVaR_%v %.4g\n", row.name, c.Alpha, m.Show(c.Value))
			}
		}
	}()
	if metric == metalearn.MSE {
		fmt.Fprintf(w, "%-10s %9s %9s %9s  %s\n", "task set", "mean", "worst", "std", "worst task")
		for _, row := range rows {
			fmt.Fprintf(w, "%-10s %9.4f %9.4f %9.4f  %s\n", row.name, row.s.Mean, row.s.Worst, row.s.Std, row.s.WorstTask)
		}
		return
	}
	// A classification run: the paper's Table 2 columns, in percent.
	fmt.Fprintf(w, "%-10s %9s %9s %9s %9s  %s  (%s)\n", "task set", "weighted", "mean", "worst", "std", "worst task", m.Axis("task"))
	for _, row := range rows {
		s := row.s
		fmt.Fprintf(w, "%-10s %9.2f %9.2f %9.2f %9.2f  %s\n", row.name, m.Show(s.WeightedMean), m.Show(s.Mean), m.Show(s.Worst), m.Show(s.Std), s.WorstTask)
	}
}
