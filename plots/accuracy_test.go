package plots_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
	// A final p of 0 has no place on the log axis: it is drawn at the
	// axis's start, and the legend says so, only then.
	svgPath := filepath.Join(t.TempDir(), "adversary.svg")
	for _, zero := range []bool{false, true} {
		for i := range specs {
			if specs[i].Config.Algorithm == "trmaml" {
				specs[i].Result.FinalP = []float64{0.2, 0.3, 0.1, 0.2, 0.2}
				if zero {
					specs[i].Result.FinalP = []float64{0.2, 0.4, 0, 0.2, 0.2}
				}
			}
		}
		if err := plots.Adversary(groupsOf(t, specs...), svgPath, plots.Double); err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(svgPath)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(svg), "at the left edge: 0"); got != zero {
			t.Errorf("a final p of 0: %v; legend notes the left edge: %v", zero, got)
		}
	}

	other := groupsOf(t, resultstest.New("s", "maml", "second", 1, 5, 1))
	if err := plots.Adversary(append(groups, other...), path, plots.Double); err == nil {
		t.Error("groups with different meta-training tasks accepted")
	}
	if err := plots.Adversary(nil, path, plots.Double); err == nil {
		t.Error("no groups accepted")
	}
}

// TestCVaRTradeoffAccuracy: the trade-off of accuracy runs is drawn in
// percent on axes over the data (the accuracies here run from 52% to 94%:
// an axis from 0, or in fractions, has ticks outside that), named by the
// family's task noun, with the better direction in the legend; in png at
// both widths and in svg. Runs of two metrics are refused.
func TestCVaRTradeoffAccuracy(t *testing.T) {
	t.Parallel()
	specs := append(accuracySeeds("m", "maml", 1, 1.2, 1.1), accuracySeeds("tr", "trmaml", 0.5, 0.7, 0.6)...)
	for i := range specs {
		specs[i].Config.Eval.CVaRAlpha = []float64{0.5}
	}
	groups := groupsOf(t, specs...)
	dir := t.TempDir()
	if keep := os.Getenv("PLOTS_KEEP"); keep != "" {
		dir = keep
	}
	for _, c := range []struct {
		width         plots.Column
		file          string
		w, minH, maxH int
		cols          int
	}{
		{plots.Double, "tradeoff_accuracy.png", 7 * plots.DPI, 1700, 2000, 2},
		{plots.Single, "tradeoff_accuracy_single.png", int(3.4 * plots.DPI), 3200, 3600, 1},
	} {
		path := filepath.Join(dir, c.file)
		if err := plots.CVaRTradeoff(groups, path, c.width); err != nil {
			t.Fatal(err)
		}
		// Four panels: worst and CVaR_0.5 over meta-test and meta-training.
		readPNG(t, path).checkGrid(t, c.w, c.minH, c.maxH, c.cols, 4, blue, vermillion)
	}

	path := filepath.Join(dir, "tradeoff_accuracy.svg")
	if err := plots.CVaRTradeoff(groups, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ticks []float64
	texts := map[string]bool{}
	for _, m := range regexp.MustCompile(`>([^<>]*)</text>`).FindAllStringSubmatch(string(svg), -1) {
		texts[m[1]] = true
		if v, err := strconv.ParseFloat(strings.TrimSuffix(m[1], "%"), 64); err == nil && strings.HasSuffix(m[1], "%") {
			ticks = append(ticks, v)
		}
	}
	for _, want := range []string{
		"(a) meta-test alphabets: worst alphabet", "(d) meta-training alphabets: CVaR_0.5",
		"mean alphabet accuracy", "worst alphabet accuracy", "CVaR_0.5 of alphabet accuracy", "better: up and to the right",
	} {
		if !texts[want] {
			t.Errorf("tradeoff_accuracy.svg has no text %q", want)
		}
	}
	if len(ticks) < 16 {
		t.Errorf("%d percent tick labels, want at least 4 on each of 4 panels' 2 axes: %v", len(ticks), ticks)
	}
	for _, v := range ticks {
		if v < 45 || v > 96 {
			t.Errorf("tick %g%% outside the data's range (52%% to 94%%, widened by a tenth): %v", v, ticks)
			break
		}
	}

	mixed := append(groups, groupsOf(t, resultstest.New("s", "maml", "second", 1, 5, 1))...)
	if err := plots.CVaRTradeoff(mixed, path, plots.Double); err == nil || !strings.Contains(err.Error(), "measures accuracy but") {
		t.Errorf("trade-off of accuracy and MSE groups: %v", err)
	}
}
