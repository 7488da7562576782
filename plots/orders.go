package plots

import (
	"errors"
	"image/color"
	"math"
	"strings"

	"github.com/trmaml/trmaml/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

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
	cols := groupColours(groups)
	for i, g := range groups {
		col := cols[i]
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
	// Bar labels are narrower than the legend's, so that three or four
	// fit under a third of a page: "MAML\n2nd order\n(unfinished)".
	abbrev := strings.NewReplacer(", ", "\n", "second order", "2nd order", "first order", "1st order", " (unfinished)", "\n(unfinished)")
	short := make([]string, len(labels))
	for i, l := range labels {
		short[i] = abbrev.Replace(l)
	}
	pb.NominalX(short...)
	fromZero(pb)

	var legend []legendItem
	for i, l := range labels {
		legend = append(legend, legendItem{l, curveSample(groups, cols[i])})
	}
	legend = append(legend,
		legendItem{"mean over tasks", []plot.Thumbnailer{lineSample(color.Black, nil)}},
		legendItem{"worst task", []plot.Thumbnailer{lineSample(color.Black, dashed)}},
		legendItem{text: bandNote(groups, "shaded (means)")})
	return renderColumn(path, c, legend, []*plot.Plot{pi, ps, pb})
}
