package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/trmaml/trmaml/theory"
)

// Theorem1Gap draws the measured duality gap of Algorithm 1's T1 output
// against the number of iterations T on log-log axes (theory.Curve: mean
// over seeds with 95% confidence bars), each curve with its least-squares
// line and fitted slope, beside a line of Theorem 1's slope -1/2, in the
// file path (its extension names the format), laid out for column c.
func Theorem1Gap(curves []theory.Curve, path string, c Column) error {
	if len(curves) == 0 {
		return errors.New("plots: Theorem1Gap needs at least one curve")
	}
	// Log-log axes need two values of T and positive gaps (gonum's log
	// ticks panic otherwise).
	for _, c := range curves {
		if len(c.T) < 2 {
			return fmt.Errorf("plots: Theorem1Gap: the %s curve has %d value(s) of T, want at least 2", c.Geometry, len(c.T))
		}
		for k, m := range c.Mean {
			if !(m > 0) || math.IsInf(m, 0) {
				return fmt.Errorf("plots: Theorem1Gap: the %s curve's mean gap at T = %d is %v; a log axis needs a finite positive one", c.Geometry, c.T[k], m)
			}
		}
	}
	p := newPanel("Theorem 1: duality gap of the averaged iterates (output T1)", "iterations T", "duality gap")
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	var legend []legendItem
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, c := range curves {
		col := groupColor(i)
		pts := make(plotter.XYs, len(c.T))
		low := make([]float64, len(c.T))
		for k, T := range c.T {
			pts[k] = plotter.XY{X: float64(T), Y: c.Mean[k]}
			// Keep bars positive on the log axis.
			low[k] = math.Min(c.Half[k], 0.9*c.Mean[k])
			lo, hi = math.Min(lo, c.Mean[k]-low[k]), math.Max(hi, c.Mean[k]+c.Half[k])
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = col, shapes[i%len(shapes)], vg.Points(2.4)
		bars, err := errorBars(pts, low, c.Half, false, col, vg.Points(0.8), vg.Points(4))
		if err != nil {
			return err
		}
		fit := fitLine(c, c.Intercept, c.Slope, col, nil)
		p.Add(fit, bars, sc)
		legend = append(legend, legendItem{
			fmt.Sprintf("%s: fitted slope %.2f", geometryName(c.Geometry), c.Slope),
			[]plot.Thumbnailer{fit, sc},
		})
	}
	// The theorem's rate through the first curve's first point.
	first := curves[0]
	ref := fitLine(first, math.Log(first.Mean[0])+0.5*math.Log(float64(first.T[0])), -0.5, color.RGBA{A: 255}, []vg.Length{vg.Points(1.2), vg.Points(2)})
	p.Add(ref)
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	legend = append(legend,
		legendItem{"slope -1/2 (Theorem 1's rate)", []plot.Thumbnailer{ref}},
		legendItem{text: fmt.Sprintf("mean over %d seeds, bars: 95%% CI", len(first.Gaps[0]))})
	w, h := c.Width(), 2.8*vg.Inch
	if c == Single {
		h = 2.4 * vg.Inch
	}
	return renderSized(path, w, h, legend, []*plot.Plot{p})
}

// fitLine is the line exp(intercept) T^slope over the curve's range of T.
func fitLine(c theory.Curve, intercept, slope float64, col color.RGBA, dash []vg.Length) *plotter.Line {
	var xys plotter.XYs
	for _, T := range []float64{float64(c.T[0]), float64(c.T[len(c.T)-1])} {
		xys = append(xys, plotter.XY{X: T, Y: math.Exp(intercept + slope*math.Log(T))})
	}
	l := &plotter.Line{XYs: xys}
	l.Color, l.Width, l.Dashes = col, vg.Points(1), dash
	if dash == nil {
		l.Dashes = dashed
	}
	return l
}

func geometryName(g theory.Geometry) string {
	switch g {
	case theory.Euclidean:
		return "TR-MAML (Euclidean, Algorithm 1)"
	case theory.Entropic:
		return "entropic TR-MAML"
	}
	return string(g)
}
