package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/results"
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
// and the number of columns (at most 3 panels side by side at Double, 2 at
// Single).
func (c Column) layout(n int) (w, h vg.Length, cols int) {
	if c == Single {
		cols = min(n, 2)
		return 3.4 * vg.Inch / vg.Length(cols), 1.8 * vg.Inch, cols
	}
	cols = min(n, 3)
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

// niceStep is the round step (1, 2, 2.5 or 5 times a power of ten; no
// 2.5 when integer) that splits [min, max] into at most n intervals.
func niceStep(min, max float64, n int, integer bool) float64 {
	span := max - min
	if !(span > 0) {
		return 1
	}
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if (integer && f == 2.5) || span/(step*f) > float64(n) {
			continue
		}
		step *= f
		break
	}
	if integer {
		step = math.Max(1, math.Round(step))
	}
	return step
}

// stepTicks labels every multiple of step in [min, max] with label, and
// marks the midpoints between them unlabelled.
func stepTicks(min, max, step float64, label func(float64) string) []plot.Tick {
	var ts []plot.Tick
	for k := math.Ceil(min/step - 1e-9); k*step <= max+step*1e-9; k++ {
		v := k*step + 0 // + 0 turns -0 into 0
		ts = append(ts, plot.Tick{Value: v, Label: label(v)})
		if mid := v + step/2; mid <= max {
			ts = append(ts, plot.Tick{Value: mid})
		}
	}
	return ts
}

// iterationTicks labels an iteration axis with whole numbers, in
// thousands ("20k", but "0") once it reaches 10,000 so that the labels
// stay short.
type iterationTicks struct{}

// Ticks implements plot.Ticker.
func (iterationTicks) Ticks(min, max float64) []plot.Tick {
	step := niceStep(min, max, 4, true)
	return stepTicks(min, max, step, func(v float64) string {
		if max >= 10000 && v != 0 {
			return tickLabel(v/1000) + "k"
		}
		return tickLabel(v)
	})
}

// countTicks labels a count axis (tasks in a histogram bin) with whole
// numbers only.
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(min, max float64) []plot.Tick {
	return stepTicks(min, max, niceStep(min, max, 5, true), tickLabel)
}

// percentTicks labels an axis of percentages ("90%") at round steps.
type percentTicks struct{}

// Ticks implements plot.Ticker.
func (percentTicks) Ticks(min, max float64) []plot.Tick {
	// Whole percentages unless the axis spans less than 5 points.
	return stepTicks(min, max, niceStep(min, max, 6, max-min >= 5), func(v float64) string { return tickLabel(v) + "%" })
}

// tickLabel writes a tick's value in the shortest form ("75", not
// "75.00"), rounded to 12 significant digits first: gonum computes ticks
// as multiples of a step, so 3 * 0.1 would otherwise be written
// 0.30000000000000004.
func tickLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// denseTicks label every multiple of a round step (1, 2, 2.5 or 5 times
// a power of ten) that splits the axis into at most six intervals: gonum's
// default labels only its major ticks, which on a short range such as 0
// to 2.8 leaves two labels ("0", "2.5"), and picks steps such as 0.45.
type denseTicks struct{}

// Ticks implements plot.Ticker.
func (denseTicks) Ticks(min, max float64) []plot.Tick {
	return stepTicks(min, max, niceStep(min, max, 6, false), tickLabel)
}

// curveLine is the line through the means of c at positions x.
func curveLine(x []float64, c results.Curve, col color.RGBA, dash []vg.Length) *plotter.Line {
	xys := make(plotter.XYs, len(x))
	for i := range x {
		xys[i] = plotter.XY{X: x[i], Y: c.Points[i].Mean}
	}
	l := &plotter.Line{XYs: xys}
	l.Color, l.Width, l.Dashes = col, vg.Points(1.6), dash
	return l
}

// minBandSeeds is the fewest seeds a curve gets a t-based 95% band for:
// with two, t = 12.7 makes the band many times the seeds' own spread, so
// the seeds' curves are drawn instead.
const minBandSeeds = 3

// curveBand is the shaded 95% confidence band of c at positions x, cut
// to [lo, hi], the range of the quantity (0 and 1 for a probability), or
// nil when c has no interval (a single seed).
func curveBand(x []float64, c results.Curve, col color.RGBA, lo, hi float64) *plotter.Polygon {
	ring := make(plotter.XYs, 0, 2*len(x))
	wide := false
	for i := range x {
		ring = append(ring, plotter.XY{X: x[i], Y: math.Max(c.Points[i].Mean-c.Points[i].Half, lo)})
		wide = wide || c.Points[i].Half > 0
	}
	for i := len(x) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: x[i], Y: math.Min(c.Points[i].Mean+c.Points[i].Half, hi)})
	}
	if !wide {
		return nil
	}
	return &plotter.Polygon{XYs: []plotter.XYs{ring}, Color: faded(col, 0.22)}
}

