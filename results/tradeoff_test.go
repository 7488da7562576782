package results_test

import (
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
	"github.com/trmaml/trmaml/rundir"
)

// withWorst sets the metrics.csv train_worst column of s, one value per
// evaluation.
func withWorst(s resultstest.Spec, worst ...float64) resultstest.Spec {
	const trainWorst = 4 // metrics.csv column after iteration
	for r, v := range worst {
		s.Metrics[r][trainWorst] = v
	}
	return s
}

// cvarSpec is a CVaR run at level 0.5.
func cvarSpec(seed uint64) resultstest.Spec {
	s := resultstest.New("c", "cvar", "second", seed, 5, 1)
	s.Config.Settings("cvar").(*metalearn.CVaR).Level = 0.5
	return s
}

// TestTradeoffSeedsCSV: one row per run with its seed and final values in
// stored units, and the first evaluation at which the meta-training worst
// task is at most half as far from a perfect score as at iteration 0:
// half the loss for MSE, half the error 1 - accuracy for accuracy (empty
// when it never gets there).
func TestTradeoffSeedsCSV(t *testing.T) {
	t.Parallel()
	const head = "method,seed,meta_test_mean,meta_test_worst,meta_train_mean,meta_train_worst,train_worst_halved_at"
	type row struct{ prefix, halved string }
	for _, c := range []struct {
		name  string
		specs []resultstest.Spec
		want  []row
	}{
		{"mse", []resultstest.Spec{
			withWorst(resultstest.New("m", "maml", "second", 1, 5, 1), 12, 5, 3),  // halved at 100
			withWorst(resultstest.New("m", "maml", "second", 2, 5, 1), 12, 10, 6), // exactly half at 200
			withWorst(cvarSpec(1), 12, 11, 9),                                     // still on the plateau
			withWorst(cvarSpec(2), 12, 6.5, 2),
		}, []row{
			{"CVaR a=0.5,1,", ""},
			{"CVaR a=0.5,2,", "200"},
			{"MAML,1,", "100"},
			{"MAML,2,", "200"},
		}},
		// Final accuracies (level 1): meta-test mean 0.75, worst 0.6;
		// meta-training mean 0.876, worst 0.7. A worst accuracy rising
		// from chance (0.2, error 0.8) is halved at error 0.4.
		{"accuracy", []resultstest.Spec{
			withWorst(resultstest.NewAccuracy("m", "maml", "second", 1, 1, 1), 0.2, 0.5, 0.65),     // error 0.35 at 200
			withWorst(resultstest.NewAccuracy("m", "maml", "second", 2, 1, 1), 0.2, 0.6, 0.9),      // exactly half at 100
			withWorst(resultstest.NewAccuracy("tr", "trmaml", "second", 1, 1, 1), 0.2, 0.3, 0.5),   // never
			withWorst(resultstest.NewAccuracy("tr", "trmaml", "second", 2, 1, 1), 0.25, 0.9, 0.95), // at 100
		}, []row{
			{"MAML,1,0.75,0.6,0.876,0.7,", "200"},
			{"MAML,2,0.75,0.6,0.876,0.7,", "100"},
			{"TR-MAML,1,0.75,0.6,0.876,0.7,", ""},
			{"TR-MAML,2,0.75,0.6,0.876,0.7,", "100"},
		}},
	} {
		groups := loadGroups(t, writeRuns(t, c.specs...))
		lines := strings.Split(strings.TrimSpace(results.TradeoffSeedsCSV(groups)), "\n")
		if len(lines) != 1+len(c.want) || lines[0] != head {
			t.Errorf("%s: %d lines, want %d under %q:\n%s", c.name, len(lines), 1+len(c.want), head, strings.Join(lines, "\n"))
			continue
		}
		for i, w := range c.want {
			line := lines[i+1]
			fields := strings.Split(line, ",")
			if !strings.HasPrefix(line, w.prefix) || len(fields) != 7 {
				t.Errorf("%s: line %d = %q, want 7 fields starting %q", c.name, i+1, line, w.prefix)
				continue
			}
			if fields[6] != w.halved {
				t.Errorf("%s: line %d = %q: train_worst_halved_at %q, want %q", c.name, i+1, line, fields[6], w.halved)
			}
		}
	}
}

