package plots

import (
	"errors"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/trmaml/trmaml/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// errNoPWeights is PWeights' refusal of groups it has nothing to draw for:
// WriteReport then leaves the figure out.
var errNoPWeights = errors.New("plots: PWeights: no finished run for the final weights and no hard tasks for their mass")

// PWeights draws TR-MAML's task weights for groups (TR-MAML groups) into
// the PNG file path: (a) each meta-training task's final weight, mean over
// seeds with 95% confidence bars, against its coordinate (results.TaskAxisOf:
// the amplitude of sinusoid tasks; the index for other tasks), and, unless hard is
// empty, (b) the total weight on the tasks in hard against the iteration.
// Dashed grey lines mark the uniform distribution, which MAML keeps. As in
// Figure1, an unfinished run's curve goes to its last evaluation and its
// weights there are no final weights: (a) is of the finished runs, and is
// left out when there is none; with neither panel it draws nothing and
// says so (errNoPWeights). The panels fill a grid for column c.
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

	uniform := 1 / float64(len(tasks))
	styles := groupStyles(groups)
	// The final weights are of the finished runs: an unfinished run's last
	// p is not its solution's.
	fin := results.Finished(groups)
	var panels []*plot.Plot
	if slices.ContainsFunc(fin, func(g *results.Group) bool { return len(g.Runs) > 0 }) {
		pp, err := finalWeightsPanel(fin, styles, axis, numeric, uniform, grey)
		if err != nil {
			return err
		}
		panels = append(panels, pp)
	}

	if len(hard) > 0 {
		hp := newPanel("(b) total weight on hard tasks", iterationLabel, "p mass on the selected tasks")
		if numeric {
			hp.Y.Label.Text = "p mass on " + axis.Hard
		}
		var xmax float64
		for i, g := range groups {
			cv := g.PMass(hard)
			addCurve(hp, cv.Iterations, cv, styles[i].col, nil, 0, 1)
			xmax = max(xmax, cv.Iterations[len(cv.Iterations)-1])
		}
		hp.Add(hline(0, xmax, float64(len(hard))*uniform, grey))
		hp.X.Tick.Marker = iterationTicks{}
		hp.X.Min = 0
		// A probability mass: the axis (and so the clipped bands) spans [0, 1].
		hp.Y.Min, hp.Y.Max = 0, 1.02
		panels = append(panels, hp)
	}
	if len(panels) == 0 {
		return errNoPWeights
	}

	var legend []legendItem
	for i, l := range labels {
		legend = append(legend, legendItem{l, append([]plot.Thumbnailer{lineSample(styles[i].col, nil)}, rowSample(styles[i])...)})
	}
	legend = append(legend, legendItem{"uniform (MAML)", []plot.Thumbnailer{lineSample(grey, dashed)}})
	legend = append(legend, legendItem{text: bandNote(groups, "bars and shading")})
	if slices.ContainsFunc(groups, (*results.Group).Unfinished) {
		legend = append(legend, legendItem{text: "unfinished: to the last evaluation; final weights: finished runs"})
	}
	return renderColumn(path, c, legend, panels)
}

// finalWeightsPanel is PWeights' panel (a): the final weight of each
// meta-training task of groups (finished runs only; a group with none is
// left out), in styles (one per group), against its coordinate on axis, or
// its index when not numeric.
func finalWeightsPanel(groups []*results.Group, styles []glyphStyle, axis results.TaskAxis, numeric bool, uniform float64, grey color.RGBA) (*plot.Plot, error) {
	pp := newPanel("(a) final task weights", "meta-training task (index)", "task weight p")
	var xs []float64
	var ticks []plot.Tick
	var breaks []float64
	if numeric {
		xs, ticks, breaks = gappedAxis(axis.Positions)
	}
	xmax := 0.0
	for i, g := range groups {
		if len(g.Runs) == 0 {
			continue
		}
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
		if err := addEstimatePoints(pp, pts, est, false, 0, 1, styles[i], vg.Points(1.8)); err != nil {
			return nil, err
		}
	}
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
	return pp, nil
}

// addEstimatePoints adds markers of style st and the given radius at pts, one
// per estimate in es, with 95% confidence bars of half-width es[i].Half
// where there are minBandSeeds or more seeds: horizontal bars (the estimates are x
// values) or vertical ones (y values), cut at lo and hi, the ends of the
// estimates' range (0 and 1 for a probability).
func addEstimatePoints(p *plot.Plot, pts plotter.XYs, es []results.Estimate, horizontal bool, lo, hi float64, st glyphStyle, radius vg.Length) error {
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
		bars, err := errorBars(barPts, below, above, horizontal, st.col, vg.Points(0.6), vg.Points(2))
		if err != nil {
			return err
		}
		p.Add(bars)
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.Color, s.Radius, s.Shape = st.col, radius, st.shape
	p.Add(s)
	return nil
}

// gappedAxis places tasks with coordinates amps (increasing, e.g. lower
// amplitude bounds) on an axis: evenly within a contiguous range of tasks,
// one unit apart, or further apart in a range of few tasks, so that every
// range gets at least a fifth of the axis (the five hard sine tasks beside
// 95 easy ones stay readable), with a gap of a few units where the
// coordinate jumps (breaks are the gaps' centres). ticks label round
// coordinates within each range, or only the first coordinate of a range
// too short for more, none closer to the next than a sixth of the tasks.
func gappedAxis(amps []float64) (x []float64, ticks []plot.Tick, breaks []float64) {
	step := math.Inf(1)
	for i := 1; i < len(amps); i++ {
		step = min(step, amps[i]-amps[i-1])
	}
	gap := float64(max(2, len(amps)/12))
	minWidth := float64(len(amps)) / 5
	x = make([]float64, len(amps))
	start, pos := 0, 0.0
	for i := 1; i <= len(amps); i++ {
		if i < len(amps) && amps[i]-amps[i-1] <= 1.5*step {
			continue
		}
		seg := amps[start:i]
		pitch := max(1, minWidth/float64(len(seg)))
		for j := range seg {
			x[start+j] = pos + pitch*float64(j)
		}
		pos = x[i-1] + pitch
		if i < len(amps) {
			pos += gap
			breaks = append(breaks, x[i-1]+(pitch+gap)/2)
		}
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
	// A range's last label just before the next range's first would
	// overprint it at a single column's width ("1" and "4.95" read
	// "14.95"): keep the later, which labels the range after the gap.
	minSep := float64(len(amps)) / 6
	for i := len(ticks) - 2; i >= 0; i-- {
		if ticks[i+1].Value-ticks[i].Value < minSep {
			ticks = slices.Delete(ticks, i, i+1)
		}
	}
	return x, ticks, breaks
}

// hline is a dashed horizontal reference line at y from x0 to x1.
func hline(x0, x1, y float64, col color.Color) *plotter.Line {
	l := &plotter.Line{XYs: plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}}}
	l.Color, l.Width, l.Dashes = col, vg.Points(0.8), dashed
	return l
}
