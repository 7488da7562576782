package plots

import (
	"errors"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/display"
)

// histogramBins is the number of bins of Figure 1's loss histogram.
const histogramBins = 25

const iterationLabel = "meta-training iteration"

// worstOver names the worst of a set of values in metric m: the maximum
// loss, the minimum score.
func worstOver(m display.Score) string {
	if m.HigherIsBetter {
		return "minimum"
	}
	return "maximum"
}

// valueAxis sets p's y range for values of metric m: from 0 with headroom
// for a loss; for a score (accuracy in %), from the data's range to at most
// its ceiling (m.Show(1)), so that the differences near the top stay
// visible, with percent ticks.
func valueAxis(p *plot.Plot, m display.Score) {
	p.Y.Tick.Marker = valueTicks(m)
	if !m.HigherIsBetter {
		fromZero(p)
		return
	}
	top := m.Show(1)
	pad := 0.05 * (p.Y.Max - p.Y.Min)
	p.Y.Min, p.Y.Max = max(p.Y.Min-pad, 0), min(p.Y.Max+pad, top)
}

// valueTicks are the ticks of an axis of m's values: percentages for
// accuracy, plain numbers for a loss.
func valueTicks(m display.Score) plot.Ticker {
	if m.Unit == "%" {
		return percentTicks{}
	}
	return denseTicks{}
}

// valueLabel labels an axis of m's values of noun ("task MSE", "alphabet
// accuracy"): without the unit where the ticks carry it.
func valueLabel(m display.Score, noun string) string {
	return strings.TrimSuffix(m.Axis(noun), " ("+m.Unit+")")
}

// valueRange is the range m's displayed values can take, which confidence
// bands are cut to: [0, 100] for accuracy in percent, [0, +Inf) for a loss.
func valueRange(m display.Score) (lo, hi float64) {
	return 0, m.Show(m.Max())
}

// Figure1 draws the paper's Figure 1 for groups (typically MAML and TR-MAML
// at one K; all in one metric) into the PNG file path, four panels side by
// side: (a) average and worst meta-training task value (loss or accuracy)
// against the iteration, (b) the same over the meta-test tasks, (c) the
// standard deviation across the meta-test tasks, (d) a histogram of the
// final per-task meta-test values, the groups overlaid in the same bins,
// and, when the training distribution is skewed (Omniglot's C(Z_i, N)),
// (e) the same over the meta-training tasks, where MAML's neglect of the
// rarely sampled ones shows. Tasks are called alphabets on Omniglot.
// Lines are means over seeds, shaded bands 95% confidence intervals (cut
// to the quantity's range; below three seeds each seed's own thin line
// instead). Loss axes start at 0; accuracy is shown in percent. The panels
// fill a grid for column c.
func Figure1(groups []*results.Group, path string, c Column) error {
	if len(groups) == 0 {
		return errors.New("plots: Figure1 needs at least one group")
	}
	m := groups[0].Score
	noun := results.TaskNoun(groups)
	labels := results.Labels(groups)
	panels := []*plot.Plot{
		newPanel("(a) meta-training "+noun+"s", iterationLabel, valueLabel(m, noun)),
		newPanel("(b) meta-test "+noun+"s", iterationLabel, valueLabel(m, noun)),
		newPanel("(c) spread over meta-test "+noun+"s", iterationLabel, "std. dev. of "+valueLabel(m, noun)),
	}
	lo, hi := valueRange(m)
	for i, g := range groups {
		col := groupColor(i)
		for pi, ms := range [][]results.Column{{results.TrainMean, results.TrainWorst}, {results.TestMean, results.TestWorst}, {results.TestStd}} {
			for si, mc := range ms {
				cv := results.DisplayCurve(m, g.Curve(mc))
				var dash []vg.Length
				if si == 1 {
					dash = dashed
				}
				top := hi
				if pi == 2 {
					top = math.Inf(1) // a spread
				}
				addCurve(panels[pi], cv.Iterations, cv, col, dash, lo, top)
			}
		}
	}
	for i, p := range panels {
		p.X.Tick.Marker = iterationTicks{}
		p.X.Min = 0
		valueAxis(p, m)
		if i == 2 {
			fromZero(p) // a spread
		}
	}

	// The final histograms are of the finished runs: unfinished ones
	// have no per-task values yet.
	if fin := results.Finished(groups); slices.ContainsFunc(fin, func(g *results.Group) bool { return len(g.Runs) > 0 }) {
		panels = append(panels, histogramPanel(fin, results.MetaTest, "(d) final, meta-test "+noun+"s", noun))
		if skewedTraining(fin) {
			panels = append(panels, histogramPanel(fin, results.MetaTrain, "(e) final, meta-training "+noun+"s", noun))
		}
	}

	var legend []legendItem
	for i, l := range labels {
		legend = append(legend, legendItem{l, curveSample(groups, i)})
	}
	legend = append(legend,
		legendItem{"average over " + noun + "s", []plot.Thumbnailer{lineSample(color.Black, nil)}},
		legendItem{worstOver(m) + " over " + noun + "s", []plot.Thumbnailer{lineSample(color.Black, dashed)}},
		legendItem{text: bandNote(groups, "shaded")})
	if several(groups) && len(panels) > 3 {
		legend = append(legend, legendItem{text: "histograms: mean count over seeds"})
	}
	if slices.ContainsFunc(groups, (*results.Group).Unfinished) {
		legend = append(legend, legendItem{text: "unfinished: to the last evaluation; histograms: finished runs"})
	}
	return renderColumn(path, c, legend, panels)
}

