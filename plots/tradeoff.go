package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/display"
)

// CVaRTradeoff draws the trade-off between average and worst-case task
// score in the file path (its extension names the format): each group's
// final mean against its final worst-task value, estimated over seeds with
// 95% confidence bars on both axes (from minBandSeeds seeds on; with fewer
// the seeds' own dots show the spread), (a) over the meta-test tasks and
// (b) over the meta-training tasks, in the groups' metric (all one) and its
// display units: the worst task is the largest loss or the smallest
// accuracy, shown in percent.
// A method's groups at several levels (CVaR's a) are joined in order of
// the level and labelled with it (placed clear of each other and of every
// group's marker, with a leader line when pushed away); a method at one
// level names it in the legend instead. Each method has its glyph and
// colour among the figure's methods (methodSet). Every seed's own result is a small
// faint dot; the axes run over those (tradeoffRange: from 0 for a loss, the data's own
// range for a score such as accuracy, which sits near its ceiling), and
// confidence bars that reach further (a few seeds with one outlier give
// wide intervals) are cut at the axes, so never past 100%. The panels go
// two side by side at Double, stacked in one column at Single
// (tradeoffLayout). When the runs list CVaR levels (results.CVaRLevels),
// each set gets a panel of the mean against CVaR_alpha at the first level
// below its mean-worst one.
func CVaRTradeoff(groups []*results.Group, path string, c Column) error {
	if len(groups) == 0 {
		return errors.New("plots: CVaRTradeoff needs at least one group")
	}
	type panelSpec struct {
		title, ylabel string
		st            [2]axisStat
	}
	var specs []panelSpec
	levels, score, noun := results.CVaRLevels(groups), groups[0].Score, results.TaskNoun(groups)
	for _, g := range groups[1:] {
		if g.Score.Name != score.Name {
			return fmt.Errorf("plots: CVaRTradeoff: %s measures %s but %s measures %s: draw each metric on its own",
				groups[0].Key, score.Label, g.Key, g.Score.Label)
		}
	}
	what := noun + " loss (" + score.Label + ")"
	if score.HigherIsBetter {
		what = valueLabel(score, noun)
	}
	for _, set := range []results.Set{results.MetaTest, results.MetaTrain} {
		name := "meta-test"
		if set == results.MetaTrain {
			name = "meta-training"
		}
		mean, worst := set.Finals()
		tasks := name + " " + noun + "s: "
		specs = append(specs, panelSpec{tasks + "worst " + noun, "worst " + what, [2]axisStat{finalStat(mean, score), finalStat(worst, score)}})
		if len(levels) > 0 {
			a := strconv.FormatFloat(levels[0], 'g', -1, 64)
			specs = append(specs, panelSpec{tasks + "CVaR_" + a, "CVaR_" + a + " of " + what, [2]axisStat{finalStat(mean, score), cvarStat(set, levels[0], score)}})
		}
	}
	// A method swept over several values (CVaR's a) is a labelled path; one
	// at a single value names it in the legend instead.
	values := map[string]map[float64]bool{}
	for _, g := range groups {
		if g.Key.SweptSymbol() != "" {
			if values[g.Key.Algorithm] == nil {
				values[g.Key.Algorithm] = map[float64]bool{}
			}
			values[g.Key.Algorithm][g.Key.Level] = true
		}
	}
	swept := func(k results.Key) bool { return len(values[k.Algorithm]) > 1 }
	styles := groupMethods(groups)
	var panels []*plot.Plot
	var legend []legendItem
	for pi, spec := range specs {
		st := spec.st
		p := newPanel("("+string(rune('a'+pi))+") "+spec.title, "mean "+what, spec.ylabel)
		var others plotter.XYs
		paths := map[string]plotter.XYs{} // per method that sweeps a setting, over its values
		pathLabels := map[string][]string{}
		var pathOrder []string
		seen := map[string]bool{}
		var xs, ys []float64
		for _, g := range groups {
			for _, r := range g.Runs {
				xs, ys = append(xs, st[0].value(r)), append(ys, st[1].value(r))
			}
		}
		xmin, xmax := tradeoffRange(score, xs)
		ymin, ymax := tradeoffRange(score, ys)
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
		p.X.Tick.Marker, p.Y.Tick.Marker = valueTicks(score), valueTicks(score)
		for _, g := range groups {
			mean, worst := st[0].group(g), st[1].group(g)
			style := styles[g.Key.Algorithm]
			pt := plotter.XYs{{X: mean.Mean, Y: worst.Mean}}
			sc, err := plotter.NewScatter(pt)
			if err != nil {
				return err
			}
			var runs plotter.XYs
			for _, r := range g.Runs {
				runs = append(runs, plotter.XY{X: st[0].value(r), Y: st[1].value(r)})
			}
			dots, err := plotter.NewScatter(runs)
			if err != nil {
				return err
			}
			dots.GlyphStyle.Color, dots.GlyphStyle.Shape, dots.GlyphStyle.Radius = faded(style.col, 0.5), draw.CircleGlyph{}, vg.Points(1.8)
			sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = style.col, style.shape, markerRadius
			p.Add(dots)
			if g.Seeds() >= minBandSeeds { // below, t makes the bars many times the seeds' own spread: the dots show them
				xl, xh := barReach(mean, xmin, xmax)
				xb, err := errorBars(pt, []float64{xl}, []float64{xh}, true, faded(style.col, 0.7), vg.Points(1), vg.Points(5))
				if err != nil {
					return err
				}
				yl, yh := barReach(worst, ymin, ymax)
				yb, err := errorBars(pt, []float64{yl}, []float64{yh}, false, faded(style.col, 0.7), vg.Points(1), vg.Points(5))
				if err != nil {
					return err
				}
				p.Add(xb, yb)
			}
			p.Add(sc)
			if sym := g.Key.SweptSymbol(); swept(g.Key) {
				if _, ok := paths[g.Key.Algorithm]; !ok {
					pathOrder = append(pathOrder, g.Key.Algorithm)
				}
				paths[g.Key.Algorithm] = append(paths[g.Key.Algorithm], pt[0])
				pathLabels[g.Key.Algorithm] = append(pathLabels[g.Key.Algorithm], sym+"="+strconv.FormatFloat(g.Key.Level, 'g', -1, 64))
			} else {
				others = append(others, pt[0])
			}
			if pi == 0 && !seen[g.Key.Algorithm] {
				seen[g.Key.Algorithm] = true
				name := results.AlgorithmName(g.Key.Algorithm)
				if sym := g.Key.SweptSymbol(); swept(g.Key) {
					name += " at " + sym
				} else if sym != "" {
					name += ", " + sym + "=" + strconv.FormatFloat(g.Key.Level, 'g', -1, 64)
				}
				legend = append(legend, legendItem{name, []plot.Thumbnailer{sc}})
			}
		}
		// One set of labels for every swept method's points, so that they
		// are placed clear of each other too.
		var labelled plotter.XYs
		var labels []string
		for _, alg := range pathOrder {
			path := paths[alg]
			if len(path) > 1 {
				l, err := plotter.NewLine(path)
				if err != nil {
					return err
				}
				l.Color, l.Width = faded(styles[alg].col, 0.6), vg.Points(1)
				p.Add(l)
			}
			labelled, labels = append(labelled, path...), append(labels, pathLabels[alg]...)
		}
		if len(labelled) > 0 {
			sty := p.X.Tick.Label
			sty.Font.Size = tickSize - 1
			p.Add(&pointLabels{
				XYs: labelled, Labels: labels, Avoid: others, Radius: markerRadius, Text: sty,
				Leader: draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)},
			})
		}
		panels = append(panels, p)
	}
	note := "dots: single seeds"
	if banded(groups) {
		note = fmt.Sprintf("bars: 95%% CI over seeds (%d or more; cut at the axes); ", minBandSeeds) + note
	}
	legend = append(legend, legendItem{text: note})
	if score.HigherIsBetter { // a loss's axes start at 0, which says it; a score's do not
		legend = append(legend, legendItem{text: "better: up and to the right"})
	}
	w, h, cols := tradeoffLayout(c, len(panels))
	return renderGrid(path, w, h, cols, legend, panels)
}

