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
	t.Parallel()
	groups := groupsOf(t, append(accuracySeeds("m", "maml", 1, 1.2, 1.1), accuracySeeds("tr", "trmaml", 0.5, 0.7, 0.6)...)...)
	path := filepath.Join(t.TempDir(), "figure1.png")
	if dir := os.Getenv("PLOTS_KEEP"); dir != "" {
		path = filepath.Join(dir, "figure1_accuracy.png")
	}
	if err := plots.Figure1(groups, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	// The skewed training distribution (C(Z_i, 5)) adds (e), the
	// meta-training histogram: five panels, three in a row.
	readPNG(t, path).checkGrid(t, 7*plots.DPI, 1300, 1600, 3, 5, blue, vermillion)
}

func TestAdversary(t *testing.T) {
	t.Parallel()
	groups := groupsOf(t, append(accuracySeeds("m", "maml", 1, 1.2, 1.1), accuracySeeds("tr", "trmaml", 0.5, 0.7, 0.6)...)...)
	path := filepath.Join(t.TempDir(), "adversary.png")
	if dir := os.Getenv("PLOTS_KEEP"); dir != "" {
		path = filepath.Join(dir, "adversary.png")
	}
	// One column of two: the data areas share what the names leave.
	if err := plots.Adversary(groups, path, plots.Single); err != nil {
		t.Fatal(err)
	}
	if d := readPNG(t, path); d.w < 3*plots.DPI || d.w > 3.6*plots.DPI {
		t.Errorf("single-column width %d pixels, want about 3.4 inches", d.w)
	}
	if err := plots.Adversary(groups, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	d := readPNG(t, path)
	// Two 1.8-inch data areas beside the names: narrow enough (at most 6.5
	// inches) that the 12-point names stay legible with the figure shown
	// 800 pixels wide or printed at a 3.5-inch column's width (6.5 pt).
	if d.w < 4.5*plots.DPI || d.w > 6.5*plots.DPI {
		t.Errorf("width %d pixels, want 4.5 to 6.5 inches", d.w)
	}
	hits := map[[3]uint32]int{}
	for x := 0; x < d.w; x++ {
		for y := 0; y < d.h; y++ {
			r, g, b := d.rgb(x, y)
			hits[[3]uint32{r, g, b}]++
		}
	}
	for _, c := range [][3]uint32{blue, vermillion} {
		if hits[c] < 200 {
			t.Errorf("colour %v drawn on %d pixels only", c, hits[c])
		}
	}

	// Masses spanning twelve decades (as C(Z_i, 20)) put (a) on a log axis.
	specs := append(accuracySeeds("m", "maml", 1, 1.2), accuracySeeds("tr", "trmaml", 0.5, 0.7)...)
	for i := range specs {
		st := specs[i].Result.MetaTrain
		specs[i].Result.MetaTrain = resultstest.AccuracyStats(st.PerTask, st.Tasks, []float64{1e-12, 1, 1e-6, 0.5, 1e-3}, st.Instances)
	}
	if err := plots.Adversary(groupsOf(t, specs...), path, plots.Double); err != nil {
		t.Fatal(err)
	}
	if d := readPNG(t, path); d.w < 4.5*plots.DPI || d.w > 6.5*plots.DPI {
		t.Errorf("log-scale figure width %d", d.w)
	}

	other := groupsOf(t, resultstest.New("s", "maml", "second", 1, 5, 1))
	if err := plots.Adversary(append(groups, other...), path, plots.Double); err == nil {
		t.Error("groups with different meta-training tasks accepted")
	}
	if err := plots.Adversary(nil, path, plots.Double); err == nil {
		t.Error("no groups accepted")
	}
}