// histogramPanel is a panel with the histograms of groups' final per-task
// values on set, overlaid in shared bins.
func histogramPanel(groups []*results.Group, set results.Set, title, noun string) *plot.Plot {
	m := groups[0].Score // groups may have no run (results.Finished), but a metric
	hp := newPanel(title, valueLabel(m, noun), "number of "+noun+"s")
	h := results.TaskHistogram(groups, set, histogramBins)
	edges := make([]float64, len(h.Edges))
	for i, e := range h.Edges {
		edges[i] = m.Show(e)
	}
	for i, g := range groups {
		if len(g.Runs) > 0 {
			hp.Add(histogram(edges, h.Counts[i], groupColor(i)))
		}
	}
	hp.X.Min, hp.X.Max = edges[0], edges[len(edges)-1]
	hp.X.Tick.Marker, hp.Y.Tick.Marker = valueTicks(m), countTicks{}
	fromZero(hp)
	hp.Y.Max = max(hp.Y.Max, 1) // at least one whole task on the axis
	return hp
}

// skewedTraining reports whether the training distribution of the first
// group's meta-training tasks is far from uniform (Omniglot's C(Z_i, N),
// whose largest mass is many times the smallest): then MAML rarely sees
// some meta-training tasks, and their final values get a histogram of
// their own.
func skewedTraining(groups []*results.Group) bool {
	i := slices.IndexFunc(groups, func(g *results.Group) bool { return len(g.Runs) > 0 })
	s := groups[i].TaskValues(results.MetaTrain).Sampling
	return slices.Max(s) > 2*slices.Min(s)
}

// curveSample is the legend sample of groups[i]'s curves: its line, on
// its band colour when there are confidence bands.
func curveSample(groups []*results.Group, i int) []plot.Thumbnailer {
	line := lineSample(groupColor(i), nil)
	if !banded(groups) {
		return []plot.Thumbnailer{line}
	}
	return []plot.Thumbnailer{fillSample(faded(groupColor(i), 0.22)), line}
}

// fromZero starts p's y axis at 0 and leaves 5% headroom above the data.
func fromZero(p *plot.Plot) {
	p.Y.Min = 0
	p.Y.Max *= 1.05
}

// histogram draws counts in the bins between edges, semi-transparent so
// that overlaid histograms stay visible.
func histogram(edges, counts []float64, col color.RGBA) *plotter.Histogram {
	h := &plotter.Histogram{Width: edges[1] - edges[0], FillColor: faded(col, 0.45)}
	for b, n := range counts {
		h.Bins = append(h.Bins, plotter.HistogramBin{Min: edges[b], Max: edges[b+1], Weight: n})
	}
	h.LineStyle.Color, h.LineStyle.Width = col, vg.Points(0.8)
	return h
}

