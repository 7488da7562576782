package results_test

import (
	"github.com/trmaml/trmaml/metalearn"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

// TestTradeoffSeedsCSV: one row per run with its seed and final values,
// and the first evaluation at which the meta-training worst-task loss is
// at most half its starting value (empty when it never gets there).
func TestTradeoffSeedsCSV(t *testing.T) {
	t.Parallel()
	const trainWorst = 4 // metrics.csv column after iteration
	withWorst := func(s resultstest.Spec, worst ...float64) resultstest.Spec {
		for r, v := range worst {
			s.Metrics[r][trainWorst] = v
		}
		return s
	}
	cvar := func(seed uint64) resultstest.Spec {
		s := resultstest.New("c", "cvar", "second", seed, 5, 1)
		s.Config.Settings("cvar").(*metalearn.CVaR).Level = 0.5
		return s
	}
	groups := loadGroups(t, writeRuns(t,
		withWorst(resultstest.New("m", "maml", "second", 1, 5, 1), 12, 5, 3),  // halved at 100
		withWorst(resultstest.New("m", "maml", "second", 2, 5, 1), 12, 10, 6), // exactly half at 200
		withWorst(cvar(1), 12, 11, 9),                                         // still on the plateau
		withWorst(cvar(2), 12, 6.5, 2),
	))
	lines := strings.Split(strings.TrimSpace(results.TradeoffSeedsCSV(groups)), "\n")
	want := []struct{ prefix, halved string }{
		{"method,seed,meta_test_mean,meta_test_worst,meta_train_mean,meta_train_worst,train_worst_halved_at", ""},
		{"CVaR a=0.5,1,", ""},
		{"CVaR a=0.5,2,", "200"},
		{"MAML,1,", "100"},
		{"MAML,2,", "200"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		fields := strings.Split(lines[i], ",")
		if !strings.HasPrefix(lines[i], w.prefix) || len(fields) != 7 {
			t.Errorf("line %d = %q, want 7 fields starting %q", i, lines[i], w.prefix)
			continue
		}
		if i > 0 && fields[6] != w.halved {
			t.Errorf("line %d = %q: train_worst_halved_at %q, want %q", i, lines[i], fields[6], w.halved)
		}
	}
}
