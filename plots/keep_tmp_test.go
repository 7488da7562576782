package plots_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

func TestKeepGallery(t *testing.T) {
	dir := os.Getenv("GALLERY")
	if dir == "" {
		t.Skip()
	}
	g3 := groupsOf(t, append(seeds("m", "maml", "second", 1, 1.2, 1.4), seeds("tr", "trmaml", "second", 0.8, 0.9, 1.3)...)...)
	g2 := groupsOf(t, append(seeds("m", "maml", "second", 1, 1.2), seeds("tr", "trmaml", "second", 0.8, 0.9)...)...)
	acc := groupsOf(t, append(accuracySeeds("m", "maml", 1, 1.2, 1.1), accuracySeeds("tr", "trmaml", 0.5, 0.7, 0.6)...)...)
	trs := groupsOf(t, seeds("tr", "trmaml", "second", 1, 2)...)
	hard := results.TasksWithAmplitudeAtLeast(resultstest.TrainTasks, results.HardAmplitude)
	ord := groupsOf(t, append(append(seeds("m2", "maml", "second", 1, 1.1), seeds("tr2", "trmaml", "second", 1.2, 1.25)...), seeds("m1", "maml", "first", 0.5, 0.55)...)...)
	specs := append(seeds("m", "maml", "second", 1, 1.2, 1.1), seeds("tr", "trmaml", "second", 0.8, 0.9, 0.85)...)
	for _, a := range []float64{1, 0.5, 0.1} {
		specs = append(specs, cvarSeeds(a, a, a+0.1, a+0.05)...)
	}
	cv := groupsOf(t, specs...)
	for name, err := range map[string]error{
		"tradeoff": plots.CVaRTradeoff(cv, filepath.Join(dir, "tradeoff.png")),
		"figure1_3seeds": plots.Figure1(g3, filepath.Join(dir, "figure1_3seeds.png"), plots.Double),
		"figure1_2seeds": plots.Figure1(g2, filepath.Join(dir, "figure1_2seeds.png"), plots.Double),
		"figure1_single": plots.Figure1(g2, filepath.Join(dir, "figure1_single.png"), plots.Single),
		"figure1_acc":    plots.Figure1(acc, filepath.Join(dir, "figure1_acc.png"), plots.Double),
		"figure1_pdf":    plots.Figure1(acc, filepath.Join(dir, "figure1_acc.pdf"), plots.Double),
		"figure1_svg":    plots.Figure1(acc, filepath.Join(dir, "figure1_acc.svg"), plots.Double),
		"pweights":       plots.PWeights(trs, hard, filepath.Join(dir, "pweights.png"), plots.Double),
		"orders":         plots.Orders(ord, filepath.Join(dir, "orders.png"), plots.Double),
		"adversary":      plots.Adversary(acc, filepath.Join(dir, "adversary.png")),
	} {
		if err != nil {
			t.Error(name, err)
		}
	}
}