// PWeights draws TR-MAML's task weights for groups (TR-MAML groups) into
// the PNG file path: (a) each meta-training task's final weight, mean over
// seeds with 95% confidence bars, against its coordinate (results.TaskAxisOf:
// the amplitude of sinusoid tasks; the index for other tasks), and, unless hard is
// empty, (b) the total weight on the tasks in hard against the iteration.
// Dashed grey lines mark the uniform distribution, which MAML keeps. The
// panels fill a grid for column c.
func PWeights(groups []*results.Group, hard []string, path string, c Column) error {
	if len(groups) == 0 {
		return errors.New("plots: PWeights needs at least one group")
	}
	labels := results.Labels(groups)
	tasks, _ := groups[0].FinalP()
	axis, numeric := results.TaskAxisOf(tasks)
	for _, g := range groups[1:] {
		other, _ := g.FinalP()
		numeric = numeric && slices.Equal(other, tasks)
	}
	grey := color.RGBA{110, 110, 110, 255}

	pp := newPanel("(a) final task weights", "meta-training task (index)", "task weight p")
	var xs []float64
	var ticks []plot.Tick
	var breaks []float64
	if numeric {
		xs, ticks, breaks = gappedAxis(axis.Positions)
	}
	xmax := 0.0
	for i, g := range groups {
		_, est := g.FinalP()
		pts := make(plotter.XYs, len(est))
		for j, e := range est {
			x := float64(j)
			if numeric {
				x = xs[j]
			}
			xmax = max(xmax, x)
			pts[j] = plotter.XY{X: x, Y: e.Mean}
		}
		if err := addEstimatePoints(pp, pts, est, false, 0, 1, i, vg.Points(1.8)); err != nil {
			return err
		}
	}
	uniform := 1 / float64(len(tasks))
	pp.Add(hline(0, xmax, uniform, grey))
	fromZero(pp)
	if numeric {
		pp.X.Tick.Marker = plot.ConstantTicks(ticks)
		pp.X.Label.Text = "meta-training task " + axis.Name + " (dotted: gap in the range)"
		for _, x := range breaks {
			l := &plotter.Line{XYs: plotter.XYs{{X: x, Y: 0}, {X: x, Y: pp.Y.Max}}}
			l.Color, l.Width, l.Dashes = grey, vg.Points(0.6), []vg.Length{vg.Points(1), vg.Points(1.5)}
			pp.Add(l)
		}
	}
	panels := []*plot.Plot{pp}

	if len(hard) > 0 {
		hp := newPanel("(b) total weight on hard tasks", iterationLabel, "p mass on the selected tasks")
		if numeric {
			hp.Y.Label.Text = "p mass on " + axis.Hard
		}
		var xmax float64
		for i, g := range groups {
			cv := g.PMass(hard)
			addCurve(hp, cv.Iterations, cv, groupColor(i), nil, 0, 1)
			xmax = max(xmax, cv.Iterations[len(cv.Iterations)-1])
		}
		hp.Add(hline(0, xmax, float64(len(hard))*uniform, grey))
		hp.X.Tick.Marker = iterationTicks{}
		hp.X.Min = 0
		// A probability mass: the axis (and so the clipped bands) spans [0, 1].
		hp.Y.Min, hp.Y.Max = 0, 1.02
		panels = append(panels, hp)
	}

	var legend []legendItem
	for i, l := range labels {
		legend = append(legend, legendItem{l, append([]plot.Thumbnailer{lineSample(groupColor(i), nil)}, rowSample(i)...)})
	}
	legend = append(legend, legendItem{"uniform (MAML)", []plot.Thumbnailer{lineSample(grey, dashed)}})
	legend = append(legend, legendItem{text: bandNote(groups, "bars and shading")})
	return renderColumn(path, c, legend, panels)
}

// addEstimatePoints adds group gi's markers of the given radius at pts, one
// per estimate in es, with 95% confidence bars of half-width es[i].Half
// where there are minBandSeeds or more seeds: horizontal bars (the estimates are x
// values) or vertical ones (y values), cut at lo and hi, the ends of the
// estimates' range (0 and 1 for a probability).
func addEstimatePoints(p *plot.Plot, pts plotter.XYs, es []results.Estimate, horizontal bool, lo, hi float64, gi int, radius vg.Length) error {
	var barPts plotter.XYs
	var below, above []float64
	for i, e := range es {
		if e.Half > 0 && e.N >= minBandSeeds {
			v := pts[i].Y
			if horizontal {
				v = pts[i].X
			}
			barPts = append(barPts, pts[i])
			below, above = append(below, max(v-max(e.Mean-e.Half, lo), 0)), append(above, max(min(e.Mean+e.Half, hi)-v, 0))
		}
	}
	if len(barPts) > 0 {
		bars, err := errorBars(barPts, below, above, horizontal, groupColor(gi), vg.Points(0.6), vg.Points(2))
		if err != nil {
			return err
		}
		p.Add(bars)
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.Color, s.Radius, s.Shape = groupColor(gi), radius, shapes[gi%len(shapes)]
	p.Add(s)
	return nil
}

// gappedAxis places tasks with coordinates amps (increasing, e.g. lower
// amplitude bounds) on an axis: one unit apart within a contiguous range of
// tasks, with a gap of a few units where the coordinate jumps (breaks are
// the gaps' centres). ticks label round coordinates within each range, or
// only the first coordinate of a range too short for more.
func gappedAxis(amps []float64) (x []float64, ticks []plot.Tick, breaks []float64) {
	step := math.Inf(1)
	for i := 1; i < len(amps); i++ {
		step = min(step, amps[i]-amps[i-1])
	}
	gap := float64(max(2, len(amps)/12))
	x = make([]float64, len(amps))
	start := 0
	for i := 1; i <= len(amps); i++ {
		if i < len(amps) {
			x[i] = x[i-1] + 1
			if amps[i]-amps[i-1] <= 1.5*step {
				continue
			}
			x[i] += gap
			breaks = append(breaks, x[i]-(gap+1)/2)
		}
		seg := amps[start:i]
		label := func(j int) {
			ticks = append(ticks, plot.Tick{Value: x[start+j], Label: strconv.FormatFloat(seg[j], 'g', 4, 64)})
		}
		if len(seg)*5 < len(amps) {
			label(0)
		} else {
			for _, t := range (plot.DefaultTicks{}).Ticks(seg[0], seg[len(seg)-1]) {
				if t.Label == "" {
					continue
				}
				j, _ := slices.BinarySearch(seg, t.Value-step/2)
				if j < len(seg) && math.Abs(seg[j]-t.Value) < step/2 {
					label(j)
				}
			}
		}
		start = i
	}
	return x, ticks, breaks
}

// hline is a dashed horizontal reference line at y from x0 to x1.
func hline(x0, x1, y float64, col color.Color) *plotter.Line {
	l := &plotter.Line{XYs: plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}}}
	l.Color, l.Width, l.Dashes = col, vg.Points(0.8), dashed
	return l
}