// seedLines are thin lines through each seed's values of c at x.
func seedLines(x []float64, c results.Curve, col color.RGBA, dash []vg.Length) []plot.Plotter {
	var out []plot.Plotter
	for _, vs := range c.Seeds {
		var xys plotter.XYs
		for i, v := range vs {
			if !math.IsNaN(v) {
				xys = append(xys, plotter.XY{X: x[i], Y: v})
			}
		}
		if len(xys) > 0 {
			l := &plotter.Line{XYs: xys}
			l.Color, l.Width, l.Dashes = faded(col, 0.45), vg.Points(0.6), dash
			out = append(out, l)
		}
	}
	return out
}

// addCurve adds c's mean line to p over, with minBandSeeds or more
// seeds, its band cut to [lo, hi], or with two, each seed's own line.
func addCurve(p *plot.Plot, x []float64, c results.Curve, col color.RGBA, dash []vg.Length, lo, hi float64) {
	switch {
	case len(c.Seeds) >= minBandSeeds:
		if b := curveBand(x, c, col, lo, hi); b != nil {
			p.Add(b)
		}
	case len(c.Seeds) > 1:
		p.Add(seedLines(x, c, col, dash)...)
	}
	p.Add(curveLine(x, c, col, dash))
}

// errorBars are confidence bars at pts reaching low[i] below and high[i]
// above pts[i] (clipped bars are asymmetric), horizontal (along x) or
// vertical, drawn in col with the given line and cap widths.
func errorBars(pts plotter.XYs, low, high []float64, horizontal bool, col color.Color, width, capWidth vg.Length) (plot.Plotter, error) {
	errs := make([]struct{ Low, High float64 }, len(pts))
	for i := range errs {
		errs[i].Low, errs[i].High = low[i], high[i]
	}
	if horizontal {
		bars, err := plotter.NewXErrorBars(struct {
			plotter.XYs
			plotter.XErrors
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		bars.Color, bars.Width, bars.CapWidth = col, width, capWidth
		return bars, nil
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return nil, err
	}
	bars.Color, bars.Width, bars.CapWidth = col, width, capWidth
	return bars, nil
}

// legendItem is one entry of a figure's shared legend: a sample of the
// style (none for a note) and its text.
type legendItem struct {
	text   string
	thumbs []plot.Thumbnailer
}

// lineSample is a legend sample of a line style.
func lineSample(col color.Color, dash []vg.Length) plot.Thumbnailer {
	l := &plotter.Line{}
	l.Color, l.Width, l.Dashes = col, vg.Points(1.2), dash
	return l
}

// fillSample is a legend sample of a filled area.
func fillSample(col color.Color) plot.Thumbnailer {
	return &plotter.Polygon{Color: col}
}

// bandNote says what the confidence marks (e.g. "shaded") of groups
// show: a 95% CI over minBandSeeds or more seeds, the seeds' own (thin)
// curves below that, or that there is one seed per group.
func bandNote(groups []*results.Group, marks string) string {
	n, same := groups[0].Seeds(), true
	for _, g := range groups {
		same = same && g.Seeds() == n
	}
	switch {
	case !several(groups):
		return "1 seed each"
	case same && n < minBandSeeds:
		return fmt.Sprintf("mean of %d seeds; thin: each seed", n)
	case same:
		return fmt.Sprintf("%s: 95%% CI over %d seeds", marks, n)
	}
	return fmt.Sprintf("%s: 95%% CI over seeds (thin: each seed, below %d)", marks, minBandSeeds)
}

// several reports whether some group has more than one seed.
func several(groups []*results.Group) bool {
	for _, g := range groups {
		if g.Seeds() > 1 {
			return true
		}
	}
	return false
}

// banded reports whether some group's curves get a confidence band.
func banded(groups []*results.Group) bool {
	for _, g := range groups {
		if g.Seeds() >= minBandSeeds {
			return true
		}
	}
	return false
}

// shapes are the scatter glyphs of successive groups.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}}

// renderSized is render with panels of the given height.
func renderSized(path string, panelWidth, height vg.Length, legend []legendItem, panels []*plot.Plot) error {
	return renderGrid(path, panelWidth, height, len(panels), legend, panels)
}

// renderColumn draws panels in the grid that fits column c, under the
// shared legend, into path.
func renderColumn(path string, c Column, legend []legendItem, panels []*plot.Plot) error {
	w, h, cols := c.layout(len(panels))
	return renderGrid(path, w, h, cols, legend, panels)
}

// renderGrid draws panels in rows of cols, left to right and top to bottom,
// each panelWidth wide and height high, under the shared legend, and writes
// the figure to path, in the format its extension names (.png, .pdf or
// .svg). One column makes a figure narrow enough for a column of a
// two-column page.
func renderGrid(path string, panelWidth, height vg.Length, cols int, legend []legendItem, panels []*plot.Plot) error {
	if len(panels) == 0 || cols < 1 {
		return errors.New("plots: nothing to draw")
	}
	nrows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, nrows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols) // a short last row is padded with nil, which Align skips
		copy(grid[r], panels[r*cols:])
	}
	w := panelWidth * vg.Length(cols)
	rows := legendRows(legend, w-2*legendMargin)
	strip := legendRow*vg.Length(len(rows)) + legendTop
	h := height*vg.Length(nrows) + strip
	img, err := newCanvas(path, w, h)
	if err != nil {
		return err
	}
	dc := draw.New(img)
	for i, row := range rows {
		top := h - legendTop - legendRow*vg.Length(i)
		drawLegendRow(draw.Crop(dc, 0, 0, top-legendRow, top-h), row)
	}
	tiles := draw.Tiles{
		Rows: nrows, Cols: cols,
		PadX: vg.Points(10), PadY: vg.Points(6), PadLeft: vg.Points(3), PadRight: vg.Points(8), PadTop: 2, PadBottom: vg.Points(3),
	}
	canvases := plot.Align(grid, tiles, draw.Crop(dc, 0, 0, 0, -strip))
	for r, row := range grid {
		for c, p := range row {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	return write(path, img)
}

// Legend layout: the height of a row of entries, the space kept free at
// either end of a row, the width of an entry's style sample, and the gap
// between entries.
const (
	legendTop              = 2 // points above the first row
	legendRow              = 0.19 * vg.Inch
	legendMargin vg.Length = 6 // points
	legendThumb  vg.Length = 18
	legendGap    vg.Length = 12
)

var legendStyle = text.Style{
	Color: color.Black, Font: font.From(plot.DefaultFont, legendSize),
	Handler: plot.DefaultTextHandler, YAlign: draw.YCenter,
}

// entryWidth is the width of a legend entry: sample and text.
func entryWidth(it legendItem) vg.Length {
	w := legendStyle.Width(it.text)
	if len(it.thumbs) > 0 {
		w += legendThumb + legendStyle.Width(" ")
	}
	return w
}

// legendRows splits items into rows no wider than width (a wider single
// entry gets a row of its own).
func legendRows(items []legendItem, width vg.Length) [][]legendItem {
	var rows [][]legendItem
	var used vg.Length
	for _, it := range items {
		w := entryWidth(it)
		if n := len(rows); n > 0 && used+legendGap+w <= width {
			rows[n-1] = append(rows[n-1], it)
			used += legendGap + w
			continue
		}
		rows = append(rows, []legendItem{it})
		used = w
	}
	return rows
}

// drawLegendRow draws items in one row, centred in c.
func drawLegendRow(c draw.Canvas, items []legendItem) {
	total := -legendGap
	for _, it := range items {
		total += entryWidth(it) + legendGap
	}
	x := c.Min.X + (c.Max.X-c.Min.X-total)/2
	y := (c.Min.Y + c.Max.Y) / 2
	thumbH := legendStyle.FontExtents().Ascent
	for _, it := range items {
		textX := x
		if len(it.thumbs) > 0 {
			icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - thumbH/2}, Max: vg.Point{X: x + legendThumb, Y: y + thumbH/2},
			}}
			for _, t := range it.thumbs {
				t.Thumbnail(&icon)
			}
			textX += legendThumb + legendStyle.Width(" ")
		}
		c.FillText(legendStyle, vg.Point{X: textX, Y: y}, it.text)
		x += entryWidth(it) + legendGap
	}
}

// Formats are the figure file formats, by extension.
var Formats = []string{"png", "pdf", "svg"}

// newCanvas is a w by h canvas for the format of path's extension: a PNG
// at DPI, a PDF with its fonts embedded, or an SVG.
func newCanvas(path string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))}, nil
	case ".pdf":
		c := vgpdf.New(w, h)
		c.EmbedFonts(true)
		return c, nil
	case ".svg":
		return vgsvg.New(w, h), nil
	}
	return nil, fmt.Errorf("plots: %s: want a file ending in .%s", path, strings.Join(Formats, ", ."))
}

// write writes img to path atomically: path never holds a partial figure.
func write(path string, img vg.CanvasWriterTo) error {
	return atomicfile.WriteFunc(path, func(w io.Writer) error {
		_, err := img.WriteTo(w)
		return err
	})
}
