package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/trmaml/trmaml/results"
)

// Adversary draws what TR-MAML's adversary does, for groups of one setting
// (typically MAML and TR-MAML on Omniglot) into the PNG file path, the
// meta-training tasks listed by name down the rows in increasing order of
// their mass (for Omniglot alphabets, of their number of characters Z_i,
// fewest first): (a) the training distribution that MAML samples from
// (mass over the sum of masses, C(Z_i, N) / sum_j C(Z_j, N)) as bars,
// beside each robust group's final task weight p (mean over seeds, 95%
// confidence bars), with the uniform 1/n dashed; (b) every group's final
// per-task value on the same rows (accuracy in percent), with 95%
// confidence bars clipped to the metric's range. The names are written
// once, left of (a). At Double the data areas are adversaryDataWidth wide
// (the figure about 6.5 inches with Omniglot's names); at Single they share
// what the names leave of the column's width. All groups must share the
// meta-training tasks.
func Adversary(groups []*results.Group, path string, c Column) error {
	if len(groups) == 0 {
		return errors.New("plots: Adversary needs at least one group")
	}
	train := groups[0].TaskValues(results.MetaTrain)
	for _, g := range groups[1:] {
		if !slices.Equal(g.TaskValues(results.MetaTrain).Tasks, train.Tasks) {
			return fmt.Errorf("plots: Adversary: %s and %s have different meta-training tasks", groups[0].Key, g.Key)
		}
	}
	m := groups[0].Score
	noun := results.TaskNoun(groups)
	n := len(train.Tasks)
	// row[i] is task i's y position: rank 0 (least mass) at the top.
	order := results.MassOrder(train.Tasks, train.Sampling)
	row := make([]float64, n)
	ticks := make([]plot.Tick, n)
	for rank, i := range order {
		row[i] = float64(n - 1 - rank)
		ticks[rank] = plot.Tick{Value: row[i], Label: strings.ReplaceAll(train.Tasks[i], "_", " ")}
	}
	labels := results.Labels(groups)
	grey := color.RGBA{110, 110, 110, 255}

	// The names say what the rows are; the legend says their order.
	sp := results.Sampling(groups)
	rows := "rows: meta-training " + noun + "s, least training probability at top"
	if sp.Order != "" {
		rows = "rows: meta-training " + noun + "s, " + strings.TrimSuffix(sp.Order, " first") + " at top"
	}
	pp := newPanel("(a) sampling distribution, final p", "probability", "")
	styles := groupStyles(groups)
	samplingColor := grey
	if i := slices.IndexFunc(groups, func(g *results.Group) bool { return !g.Key.MovesP() }); i >= 0 {
		samplingColor = styles[i].col
	}
	var robust []int
	finalP := map[int][]results.Estimate{}
	for gi, g := range groups {
		if g.Key.MovesP() {
			robust = append(robust, gi)
			_, finalP[gi] = g.FinalP()
		}
	}
	// Probabilities spanning more than two decades (C(Z_i, N) at 20-way
	// spans about fifteen) go on a log axis, which starts at a power of ten
	// below the smallest positive value; a weight of 0 is drawn there.
	lo, hi := math.Inf(1), 1/float64(n)
	for _, v := range train.Sampling {
		lo, hi = positiveMin(lo, v), max(hi, v)
	}
	for _, p := range finalP {
		for _, e := range p {
			lo, hi = positiveMin(lo, e.Mean), max(hi, e.Mean+e.Half)
		}
	}
	floor := 0.0
	if hi/lo > 100 {
		floor = math.Pow(10, math.Floor(math.Log10(lo)))
		pp.X.Scale, pp.X.Tick.Marker = plot.LogScale{}, decadeTicks{}
		pp.X.Label.Text = "probability (log scale)"
	}
	for i, v := range train.Sampling {
		pp.Add(hbar(row[i], floor, max(v, floor), samplingColor))
	}
	for _, gi := range robust {
		// Keep the markers and their bars on the axis.
		if err := addRowPoints(pp, finalP[gi], row, 0, styles[gi], floor, math.Inf(1)); err != nil {
			return err
		}
	}
	uniform := 1 / float64(n)
	pp.Add(vline(uniform, -0.5, float64(n)-0.5, grey))
	pp.X.Min, pp.X.Max = floor, 1.05*hi
	if floor > 0 {
		pp.X.Max = math.Pow(10, math.Ceil(math.Log10(hi))) // a labelled decade
	}

	ap := newPanel("(b) final "+m.Label, valueLabel(m, "final "+noun), "")
	// Values outside the metric's range (an accuracy below 0 or above 100%)
	// do not exist: confidence bars stop at its ends.
	vmin, vmax := 0.0, math.Inf(1)
	if m.HigherIsBetter {
		vmax = m.Show(m.Max())
	}
	for gi, g := range groups {
		v := g.TaskValues(results.MetaTrain).Values
		shown := make([]results.Estimate, len(v))
		for i, e := range v {
			shown[i] = results.Display(m, e)
		}
		// Groups side by side within a row, so that their bars do not overlap.
		offset := 0.0
		if len(groups) > 1 {
			offset = 0.3 * (0.5 - float64(gi)/float64(len(groups)-1))
		}
		if err := addRowPoints(ap, shown, row, offset, styles[gi], vmin, vmax); err != nil {
			return err
		}
	}
	ap.X.Min, ap.X.Max = max(ap.X.Min, vmin), min(ap.X.Max, vmax)
	ap.X.Tick.Marker = valueTicks(m)
	for _, p := range []*plot.Plot{pp, ap} {
		p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	}
	// Names once, left of (a); (b) has the same rows, ticks unlabelled.
	pp.Y.Tick.Marker = plot.ConstantTicks(ticks)
	pp.Y.Tick.Label.Font.Size = nameSize
	unlabelled := make([]plot.Tick, n)
	for i, t := range ticks {
		unlabelled[i] = plot.Tick{Value: t.Value}
	}
	ap.Y.Tick.Marker = plot.ConstantTicks(unlabelled)

	var legend []legendItem
	for gi, l := range labels {
		legend = append(legend, legendItem{l, rowSample(styles[gi])})
	}
	legend = append(legend,
		legendItem{"MAML's sampling probability " + sp.Formula, []plot.Thumbnailer{fillSample(faded(samplingColor, 0.45))}},
		legendItem{text: "  " + sp.Terms},
		legendItem{"uniform 1/n", []plot.Thumbnailer{lineSample(grey, dashed)}})
	if len(robust) > 0 {
		text := "(a) markers: final p"
		if floor > 0 && atFloor(finalP, floor) {
			text += "; at the left edge: 0" // a log axis has no 0
		}
		legend = append(legend, legendItem{text: text})
	}
	legend = append(legend, legendItem{text: bandNote(groups, "whiskers")}, legendItem{text: rows})

	var names vg.Length
	for _, t := range ticks {
		names = max(names, pp.Y.Tick.Label.Width(t.Label))
	}
	// Beside the two data areas, which plot.Align makes equal: the names,
	// the tick marks and the padding between and around the panels.
	data := adversaryDataWidth
	if c == Single {
		data = max(minDataWidth, (c.Width()-names-0.5*vg.Inch)/2)
	}
	width := names + 2*data + 0.5*vg.Inch
	height := max(panelHeight, vg.Length(n)*rowPitch+vg.Inch)
	return renderSized(path, width/2, height, legend, []*plot.Plot{pp, ap})
}

