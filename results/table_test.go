package results_test

import (
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

// mustTable returns make(groups), failing the test on an error.
func mustTable[T any](t *testing.T, make func([]*results.Group) (T, error), groups []*results.Group) T {
	t.Helper()
	tab, err := make(groups)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestTablesRefuseEmptyAndMixed: a table of no groups, or of groups of two
// metrics, is an error that says so, not a panic or a mislabelled table.
func TestTablesRefuseEmptyAndMixed(t *testing.T) {
	t.Parallel()
	mixed := loadGroups(t, writeRuns(t, resultstest.NewAccuracy("om", "maml", "second", 1, 1, 1),
		resultstest.New("sine", "maml", "second", 1, 5, 1)))
	for _, c := range []struct {
		groups []*results.Group
		want   string
	}{
		{nil, "needs at least one group"},
		{mixed, "(split the groups with SplitByScore)"},
	} {
		_, err := results.Table(c.groups)
		_, err2 := results.NewTrainTestTable(c.groups)
		for _, e := range []error{err, err2} {
			if e == nil || !strings.Contains(e.Error(), c.want) {
				t.Errorf("%d groups: error %v, want one containing %q", len(c.groups), e, c.want)
			}
		}
	}
}

// TestTablesCVaRColumns: runs whose configs list eval.cvar_alpha get a
// CVaR column per level in every table, computed from the per-task values:
// meta-test losses (1..5) x level at alpha 0.6 average the worst 2 tasks,
// 4.5 x level; meta-training losses (0.5, 0.5, 2, 3) x level weigh 3 by
// 1/1.6 and 2 by the rest, 2.625 x level.
func TestTablesCVaRColumns(t *testing.T) {
	t.Parallel()
	var specs []resultstest.Spec
	for seed := uint64(1); seed <= 2; seed++ {
		s := resultstest.New("sine", "drmaml", "second", seed, 5, 2)
		s.Config.Eval.CVaRAlpha = []float64{0.6}
		specs = append(specs, s)
	}
	groups := loadGroups(t, writeRuns(t, specs...))
	tab := mustTable(t, results.Table, groups)
	tt := mustTable(t, results.NewTrainTestTable, groups)
	for _, c := range []struct{ what, text, want string }{
		{"table", tab.Markdown(), "| CVaR_0.6 |"},
		{"table", tab.Markdown(), "| 9.00 ± 0.00 |"},
		{"table CSV", tab.CSV(), "test_cvar0.6,test_cvar0.6_ci95,unfinished\n"},
		{"table CSV", tab.CSV(), ",9,0,\n"},
		{"train/test", tt.Markdown(), "| Meta-train CVaR_0.6 | Meta-test CVaR_0.6 |"},
		{"train/test CSV", tt.CSV(), ",5.25,0,9,0,\n"},
		{"trade-off", results.TradeoffMarkdown(groups), "| 9.00 ± 0.00 | 3.00 ± 0.00 | 6.00 ± 0.00 | 5.25 ± 0.00 |"},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.what, c.want, c.text)
		}
	}
	if got := results.CVaRLevels(groups); len(got) != 1 || got[0] != 0.6 {
		t.Errorf("levels %v, want [0.6]", got)
	}
}