// axisStat is a statistic on an axis of the trade-off figure, in its
// metric's display units: one run's value and its estimate over a group's
// seeds.
type axisStat struct {
	value func(*results.Run) float64
	group func(*results.Group) results.Estimate
}

// finalStat is a statistic of result.json in score's display units.
func finalStat(f results.Final, score display.Score) axisStat {
	return axisStat{
		value: func(r *results.Run) float64 { return score.Show(f.Value(&r.Result)) },
		group: func(g *results.Group) results.Estimate { return results.Display(score, g.Final(f)) },
	}
}

// cvarStat is CVaR_alpha over the tasks of set (metalearn.TailMean: the
// mean of the largest losses, of the smallest accuracies) in score's
// display units.
func cvarStat(set results.Set, alpha float64, score display.Score) axisStat {
	return axisStat{
		value: func(r *results.Run) float64 { return score.Show(r.CVaR(set, alpha, score.Metric)) },
		group: func(g *results.Group) results.Estimate { return results.Display(score, g.FinalCVaR(set, alpha)) },
	}
}

// tradeoffRange is the range of a trade-off axis over the seeds' values vs
// (display units): from 0 to a tenth beyond the largest for a loss; for a
// score, whose values crowd below its ceiling (Omniglot accuracies at
// 75-97%), the values' own range widened by a tenth of it on either side,
// within [0, the ceiling].
func tradeoffRange(score display.Score, vs []float64) (lo, hi float64) {
	if !score.HigherIsBetter {
		for _, v := range vs {
			hi = math.Max(hi, v)
		}
		return 0, 1.1 * hi
	}
	lo, hi = slices.Min(vs), slices.Max(vs)
	pad := 0.1 * (hi - lo)
	if pad == 0 {
		pad = 0.01 * score.Show(1) // one seed, or all equal: a point's width of room
	}
	bottom, top := valueRange(score)
	return math.Max(lo-pad, bottom), math.Min(hi+pad, top)
}

// barReach is how far e's confidence bar reaches below and above its
// mean on an axis from lo to hi: its half-width, cut at the axis's ends
// (which tradeoffRange keeps within the metric's range, so never past
// 100%).
func barReach(e results.Estimate, lo, hi float64) (below, above float64) {
	return math.Min(e.Half, e.Mean-lo), math.Min(e.Half, hi-e.Mean)
}

// tradeoffLayout is the trade-off figure's grid of n panels at column c:
// two side by side across a page (Double), or one above the other in a
// column (Single); the panels are kept nearly square, so that the labels
// placed beside the CVaR levels' points have room.
func tradeoffLayout(c Column, n int) (w, h vg.Length, cols int) {
	if c == Single {
		return c.Width(), 2.7 * vg.Inch, 1
	}
	cols = min(n, 2)
	return c.Width() / vg.Length(cols), 3 * vg.Inch, cols
}

// markerRadius is the radius of the groups' markers, in points.
const markerRadius = 4