// Orders compares first- and second-order meta-gradients for groups
// (typically MAML and TR-MAML, each in both orders, at one K) in the PNG
// file path: (a) mean and worst meta-test task value against the
// iteration, (b) the same against wall-clock seconds (training plus
// evaluation), (c) training milliseconds per iteration with 95% confidence
// bars. The panels fill a grid for column c.
func Orders(groups []*results.Group, path string, c Column) error {
	if len(groups) == 0 {
		return errors.New("plots: Orders needs at least one group")
	}
	labels := results.Labels(groups)
	m := groups[0].Score
	pi := newPanel("(a) meta-test tasks vs iterations", iterationLabel, valueLabel(m, "task"))
	ps := newPanel("(b) meta-test tasks vs time", "wall-clock seconds (training + evaluation)", valueLabel(m, "task"))
	lo, hi := valueRange(m)
	pb := newPanel("(c) cost of a meta-training iteration", "", "milliseconds per iteration")
	for i, g := range groups {
		col := groupColor(i)
		for si, mc := range []results.Column{results.TestMean, results.TestWorst} {
			cv := results.DisplayCurve(m, g.Curve(mc))
			if si == 1 {
				// Worst-task curves go without bands: eight overlapping
				// bands are unreadable, and the table gives their CIs.
				pi.Add(curveLine(cv.Iterations, cv, col, dashed))
				ps.Add(curveLine(cv.Seconds, cv, col, dashed))
				continue
			}
			addCurve(pi, cv.Iterations, cv, col, nil, lo, hi)
			addCurve(ps, cv.Seconds, cv, col, nil, lo, hi)
		}

		ms := g.Final(results.MsPerIteration)
		if math.IsNaN(ms.Mean) { // unfinished runs have no timing yet
			continue
		}
		bar, err := plotter.NewBarChart(plotter.Values{ms.Mean}, vg.Points(20))
		if err != nil {
			return err
		}
		bar.XMin, bar.Color, bar.LineStyle.Width = float64(i), faded(col, 0.6), 0
		pb.Add(bar)
		if ms.Half > 0 {
			e, err := errorBars(plotter.XYs{{X: float64(i), Y: ms.Mean}}, []float64{min(ms.Half, ms.Mean)}, []float64{ms.Half}, false, color.Black, vg.Points(0.8), vg.Points(5))
			if err != nil {
				return err
			}
			pb.Add(e)
		}
	}
	pi.X.Tick.Marker = iterationTicks{}
	for _, p := range []*plot.Plot{pi, ps} {
		p.X.Min = 0
		valueAxis(p, m)
	}
	short := make([]string, len(labels))
	for i, l := range labels {
		short[i] = strings.ReplaceAll(l, ", ", "\n")
	}
	pb.NominalX(short...)
	fromZero(pb)

	var legend []legendItem
	for i, l := range labels {
		legend = append(legend, legendItem{l, curveSample(groups, i)})
	}
	legend = append(legend,
		legendItem{"mean over tasks", []plot.Thumbnailer{lineSample(color.Black, nil)}},
		legendItem{"worst task", []plot.Thumbnailer{lineSample(color.Black, dashed)}},
		legendItem{text: bandNote(groups, "shaded (means)")})
	return renderColumn(path, c, legend, []*plot.Plot{pi, ps, pb})
}
