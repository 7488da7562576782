package results_test

import (
	"slices"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

func TestHistogram(t *testing.T) {
	t.Parallel()
	// Per-task losses level*(1..5): level 1 and level 2 (max 10), 5 bins of
	// width 2: level 1 puts 1 | 2,3 | 4,5 in bins 0, 1, 2; level 2 puts
	// 2,4,6,8,10 in bins 1, 2, 3, 4, 4 (the maximum in the last bin).
	root := writeRuns(t, resultstest.New("a", "maml", "second", 1, 5, 1), resultstest.New("b", "trmaml", "second", 1, 5, 2),
		resultstest.New("b", "trmaml", "second", 2, 5, 2))
	groups := loadGroups(t, root)
	h := results.TaskHistogram(groups, results.MetaTest, 5)
	if !slices.Equal(h.Edges, []float64{0, 2, 4, 6, 8, 10}) {
		t.Errorf("edges %v", h.Edges)
	}
	if !slices.Equal(h.Counts[0], []float64{1, 2, 2, 0, 0}) || !slices.Equal(h.Counts[1], []float64{0, 1, 1, 1, 2}) {
		t.Errorf("counts %v", h.Counts)
	}
}