// TestTradeoffMarkdown: the caption names the metric, its unit and the
// task noun (MSE's unchanged), and the values are in display units: for
// accuracy in percent, the worst task the lowest accuracy and CVaR_0.5 the
// mean of the lowest half. Accuracies at level L (NewAccuracy): meta-test
// 1 - L(0.1, 0.2, 0.3, 0.4), meta-training 1 - L(0.05, 0.02, 0.3, 0.1,
// 0.15). At L = 1 the meta-test mean is 75%, the worst 60%, CVaR_0.5
// (0.6 + 0.7)/2 = 65%; the meta-training mean 87.6%, worst 70%, CVaR_0.5
// 0.4*0.7 + 0.4*0.85 + 0.2*0.9 = 80%. Seeds at L = 0.9 and 1.1 have the
// same means and half-widths t(0.975, 1) * 0.1 * c, with c the value's
// coefficient of L (12.7062 * 0.025 = 31.77 points for the meta-test mean).
func TestTradeoffMarkdown(t *testing.T) {
	t.Parallel()
	acc := func(name, alg string, seed uint64, level float64) resultstest.Spec {
		s := resultstest.NewAccuracy(name, alg, "second", seed, 1, level)
		s.Config.Eval.CVaRAlpha = []float64{0.5}
		return s
	}
	for _, c := range []struct {
		name      string
		specs     []resultstest.Spec
		want, not []string
	}{
		{"mse", []resultstest.Spec{resultstest.New("m", "maml", "second", 1, 5, 1), resultstest.New("m", "maml", "second", 2, 5, 1)},
			[]string{"Final task MSE (mean over seeds ± 95% CI half-width, Student t).\n\n| Method | Seeds | Meta-test mean | Meta-test worst | Meta-train mean | Meta-train worst | Wall-clock s/run |"},
			[]string{"in %", "Higher is better"}},
		{"accuracy", []resultstest.Spec{acc("m", "maml", 1, 1), acc("m", "maml", 2, 1), acc("tr", "trmaml", 1, 0.9), acc("tr", "trmaml", 2, 1.1)},
			[]string{
				"Final alphabet accuracy in % (mean over seeds ± 95% CI half-width, Student t). Higher is better: 'worst' is the lowest alphabet accuracy. " +
					"CVaR_alpha is the mean of the worst fraction 1-alpha of the alphabets (the boundary alphabet counted in part).",
				"| Meta-test mean | Meta-test worst | Meta-test CVaR_0.5 | Meta-train mean | Meta-train worst | Meta-train CVaR_0.5 |",
				"| MAML | 2 | 75.00 ± 0.00 | 60.00 ± 0.00 | 65.00 ± 0.00 | 87.60 ± 0.00 | 70.00 ± 0.00 | 80.00 ± 0.00 |",
				"| TR-MAML | 2 | 75.00 ± 31.77 | 60.00 ± 50.82 | 65.00 ± 44.47 | 87.60 ± 15.76 | 70.00 ± 38.12 | 80.00 ± 25.41 |",
			},
			[]string{"MSE", "0.75"}},
	} {
		md := results.TradeoffMarkdown(loadGroups(t, writeRuns(t, c.specs...)))
		for _, w := range c.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: table lacks %q:\n%s", c.name, w, md)
			}
		}
		for _, n := range c.not {
			if strings.Contains(md, n) {
				t.Errorf("%s: table has %q:\n%s", c.name, n, md)
			}
		}
	}
}

// TestTradeoffCost: the cost column is processor time when every run
// recorded it and wall-clock time otherwise, and its heading says which,
// and that processor time split between runs sharing a process is an
// estimate.
// Runs of New at level 1 took 0.2 s of training and 1 s of evaluation by
// the clock; the CPU times below differ from both.
func TestTradeoffCost(t *testing.T) {
	t.Parallel()
	run := func(seed uint64, cpu *rundir.CPUTime) resultstest.Spec {
		s := resultstest.New("m", "maml", "second", seed, 5, 1)
		s.Result.Timing.CPU = cpu
		return s
	}
	for _, c := range []struct {
		name string
		runs []resultstest.Spec
		want string
	}{
		{"every run has CPU time", []resultstest.Spec{run(1, &rundir.CPUTime{TrainSeconds: 10, EvalSeconds: 2}), run(2, &rundir.CPUTime{TrainSeconds: 14, EvalSeconds: 4})},
			"| Meta-train worst | CPU s/run |"},
		{"one run lacks it", []resultstest.Spec{run(1, &rundir.CPUTime{TrainSeconds: 10, EvalSeconds: 2}), run(2, nil)},
			"| Meta-train worst | Wall-clock s/run |"},
		{"one run shared its process", []resultstest.Spec{run(1, &rundir.CPUTime{TrainSeconds: 10, EvalSeconds: 2}), run(2, &rundir.CPUTime{TrainSeconds: 14, EvalSeconds: 4, Shared: true})},
			"| Meta-train worst | CPU s/run (estimated: shared processes) |"},
	} {
		md := results.TradeoffMarkdown(loadGroups(t, writeRuns(t, c.runs...)))
		lines := strings.Split(strings.TrimSpace(md), "\n")
		if !strings.Contains(md, c.want) {
			t.Errorf("%s: heading lacks %q:\n%s", c.name, c.want, md)
			continue
		}
		last := lines[len(lines)-1]
		wantCost := map[bool]string{true: "| 15 |", false: "| 1 |"}[strings.Contains(c.want, "CPU")]
		if !strings.HasSuffix(last, wantCost) {
			t.Errorf("%s: row %q, want it to end %q (mean seconds per run)", c.name, last, wantCost)
		}
	}
}
