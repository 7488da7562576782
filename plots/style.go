package plots

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"slices"

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

// glyphStyle is how a method's series look: its colour, and its glyph in
// figures with markers.
type glyphStyle struct {
	col   color.RGBA
	shape draw.GlyphDrawer
}

// methodStyles are the styles of the built-in methods by name, the same in
// every figure whichever other methods it shows: MAML and TR-MAML have the
// palette's first two colours, which contrast most.
var methodStyles = map[string]glyphStyle{
	"maml":            {palette[0], draw.BoxGlyph{}},
	"trmaml":          {palette[1], draw.TriangleGlyph{}},
	"cvar":            {palette[2], draw.CircleGlyph{}},
	"trmaml_entropic": {palette[3], draw.PyramidGlyph{}},
	"dromaml":         {palette[4], draw.CrossGlyph{}},
	"drmaml":          {palette[5], draw.PlusGlyph{}},
	"drmaml_plus":     {palette[6], draw.RingGlyph{}},
}

// glyphCycle orders the glyphs for the further groups of one method in a
// figure: the k-th group takes the k-th glyph after its method's own. Any
// other method starts at the square, which no built-in method has.
var glyphCycle = []draw.GlyphDrawer{
	draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.CircleGlyph{},
	draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{},
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

// MethodColours are the colours of the methods algs shown together, in a
// figure or on trmaml serve's page, by name: a built-in method's is fixed
// (methodStyles); any other's is one of otherColours, that of a hash of
// its name unless another such method in algs takes it (methodSet).
// Computed over the set, not per method, so that two methods of one
// figure never share a colour; a figure and the page of the same methods
// colour them alike, whatever their order.
func MethodColours(algs []string) map[string]color.RGBA {
	cols := map[string]color.RGBA{}
	for alg, st := range methodSet(algs) {
		cols[alg] = st.col
	}
	return cols
}

// methodSet are the styles of the methods algs shown together, by name:
// a built-in method's entry of methodStyles; any other method has the
// square and a colour of its own among algs. Each such method keeps the
// colour of otherColours its name hashes to (otherSlot) unless a method
// whose name sorts before it hashes there too; those then take, in name
// order, the next free colour of otherColours after their own, and once
// all are taken the next free shade of them (variant), round by round.
// So the colours depend on the set of names only, and none repeats below
// seven times len(otherColours) such methods (variant has seven shades).
func methodSet(algs []string) map[string]glyphStyle {
	styles := map[string]glyphStyle{}
	var others []string
	for _, alg := range algs {
		if st, ok := methodStyles[alg]; ok {
			styles[alg] = st
		} else {
			others = append(others, alg)
		}
	}
	slices.Sort(others)
	others = slices.Compact(others)
	n := len(otherColours)
	taken := map[int]bool{} // slots: the k-th variant of otherColours[i] is k*n + i
	var moved []string
	for _, alg := range others {
		if h := otherSlot(alg); !taken[h] {
			taken[h] = true
			styles[alg] = glyphStyle{otherColours[h], draw.SquareGlyph{}}
		} else {
			moved = append(moved, alg)
		}
	}
	for _, alg := range moved {
		h := otherSlot(alg)
		s := h
		for t := 1; taken[s]; t++ { // the colours after h in turn, each round a shade further
			s = t/n*n + (h+t)%n
		}
		taken[s] = true
		styles[alg] = glyphStyle{variant(otherColours[s%n], s/n), draw.SquareGlyph{}}
	}
	return styles
}

// otherSlot is the index in otherColours of the colour of a method that is
// not built in, by an FNV-1a hash of its name.
func otherSlot(alg string) int {
	h := fnv.New32a()
	h.Write([]byte(alg))
	return int(h.Sum32() % uint32(len(otherColours)))
}

// groupColours are the colours of groups in a figure: each its method's
// (MethodColours over the groups' methods); a further group of a method
// already shown (another order, K or swept level) gets a variant of it
// (variant).
func groupColours(groups []*results.Group) []color.RGBA {
	styles := groupStyles(groups)
	cols := make([]color.RGBA, len(styles))
	for i, st := range styles {
		cols[i] = st.col
	}
	return cols
}

// groupStyles are the styles of groups in a figure: each its method's
// (methodSet over the groups' methods); the k-th further group of a
// method already shown gets the k-th variant of its colour and the k-th
// glyph after its own in glyphCycle, so that two groups of one method
// (K = 5 and K = 10) differ in shape as well as shade.
func groupStyles(groups []*results.Group) []glyphStyle {
	set := groupMethods(groups)
	styles := make([]glyphStyle, len(groups))
	seen := map[string]int{}
	for i, g := range groups {
		alg, k := g.Key.Algorithm, seen[g.Key.Algorithm]
		st := set[alg]
		j := slices.IndexFunc(glyphCycle, func(d draw.GlyphDrawer) bool { return d == st.shape })
		styles[i] = glyphStyle{variant(st.col, k), glyphCycle[(j+k)%len(glyphCycle)]}
		seen[alg]++
	}
	return styles
}

// groupMethods are the styles of the methods of groups (methodSet).
func groupMethods(groups []*results.Group) map[string]glyphStyle {
	algs := make([]string, len(groups))
	for i, g := range groups {
		algs[i] = g.Key.Algorithm
	}
	return methodSet(algs)
}

// variant is c for k = 0; for k = 1, 2, 3, ... it is c mixed with black,
// white, black, ..., by 35%, 35%, 60%, 60% and at most 75%; a colour too
// dark to darken (DR-MAML+'s black) is mixed with white only, by 35%, 60%,
// 75%.
func variant(c color.RGBA, k int) color.RGBA {
	if k == 0 {
		return c
	}
	dark := max(c.R, c.G, c.B) < 64
	step := (k - 1) / 2
	if dark {
		step = k - 1
	}
	f := min(0.35+0.25*float64(step), 0.75)
	var to float64
	if k%2 == 0 || dark {
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
// (Theorem 1's instance sizes); methods have theirs (methodStyles).
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}}
