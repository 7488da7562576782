package plots

import (
	"fmt"
	"image/color"
	"math"

	"github.com/trmaml/trmaml/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// curveLine is the line through the means of c at positions x.
func curveLine(x []float64, c results.Curve, col color.RGBA, dash []vg.Length) *plotter.Line {
	xys := make(plotter.XYs, len(x))
	for i := range x {
		xys[i] = plotter.XY{X: x[i], Y: c.Points[i].Mean}
	}
	l := &plotter.Line{XYs: xys}
	l.Color, l.Width, l.Dashes = col, vg.Points(1.6), dash
	return l
}

// minBandSeeds is the fewest seeds a curve gets a t-based 95% band for:
// with two, t = 12.7 makes the band many times the seeds' own spread, so
// the seeds' curves are drawn instead.
const minBandSeeds = 3

// curveBand is the shaded 95% confidence band of c at positions x, cut
// to [lo, hi], the range of the quantity (0 and 1 for a probability), or
// nil when c has no interval (a single seed).
func curveBand(x []float64, c results.Curve, col color.RGBA, lo, hi float64) *plotter.Polygon {
	ring := make(plotter.XYs, 0, 2*len(x))
	wide := false
	for i := range x {
		ring = append(ring, plotter.XY{X: x[i], Y: math.Max(c.Points[i].Mean-c.Points[i].Half, lo)})
		wide = wide || c.Points[i].Half > 0
	}
	for i := len(x) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: x[i], Y: math.Min(c.Points[i].Mean+c.Points[i].Half, hi)})
	}
	if !wide {
		return nil
	}
	return &plotter.Polygon{XYs: []plotter.XYs{ring}, Color: faded(col, 0.22)}
}

// seedLines are thin lines through each seed's values of c at x.
func seedLines(x []float64, c results.Curve, col color.RGBA, dash []vg.Length) []plot.Plotter {
	var out []plot.Plotter
	for _, vs := range c.Seeds {
		var xys plotter.XYs
		for i, v := range vs {
			if !math.IsNaN(v) {
				xys = append(xys, plotter.XY{X: x[i], Y: v})
			}
		}
		if len(xys) > 1 {
			l := &plotter.Line{XYs: xys}
			l.Color, l.Width, l.Dashes = faded(col, 0.45), vg.Points(0.6), dash
			out = append(out, l)
		}
	}
	return out
}

// addCurve adds c's mean line to p over, with its band cut to [lo, hi]
// where minBandSeeds or more seeds have a value and each seed's own line
// where fewer do (two seeds, or the iterations past an unfinished run's
// last evaluation).
func addCurve(p *plot.Plot, x []float64, c results.Curve, col color.RGBA, dash []vg.Length, lo, hi float64) {
	p.Add(curvePlotters(x, c, col, dash, lo, hi)...)
}

// curvePlotters are what addCurve adds: bands, seeds' lines, the mean line.
func curvePlotters(x []float64, c results.Curve, col color.RGBA, dash []vg.Length, lo, hi float64) []plot.Plotter {
	var out []plot.Plotter
	banded := func(i int) bool { return c.Points[i].N >= minBandSeeds }
	for _, seg := range segments(len(x), banded) {
		if b := curveBand(x[seg[0]:seg[1]], sliceCurve(c, seg[0], seg[1]), col, lo, hi); b != nil {
			out = append(out, b)
		}
	}
	if len(c.Seeds) > 1 {
		// Each seed's line, from the last banded point on so it joins the band.
		thin := func(i int) bool { return !banded(i) || (i+1 < len(x) && !banded(i+1)) }
		for _, seg := range segments(len(x), thin) {
			out = append(out, seedLines(x[seg[0]:seg[1]], sliceCurve(c, seg[0], seg[1]), col, dash)...)
		}
	}
	return append(out, curveLine(x, c, col, dash))
}

// segments are the maximal ranges [from, to) of 0..n-1 where in holds.
func segments(n int, in func(i int) bool) [][2]int {
	var out [][2]int
	for i := 0; i < n; i++ {
		if !in(i) {
			continue
		}
		j := i
		for j < n && in(j) {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// sliceCurve is c's points and seeds' values at indices [from, to).
func sliceCurve(c results.Curve, from, to int) results.Curve {
	s := results.Curve{Points: c.Points[from:to], Seeds: make([][]float64, len(c.Seeds))}
	for i, vs := range c.Seeds {
		s.Seeds[i] = vs[from:to]
	}
	return s
}

// errorBars are confidence bars at pts reaching low[i] below and high[i]
// above pts[i] (clipped bars are asymmetric), horizontal (along x) or
// vertical, drawn in col with the given line and cap widths.
func errorBars(pts plotter.XYs, low, high []float64, horizontal bool, col color.Color, width, capWidth vg.Length) (plot.Plotter, error) {
	errs := make([]struct{ Low, High float64 }, len(pts))
	for i := range errs {
		errs[i].Low, errs[i].High = low[i], high[i]
	}
	if horizontal {
		bars, err := plotter.NewXErrorBars(struct {
			plotter.XYs
			plotter.XErrors
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		bars.Color, bars.Width, bars.CapWidth = col, width, capWidth
		return bars, nil
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return nil, err
	}
	bars.Color, bars.Width, bars.CapWidth = col, width, capWidth
	return bars, nil
}

// bandNote says what the confidence marks (e.g. "shaded") of groups
// show: a 95% CI over minBandSeeds or more seeds, the seeds' own (thin)
// curves below that, or that there is one seed per group.
func bandNote(groups []*results.Group, marks string) string {
	n, same := groups[0].Seeds(), true
	for _, g := range groups {
		// An unfinished run leaves fewer seeds past its last evaluation.
		same = same && g.Seeds() == n && !g.Unfinished()
	}
	switch {
	case !several(groups):
		return "1 seed each"
	case same && n < minBandSeeds:
		return fmt.Sprintf("mean of %d seeds; thin: each seed", n)
	case !banded(groups):
		return "means over seeds; thin: each seed"
	case same:
		return fmt.Sprintf("%s: 95%% CI over %d seeds", marks, n)
	}
	return fmt.Sprintf("%s: 95%% CI over seeds (thin: each seed, where below %d)", marks, minBandSeeds)
}

// several reports whether some group has more than one seed.
func several(groups []*results.Group) bool {
	for _, g := range groups {
		if g.Seeds() > 1 {
			return true
		}
	}
	return false
}

// banded reports whether some group's curves get a confidence band.
func banded(groups []*results.Group) bool {
	for _, g := range groups {
		if g.Seeds() >= minBandSeeds {
			return true
		}
	}
	return false
}
