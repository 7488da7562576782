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
