package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// DPI is the resolution of the PNG files: print resolution at the
// figures' page size.
const DPI = 300

// panelHeight is the least height of the adversary figure's panels,
// below the legend (it grows with the number of tasks).
const panelHeight = 2.4 * vg.Inch

// Font sizes in points, for figures printed at their own size (Column's
// widths): a paper's figure text is 7-9 pt.
const (
	titleSize  = 9
	labelSize  = 8.5
	tickSize   = 7.5
	legendSize = 8.5
)

// Column is the width a figure is laid out for, printed at its own size:
// Double, the text width of a page (both columns of a two-column paper,
// 7 inches), or Single, one column of a two-column paper (3.4 inches).
// The figure's panels go in a grid of as many columns as fit.
type Column int

// The widths a figure is laid out for.
const (
	Double Column = iota
	Single
)

// ParseColumn reads a -width flag: "double" or "single".
func ParseColumn(s string) (Column, error) {
	switch s {
	case "double":
		return Double, nil
	case "single":
		return Single, nil
	}
	return 0, fmt.Errorf("width %q: want double (a page's text width, 7 in) or single (one column of two, 3.4 in)", s)
}

// layout is the grid of n panels at column c: the panel width and height
// and the number of columns (at most 3 panels side by side at Double, 2
// for four panels; 2 at Single).
func (c Column) layout(n int) (w, h vg.Length, cols int) {
	if c == Single {
		cols = min(n, 2)
		return 3.4 * vg.Inch / vg.Length(cols), 1.8 * vg.Inch, cols
	}
	cols = min(n, 3)
	if n == 4 {
		cols = 2 // two rows of two, not three and one beside blank space
	}
	return 7 * vg.Inch / vg.Length(cols), 2.2 * vg.Inch, cols
}

// palette is the Okabe-Ito colour-blind safe palette, ordered so that the
// first two (MAML, TR-MAML) contrast most.
var palette = []color.RGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermillion
	{0, 158, 115, 255},   // bluish green
	{204, 121, 167, 255}, // reddish purple
	{230, 159, 0, 255},   // orange
	{86, 180, 233, 255},  // sky blue
	{0, 0, 0, 255},       // black
}

// groupColor is the colour of the i-th group of a figure.
func groupColor(i int) color.RGBA { return palette[i%len(palette)] }

// faded returns c with opacity alpha in [0, 1], premultiplied as
// image/color expects.
func faded(c color.RGBA, alpha float64) color.RGBA {
	f := func(v uint8) uint8 { return uint8(float64(v) * alpha) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), uint8(255 * alpha)}
}

// dashed is the dash pattern of the second statistic of a panel (worst).
var dashed = []vg.Length{vg.Points(4), vg.Points(2)}

// newPanel returns a plot with the figure's title, axis labels and font
// sizes.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = titleSize
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = labelSize
		a.Tick.Label.Font.Size = tickSize
		a.Padding = 0 // the axes meet at the origin
		a.LineStyle.Width, a.Tick.LineStyle.Width = vg.Points(0.6), vg.Points(0.6)
		a.Tick.Length = vg.Points(3)
		a.Tick.Marker = denseTicks{}
	}
	return p
}

// shapes are the scatter glyphs of successive groups.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}}
