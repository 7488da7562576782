package plots

import (
	"image/color"
	"math"
	"testing"

	"github.com/trmaml/trmaml/results"
	"gonum.org/v1/plot/plotter"
)

func TestCurvePlotters(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	// curve is a curve at x = 0, 1, 2, 3 over the given seeds' values
	// (NaN: no value there), with a t interval wherever two or more have one.
	curve := func(seeds ...[]float64) results.Curve {
		c := results.Curve{Seeds: seeds}
		for i := range seeds[0] {
			var vs []float64
			for _, s := range seeds {
				if !math.IsNaN(s[i]) {
					vs = append(vs, s[i])
				}
			}
			c.Points = append(c.Points, results.Summarize(vs))
		}
		return c
	}
	for _, c := range []struct {
		name   string
		curve  results.Curve
		bands  [][2]float64 // the x extent of each band
		thin   [][2]float64 // the x extent of each seed's line
		within [2]float64   // the bands' y range
	}{
		{"one seed", curve([]float64{1, 2, 3, 4}), nil, nil, [2]float64{0, 1}},
		{"two seeds: their lines", curve([]float64{1, 2, 3, 4}, []float64{2, 3, 4, 5}), nil, [][2]float64{{0, 3}, {0, 3}}, [2]float64{0, 1}},
		{"three seeds: a band", curve([]float64{1, 2, 3, 4}, []float64{2, 3, 4, 5}, []float64{0, 1, 2, 3}), [][2]float64{{0, 3}}, nil, [2]float64{-10, 10}},
		{
			"an unfinished third seed: the band to its end, then the other two's lines",
			curve([]float64{1, 2, 3, 4}, []float64{2, 3, 4, 5}, []float64{0, 1, nan, nan}),
			[][2]float64{{0, 1}}, [][2]float64{{1, 3}, {1, 3}}, [2]float64{-10, 10},
		},
		{"a band cut to the quantity's range", curve([]float64{0.1, 0.9, 0.5}, []float64{0.9, 0.1, 0.6}, []float64{0.5, 0.5, 0.7}), [][2]float64{{0, 2}}, nil, [2]float64{0, 1}},
	} {
		x := []float64{0, 1, 2, 3}[:len(c.curve.Points)]
		var bands, thin [][2]float64
		mean := 0
		for _, p := range curvePlotters(x, c.curve, color.RGBA{A: 255}, nil, c.within[0], c.within[1]) {
			switch p := p.(type) {
			case *plotter.Polygon:
				xmin, xmax, ymin, ymax := plotter.XYRange(p.XYs[0])
				bands = append(bands, [2]float64{xmin, xmax})
				if ymin < c.within[0] || ymax > c.within[1] {
					t.Errorf("%s: band spans y %g..%g, outside %v", c.name, ymin, ymax, c.within)
				}
			case *plotter.Line:
				xmin, xmax, _, _ := plotter.XYRange(p.XYs)
				if p.Width < 1 {
					thin = append(thin, [2]float64{xmin, xmax})
				} else {
					mean++
				}
			}
		}
		if mean != 1 || !equalExtents(bands, c.bands) || !equalExtents(thin, c.thin) {
			t.Errorf("%s: %d mean lines, bands over %v, seeds' lines over %v; want 1, %v, %v", c.name, mean, bands, thin, c.bands, c.thin)
		}
	}
}

func equalExtents(a, b [][2]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBandNote(t *testing.T) {
	t.Parallel()
	group := func(unfinished ...bool) *results.Group {
		g := &results.Group{}
		for _, u := range unfinished {
			g.Runs = append(g.Runs, &results.Run{Unfinished: u})
		}
		return g
	}
	for _, c := range []struct {
		groups []*results.Group
		want   string
	}{
		{[]*results.Group{group(false), group(false)}, "1 seed each"},
		{[]*results.Group{group(false, false), group(false, false)}, "mean of 2 seeds; thin: each seed"},
		{[]*results.Group{group(false), group(false, false)}, "means over seeds; thin: each seed"},
		{[]*results.Group{group(false, false, false)}, "shaded: 95% CI over 3 seeds"},
		// Past the unfinished run's end two seeds remain: their own lines.
		{[]*results.Group{group(false, false, true)}, "shaded: 95% CI over seeds (thin: each seed, where below 3)"},
		{[]*results.Group{group(false, false, false), group(false, false)}, "shaded: 95% CI over seeds (thin: each seed, where below 3)"},
	} {
		if got := bandNote(c.groups, "shaded"); got != c.want {
			t.Errorf("%d groups: %q, want %q", len(c.groups), got, c.want)
		}
	}
}
