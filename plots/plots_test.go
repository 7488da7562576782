package plots_test

import (
	"fmt"
	"image"
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
	"github.com/trmaml/trmaml/theory"
)

// groupsOf writes synthetic runs (one per level and spec) and loads their
// groups.
func groupsOf(t *testing.T, specs ...resultstest.Spec) []*results.Group {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for _, s := range specs {
		dir := filepath.Join(root, fmt.Sprintf("%s-seed%d", s.Config.Name, s.Config.Seed))
		if err := s.Write(dir); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	groups, err := results.LoadGroups(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return groups
}

// seeds returns runs of one setting for seeds 1..len(levels).
func seeds(name, alg, order string, levels ...float64) []resultstest.Spec {
	var specs []resultstest.Spec
	for i, l := range levels {
		specs = append(specs, resultstest.New(name, alg, order, uint64(i+1), 5, l))
	}
	return specs
}

// decoded is a PNG read back.
type decoded struct {
	img image.Image
	w   int
	h   int
}

func readPNG(t *testing.T, path string) decoded {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, format, err := image.Decode(f)
	if err != nil || format != "png" {
		t.Fatalf("%s: format %q, %v", path, format, err)
	}
	b := img.Bounds()
	return decoded{img, b.Dx(), b.Dy()}
}

func (d decoded) rgb(x, y int) (r, g, b uint32) {
	r, g, b, _ = d.img.At(x, y).RGBA()
	return r >> 8, g >> 8, b >> 8
}

// check verifies a figure of panels side by side under its legend: the
// width, a height of 600-900 pixels and the rest of checkGrid.
func (d decoded) check(t *testing.T, w int, panels int, colours ...[3]uint32) {
	t.Helper()
	d.checkGrid(t, w, 600, 900, panels, panels, colours...)
}

// checkGrid verifies the size, that the image is not blank and that the
// given colours appear, and counts the panels, in rows of cols (the last
// row may be short), by their y
// axes: the longest vertical black lines, as long as each other since the
// panels' data areas are aligned (the x axes are horizontal, everything
// else is coloured, grey or short). Each column of panels has its axes in
// its share of the width, one per row.
func (d decoded) checkGrid(t *testing.T, w, minH, maxH, cols, panels int, colours ...[3]uint32) {
	t.Helper()
	if d.w != w || d.h < minH || d.h > maxH {
		t.Errorf("size %dx%d, want width %d and height %d-%d", d.w, d.h, w, minH, maxH)
	}
	ink, colourHits := 0, make([]int, len(colours))
	runs := make([][]int, d.w) // lengths of the vertical runs of black pixels per column
	ends := make([][]int, d.w) // the y just below each run
	for x := 0; x < d.w; x++ {
		run := 0
		for y := 0; y <= d.h; y++ {
			if y == d.h {
				runs[x], ends[x] = append(runs[x], run), append(ends[x], y)
				break
			}
			r, g, b := d.rgb(x, y)
			if r < 250 || g < 250 || b < 250 {
				ink++
			}
			if max(r, g, b) < 60 {
				run++
			} else {
				runs[x], ends[x] = append(runs[x], run), append(ends[x], y)
				run = 0
			}
			for i, c := range colours {
				if r == c[0] && g == c[1] && b == c[2] {
					colourHits[i]++
				}
			}
		}
	}
	if frac := float64(ink) / float64(d.w*d.h); frac < 0.02 {
		t.Errorf("only %.1f%% of the pixels are not white", 100*frac)
	}
	for i, n := range colourHits {
		if n < 200 {
			t.Errorf("colour %v drawn on %d pixels only", colours[i], n)
		}
	}
	tallest := 0
	for _, rs := range runs {
		tallest = max(tallest, slices.Max(rs))
	}
	rows := (panels + cols - 1) / cols
	if tallest < d.h/(3*rows) {
		t.Fatalf("the longest vertical line is %d pixels of %d", tallest, d.h)
	}
	long := func(x int) int { // the number of axis-long runs in column x
		n := 0
		for _, r := range runs[x] {
			if r >= tallest*9/10 {
				n++
			}
		}
		return n
	}
	// A column of panels' y axes, aligned to within a few pixels (the
	// tick labels of its panels differ).
	const slack = 8
	var axes []int
	for x := 0; x < d.w; x++ {
		if long(x) > 0 && (len(axes) == 0 || x-axes[len(axes)-1] > slack) {
			axes = append(axes, x)
		}
	}
	rowsAt := func(x int) int { // distinct axis-long runs (by where they end) near x
		var bottoms []int
		for dx := 0; dx <= slack && x+dx < d.w; dx++ {
			for i, r := range runs[x+dx] {
				if r >= tallest*9/10 && !slices.ContainsFunc(bottoms, func(b int) bool { return b-ends[x+dx][i] <= slack && ends[x+dx][i]-b <= slack }) {
					bottoms = append(bottoms, ends[x+dx][i])
				}
			}
		}
		return len(bottoms)
	}
	if len(axes) != cols {
		t.Errorf("%d columns of y axes at x = %v, want %d", len(axes), axes, cols)
	}
	for i, x := range axes {
		// Each column of panels occupies its share of the width.
		if lo, hi := i*d.w/cols, (i+1)*d.w/cols; x < lo || x >= hi {
			t.Errorf("panel column %d's axis at x = %d, outside its share [%d, %d)", i, x, lo, hi)
		}
		if n, want := rowsAt(x), (panels-i+cols-1)/cols; n != want {
			t.Errorf("%d y axes at x = %d, want %d rows of panels", n, x, want)
		}
	}
}

var (
	blue       = [3]uint32{0, 114, 178}
	vermillion = [3]uint32{213, 94, 0}
	green      = [3]uint32{0, 158, 115}
)

func TestFigure1(t *testing.T) {
	t.Parallel()
	groups := groupsOf(t, append(seeds("m", "maml", "second", 1, 1.2, 1.4), seeds("tr", "trmaml", "second", 0.8, 0.9, 1.3)...)...)
	path := filepath.Join(t.TempDir(), "figure1.png")
	if err := plots.Figure1(groups, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	// A page's width, 7 inches: two rows of two panels.
	readPNG(t, path).checkGrid(t, 7*plots.DPI, 1300, 1600, 2, 4, blue, vermillion)
	// One column, 3.4 inches: two by two.
	if err := plots.Figure1(groups, path, plots.Single); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).checkGrid(t, int(3.4*plots.DPI), 1100, 1400, 2, 4, blue, vermillion)

	// One seed per group: no bands, still four panels.
	one := groupsOf(t, seeds("m", "maml", "second", 1)[0], seeds("tr", "trmaml", "second", 2)[0])
	if err := plots.Figure1(one, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).checkGrid(t, 7*plots.DPI, 1300, 1600, 2, 4, blue, vermillion)

	// PDF and SVG, by the file's extension; anything else is refused.
	for _, ext := range []string{"pdf", "svg"} {
		p := filepath.Join(t.TempDir(), "figure1."+ext)
		if err := plots.Figure1(groups, p, plots.Double); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if head := map[string]string{"pdf": "%PDF-", "svg": "<?xml"}[ext]; !strings.HasPrefix(string(raw), head) {
			t.Errorf("%s starts %q, want %q", p, raw[:min(len(raw), 10)], head)
		}
	}
	if err := plots.Figure1(groups, filepath.Join(t.TempDir(), "figure1.jpg"), plots.Double); err == nil || !strings.Contains(err.Error(), ".png, .pdf, .svg") {
		t.Errorf("a .jpg file: %v", err)
	}

	if err := plots.Figure1(nil, path, plots.Double); err == nil {
		t.Error("Figure1 of no groups succeeded")
	}
}

func TestPWeights(t *testing.T) {
	t.Parallel()
	groups := groupsOf(t, seeds("tr", "trmaml", "second", 1, 2)...)
	hard := results.TasksWithAmplitudeAtLeast(resultstest.TrainTasks, results.HardAmplitude)
	path := filepath.Join(t.TempDir(), "p.png")
	if err := plots.PWeights(groups, hard, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).check(t, 7*plots.DPI, 2, vermillion) // TR-MAML's colour

	if err := plots.PWeights(groups, nil, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).check(t, 7*plots.DPI, 1, vermillion)

	// One column's width: panel (a)'s long x label once squeezed panel
	// (b)'s data area to nothing. Each panel's x axis spans most of its half.
	if err := plots.PWeights(groups, hard, path, plots.Single); err != nil {
		t.Fatal(err)
	}
	d := readPNG(t, path)
	for i := range 2 {
		lo, hi := i*d.w/2, (i+1)*d.w/2
		if n := d.longestRowRun(lo, hi); n < (hi-lo)/2 {
			t.Errorf("single width: panel %d's x axis is %d pixels of its %d", i, n, hi-lo)
		}
	}
}

// longestRowRun is the longest horizontal run of near-black pixels between
// x0 and x1: an x axis.
func (d decoded) longestRowRun(x0, x1 int) int {
	best := 0
	for y := 0; y < d.h; y++ {
		run := 0
		for x := x0; x < x1; x++ {
			if r, g, b := d.rgb(x, y); max(r, g, b) < 60 {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
	}
	return best
}

func TestOrders(t *testing.T) {
	t.Parallel()
	groups := groupsOf(t, append(append(seeds("m2", "maml", "second", 1, 1.1), seeds("tr2", "trmaml", "second", 1.2, 1.25)...),
		seeds("m1", "maml", "first", 0.5, 0.55)...)...)
	if len(groups) != 3 {
		t.Fatalf("%d groups", len(groups))
	}
	path := filepath.Join(t.TempDir(), "orders.png")
	if err := plots.Orders(groups, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	// MAML's two orders: its blue and that blue darker.
	readPNG(t, path).check(t, 7*plots.DPI, 3, blue, vermillion, [3]uint32{0, 74, 116})
}

func TestWriteFails(t *testing.T) {
	t.Parallel()
	groups := groupsOf(t, seeds("m", "maml", "second", 1)...)
	if err := plots.Figure1(groups, filepath.Join(t.TempDir(), "missing", "f.png"), plots.Double); err == nil {
		t.Error("wrote into a missing directory")
	}
}

// cvarSeeds returns CVaR runs at level a for seeds 1..len(levels).
func cvarSeeds(a float64, levels ...float64) []resultstest.Spec {
	specs := seeds(fmt.Sprintf("cvar%g", a), "cvar", "second", levels...)
	for i := range specs {
		specs[i].Config.Settings("cvar").(*metalearn.CVaR).Level = a
	}
	return specs
}

func TestCVaRTradeoff(t *testing.T) {
	t.Parallel()
	specs := append(seeds("m", "maml", "second", 1, 1.2), seeds("tr", "trmaml", "second", 0.8, 0.9)...)
	specs = append(specs, seeds("ent", "trmaml_entropic", "second", 0.85, 0.95)...)
	for _, a := range []float64{1, 0.5, 0.1} {
		specs = append(specs, cvarSeeds(a, a, a+0.1)...)
	}
	groups := groupsOf(t, specs...)
	if len(groups) != 6 {
		t.Fatalf("%d groups, want 6 (one per CVaR level)", len(groups))
	}
	path := filepath.Join(t.TempDir(), "tradeoff.png")
	if err := plots.CVaRTradeoff(groups, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	// A page's width: the two panels side by side.
	readPNG(t, path).checkGrid(t, 7*plots.DPI, 900, 1100, 2, 2, blue, green)
	// One column: stacked.
	if err := plots.CVaRTradeoff(groups, path, plots.Single); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).checkGrid(t, int(3.4*plots.DPI), 1600, 1900, 1, 2, blue, green)
	if err := plots.CVaRTradeoff(nil, path, plots.Double); err == nil {
		t.Error("CVaRTradeoff of no groups succeeded")
	}
}

// TestCVaRTradeoffLevels: a method swept over several values is a path
// whose points carry their values (CVaR at a = 0.5 and 0.1); a method at a
// single value names it in the legend, with no label on its point, which
// could not say whose it is beside another method's at the same value.
func TestCVaRTradeoffLevels(t *testing.T) {
	t.Parallel()
	drmaml := func(a float64) []resultstest.Spec {
		specs := seeds(fmt.Sprintf("dr%g", a), "drmaml", "second", 1, 1.1)
		for i := range specs {
			specs[i].Config.Settings("drmaml").(*metalearn.DRMAML).Alpha = a
		}
		return specs
	}
	maml := seeds("m", "maml", "second", 1, 1.2)
	for _, c := range []struct {
		name      string
		specs     []resultstest.Spec
		want      []string
		wantCount map[string]int
	}{
		{"one level", append(append([]resultstest.Spec{}, maml...), drmaml(0.5)...),
			[]string{"DR-MAML, alpha=0.5"}, map[string]int{"alpha=0.5": 1, " at alpha": 0}},
		{"two levels", append(append(append([]resultstest.Spec{}, maml...), cvarSeeds(0.5, 0.5, 0.6)...), cvarSeeds(0.1, 0.1, 0.2)...),
			[]string{"CVaR at a", "a=0.5", "a=0.1"}, map[string]int{"CVaR, a=": 0}},
	} {
		path := filepath.Join(t.TempDir(), "tradeoff.svg")
		if err := plots.CVaRTradeoff(groupsOf(t, c.specs...), path, plots.Double); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		for _, w := range c.want {
			if !strings.Contains(svg, w) {
				t.Errorf("%s: the figure has no text %q", c.name, w)
			}
		}
		for w, n := range c.wantCount {
			if got := strings.Count(svg, w); got != n {
				t.Errorf("%s: %q appears %d times, want %d", c.name, w, got, n)
			}
		}
	}
}

func TestTheorem1Gap(t *testing.T) {
	t.Parallel()
	curves := []theory.Curve{
		{Geometry: theory.Euclidean, T: []int{100, 1000, 10000}, Mean: []float64{0.1, 0.03, 0.01}, Half: []float64{0.01, 0.05, 0.001},
			Gaps: [][]float64{{0.1, 0.1}, {0.03, 0.03}, {0.01, 0.01}}, Slope: -0.5, Intercept: math.Log(0.1) + 0.5*math.Log(100)},
		{Geometry: theory.Entropic, T: []int{100, 1000, 10000}, Mean: []float64{0.2, 0.1, 0.05}, Half: []float64{0.01, 0.01, 0.01},
			Gaps: [][]float64{{0.2, 0.2}, {0.1, 0.1}, {0.05, 0.05}}, Slope: -0.3, Intercept: math.Log(0.2) + 0.3*math.Log(100)},
	}
	path := filepath.Join(t.TempDir(), "gap.png")
	if err := plots.Theorem1Gap(curves, path, plots.Double); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).checkGrid(t, 7*plots.DPI, 850, 1050, 1, 1, blue, vermillion)
	if err := plots.Theorem1Gap(curves, path, plots.Single); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path).checkGrid(t, int(3.4*plots.DPI), 750, 1000, 1, 1, blue, vermillion)
	if err := plots.Theorem1Gap(nil, path, plots.Double); err == nil {
		t.Error("Theorem1Gap of no curves succeeded")
	}
	// One T, or a zero gap, has no log-log axes: an error, not gonum's panic.
	one := curves[0]
	one.T, one.Mean, one.Half, one.Gaps = one.T[:1], one.Mean[:1], one.Half[:1], one.Gaps[:1]
	zero := curves[1]
	zero.Mean = []float64{0.2, 0, 0.05}
	for _, bad := range []theory.Curve{one, zero} {
		if err := plots.Theorem1Gap([]theory.Curve{curves[0], bad}, path, plots.Double); err == nil {
			t.Errorf("Theorem1Gap of T %v, mean %v succeeded", bad.T, bad.Mean)
		}
	}
}

func TestTaskCurves(t *testing.T) {
	t.Parallel()
	var specs []resultstest.Spec
	for _, s := range append(seeds("m", "maml", "second", 1, 1.2, 1.4), seeds("tr", "trmaml", "second", 0.8, 0.9, 1.3)...) {
		specs = append(specs, s.WithTasks())
	}
	path := filepath.Join(t.TempDir(), "tasks.png")
	if err := plots.TaskCurves(groupsOf(t, specs...), path, plots.Double); err != nil {
		t.Fatal(err)
	}
	// A row per method, a column per task set; the best group of tasks is
	// light green, the worst dark purple.
	lightGreen, purple := [3]uint32{122, 209, 81}, [3]uint32{68, 1, 84}
	readPNG(t, path).checkGrid(t, 7*plots.DPI, 1300, 1600, 2, 4, lightGreen, purple)
	if err := plots.TaskCurves(groupsOf(t, seeds("old", "maml", "second", 1)...), path, plots.Double); err == nil {
		t.Error("runs without tasks.csv drawn")
	}

	// Lines over fewer seeds than a group has (a run from before tasks.csv)
	// say so, group by group; with every run's tasks.csv they do not.
	svgPath := filepath.Join(t.TempDir(), "tasks.svg")
	for _, c := range []struct {
		drop int // runs of MAML without tasks.csv
		note string
	}{
		{0, "lines: means over seeds"},
		{1, "lines: means over the seeds with tasks.csv (MAML 2 of 3, TR-MAML 3 of 3)"},
	} {
		mixed := slices.Clone(specs)
		for i := range c.drop {
			mixed[i] = seeds("m", "maml", "second", 1, 1.2, 1.4)[i]
		}
		if err := plots.TaskCurves(groupsOf(t, mixed...), svgPath, plots.Double); err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(svgPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(svg), c.note) || c.drop == 0 && strings.Contains(string(svg), "tasks.csv (") {
			t.Errorf("%d runs without tasks.csv: legend lacks %q", c.drop, c.note)
		}
	}
	// One seed per method: the legend says so, not "means over seeds".
	single := []resultstest.Spec{specs[0], specs[3]}
	if err := plots.TaskCurves(groupsOf(t, single...), svgPath, plots.Double); err != nil {
		t.Fatal(err)
	}
	if svg, _ := os.ReadFile(svgPath); !strings.Contains(string(svg), "1 seed each") || strings.Contains(string(svg), "means over") {
		t.Error("one seed each: the legend does not say so")
	}
}