// Sizes of the adversary figure: a panel's data area, the vertical space
// per task row, and the font size of the task names, chosen so that the
// figure (about 6 inches wide with Omniglot's names) fits a page's text
// width at its own size, names as large as the tick labels.
const (
	adversaryDataWidth = 2.2 * vg.Inch
	minDataWidth       = 0.9 * vg.Inch // at Single, however long the names
	rowPitch           = 0.16 * vg.Inch
	nameSize           = tickSize
)

// positiveMin is min(a, v) over positive v; other v leave a.
func positiveMin(a, v float64) float64 {
	if v > 0 {
		return min(a, v)
	}
	return a
}

// decadeTicks marks the powers of ten of a log axis, labelling at most
// four of them (every k-th decade, down from the largest) so that the
// labels never touch: "1", "0.01", "1e-6".
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	every := max(1, (last-first+2)/3)
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		v := math.Pow(10, float64(e))
		t := plot.Tick{Value: v}
		switch {
		case (last-e)%every != 0:
		case e >= -3:
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			t.Label = "1e" + strconv.Itoa(e)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// hbar is a horizontal bar from x0 to v at row y.
func hbar(y, x0, v float64, col color.RGBA) *plotter.Polygon {
	const half = 0.36
	ring := plotter.XYs{{X: x0, Y: y - half}, {X: v, Y: y - half}, {X: v, Y: y + half}, {X: x0, Y: y + half}}
	p := &plotter.Polygon{XYs: []plotter.XYs{ring}, Color: faded(col, 0.45)}
	p.LineStyle.Color, p.LineStyle.Width = col, vg.Points(0.6)
	return p
}

// vline is a dashed vertical reference line at x from y0 to y1.
func vline(x, y0, y1 float64, col color.Color) *plotter.Line {
	l := &plotter.Line{XYs: plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}}}
	l.Color, l.Width, l.Dashes = col, vg.Points(0.8), dashed
	return l
}

// addRowPoints adds the estimates es, one per task at y = row[i] + offset,
// as markers of style st with horizontal 95% confidence bars where there
// are several seeds; markers and bars are kept within [lo, hi].
func addRowPoints(p *plot.Plot, es []results.Estimate, row []float64, offset float64, st glyphStyle, lo, hi float64) error {
	pts := make(plotter.XYs, len(es))
	for i, e := range es {
		pts[i] = plotter.XY{X: min(max(e.Mean, lo), hi), Y: row[i] + offset}
	}
	return addEstimatePoints(p, pts, es, true, lo, hi, st, vg.Points(2.2))
}

// atFloor reports whether a final p of some group lies below floor, the
// start of a log axis, and so is drawn at it.
func atFloor(finalP map[int][]results.Estimate, floor float64) bool {
	for _, p := range finalP {
		for _, e := range p {
			if e.Mean < floor {
				return true
			}
		}
	}
	return false
}

// rowSample is the legend sample of markers of style st.
func rowSample(st glyphStyle) []plot.Thumbnailer {
	s := &plotter.Scatter{}
	s.Color, s.Radius, s.Shape = st.col, vg.Points(2.2), st.shape
	return []plot.Thumbnailer{s}
}
