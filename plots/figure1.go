package plots

import (
	"errors"
	"image/color"
	"math"
	"slices"

	"github.com/trmaml/trmaml/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// histogramBins is the number of bins of Figure 1's loss histogram.
const histogramBins = 25

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
	cols := groupColours(groups)
	for i, g := range groups {
		col := cols[i]
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
		legend = append(legend, legendItem{l, curveSample(groups, cols[i])})
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
	cols := groupColours(groups)
	edges := make([]float64, len(h.Edges))
	for i, e := range h.Edges {
		edges[i] = m.Show(e)
	}
	for i, g := range groups {
		if len(g.Runs) > 0 {
			hp.Add(histogram(edges, h.Counts[i], cols[i]))
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

// curveSample is the legend sample of the curves of one of groups drawn
// in col: its line, on its band colour when there are confidence bands.
func curveSample(groups []*results.Group, col color.RGBA) []plot.Thumbnailer {
	line := lineSample(col, nil)
	if !banded(groups) {
		return []plot.Thumbnailer{line}
	}
	return []plot.Thumbnailer{fillSample(faded(col, 0.22)), line}
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
