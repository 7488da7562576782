package plots_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results/resultstest"
)

// accuracySeeds returns classification runs of one setting for seeds
// 1..len(levels).
func accuracySeeds(name, alg string, levels ...float64) []resultstest.Spec {
	var specs []resultstest.Spec
	for i, l := range levels {
		specs = append(specs, resultstest.NewAccuracy(name, alg, "second", uint64(i+1), 1, l))
	}
	return specs
}

func TestFigure1Accuracy(t *testing.T) {
	groups := groupsOf(t, append(accuracySeeds("m", "maml", 1, 1.2, 1.1), accuracySeeds("tr", "trmaml", 0.5, 0.7, 0.6)...)...)
	path := filepath.Join(t.TempDir(), "figure1.png")
	if dir := os.Getenv("PLOTS_KEEP"); dir != "" {
		path = filepath.Join(dir, "figure1_accuracy.png")
	}
	if err := plots.Figure1(groups, path); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).check(t, 14*plots.DPI, 4, blue, vermillion)
}
