package plots

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"slices"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"

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

// groupColor is the colour of the i-th series of a figure whose series
// are not methods (Theorem 1's instance sizes).
func groupColor(i int) color.RGBA { return palette[i%len(palette)] }

// methodColours are the colours of the built-in methods by name, the same
// in every figure whichever other methods it shows: MAML and TR-MAML have
// the palette's first two, which contrast most.
var methodColours = map[string]color.RGBA{
	"maml":            palette[0],
	"trmaml":          palette[1],
	"cvar":            palette[2],
	"trmaml_entropic": palette[3],
	"dromaml":         palette[4],
	"drmaml":          palette[5],
	"drmaml_plus":     palette[6],
}

// otherColours are the colours of any other method (a program's own),
// none of them the palette's.
var otherColours = []color.RGBA{
	{140, 86, 75, 255},   // brown
	{148, 103, 189, 255}, // purple
	{188, 189, 34, 255},  // olive
	{127, 127, 127, 255}, // grey
	{0, 95, 95, 255},     // dark teal
	{120, 28, 60, 255},   // wine
}

// MethodColour is the colour of the method called alg in every figure and
// on trmaml serve's page: its entry of methodColours, else one of
// otherColours chosen by a hash of the name, so that it does not depend on
// the figure, the other methods or the order of registration.
func MethodColour(alg string) color.RGBA {
	if c, ok := methodColours[alg]; ok {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(alg))
	return otherColours[h.Sum32()%uint32(len(otherColours))]
}

// groupColours are the colours of groups in a figure: each its method's
// (MethodColour); a further group of a method already shown (another
// order, K or swept level) gets that colour darker, then lighter, in turn.
func groupColours(groups []*results.Group) []color.RGBA {
	cols := make([]color.RGBA, len(groups))
	seen := map[string]int{}
	for i, g := range groups {
		alg := g.Key.Algorithm
		cols[i] = variant(MethodColour(alg), seen[alg])
		seen[alg]++
	}
	return cols
}

// glyphStyle is how a method's points look: its colour and glyph.
type glyphStyle struct {
	col   color.RGBA
	shape draw.GlyphDrawer
}

// methodGlyphs are the glyphs of the registered methods, by registration
// order (MAML, TR-MAML, entropic TR-MAML, CVaR, DRO-MAML, DR-MAML,
// DR-MAML+); any other method has the cross.
var methodGlyphs = []draw.GlyphDrawer{
	draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.CircleGlyph{},
	draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{},
}

// methodStyle is the style of the method alg in every figure with markers:
// its colour (MethodColour) and its glyph (methodGlyph).
func methodStyle(alg string) glyphStyle { return glyphStyle{MethodColour(alg), methodGlyph(alg, 0)} }

// methodGlyph is the glyph of the k-th group of method alg in a figure
// (from 0): the method's own glyph, then the next ones of methodGlyphs in
// turn, so that two groups of one method (K = 5 and K = 10) differ in shape
// as well as shade.
func methodGlyph(alg string, k int) draw.GlyphDrawer {
	i := slices.Index(metalearn.MethodNames(), alg)
	if i < 0 || i >= len(methodGlyphs) {
		i = slices.Index(methodGlyphs, draw.GlyphDrawer(draw.CrossGlyph{}))
	}
	return methodGlyphs[(i+k)%len(methodGlyphs)]
}

// groupStyles are the styles of groups in a figure with markers: each its
// method's colour and glyph, a further group of a method already shown a
// variant of both (groupColours, methodGlyph).
func groupStyles(groups []*results.Group) []glyphStyle {
	cols := groupColours(groups)
	styles := make([]glyphStyle, len(groups))
	seen := map[string]int{}
	for i, g := range groups {
		alg := g.Key.Algorithm
		styles[i] = glyphStyle{cols[i], methodGlyph(alg, seen[alg])}
		seen[alg]++
	}
	return styles
}

// variant is c for k = 0; for k = 1, 2, 3, ... it is c mixed with black,
// white, black, ..., by 35%, 35%, 60%, 60% and at most 75%.
func variant(c color.RGBA, k int) color.RGBA {
	if k == 0 {
		return c
	}
	f := min(0.35+0.25*float64((k-1)/2), 0.75)
	var to float64
	if k%2 == 0 {
		to = 255
	}
	mix := func(v uint8) uint8 { return uint8(math.Round(float64(v)*(1-f) + to*f)) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
}

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

// shapes are the scatter glyphs of successive series that are not methods
// (Theorem 1's instance sizes); methods have theirs (methodGlyph).
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}}
