package results_test

import (
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

// TestPairedMarkdown: each method's final values minus MAML's run of the
// same seed, in display units. Accuracies at level L (NewAccuracy):
// meta-test mean 1 - 0.25 L, worst 1 - 0.4 L. MAML seeds 1 and 2 at L = 1
// and 1.2 (means 75% and 70%), TR-MAML at 0.9 and 1.0 (77.5% and 75%):
// mean differences +2.5 and +5 points, their mean 3.75 ± t(0.975, 1) *
// 2.5/2 = 15.88; worst differences +4 and +8, 6.00 ± 25.41. TR-MAML's
// seed 3 has no MAML run to pair with and is left out; a first-order
// group has no first-order MAML and gets no row.
func TestPairedMarkdown(t *testing.T) {
	t.Parallel()
	acc := func(alg, order string, seed uint64, level float64) resultstest.Spec {
		return resultstest.NewAccuracy(alg+"-"+order, alg, order, seed, 1, level)
	}
	groups := loadGroups(t, writeRuns(t,
		acc("maml", "second", 1, 1), acc("maml", "second", 2, 1.2),
		acc("trmaml", "second", 1, 0.9), acc("trmaml", "second", 2, 1), acc("trmaml", "second", 3, 0.5),
		acc("trmaml", "first", 1, 1), acc("trmaml", "first", 2, 1)))
	md := results.PairedMarkdown(groups, "maml")
	for _, want := range []string{
		"Final alphabet accuracy in % points minus MAML's, paired by seed",
		"| Method | Pairs | Meta-train mean | Meta-train worst | Meta-test mean | Meta-test worst |",
		"| TR-MAML | 2 | ",
		" | +3.75 ± 15.88 | +6.00 ± 25.41 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, "| TR-MAML"); n != 1 {
		t.Errorf("%d TR-MAML rows, want 1 (the first-order group has no baseline):\n%s", n, md)
	}
	if got := results.PairedMarkdown(groups, "cvar"); got != "" {
		t.Errorf("no CVaR baseline, but a table:\n%s", got)
	}
}
