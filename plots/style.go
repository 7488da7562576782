package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/results"
)

// DPI is the resolution of the PNG files.
const DPI = 180

// panelHeight is the height of a figure's panels, below the legend.
const panelHeight = 3.3 * vg.Inch

// Font sizes in points: the smallest text (ticks, legend) stays legible
// when a 14-inch-wide figure is scaled to a page's width.
const (
	titleSize  = 13
	labelSize  = 12
	tickSize   = 11
	legendSize = 12
)

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
var dashed = []vg.Length{vg.Points(6), vg.Points(3)}

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
		// 1 pt lines stay visible when the figure is scaled to a page.
		a.LineStyle.Width, a.Tick.LineStyle.Width = vg.Points(1), vg.Points(1)
	}
	return p
}

// iterationTicks labels an iteration axis, in thousands ("20k", but "0")
// once it reaches 10,000 so that the labels stay short.
type iterationTicks struct{}

// Ticks implements plot.Ticker.
func (iterationTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	if max < 10000 {
		return ts
	}
	for i := range ts {
		if ts[i].Label != "" && ts[i].Value != 0 {
			ts[i].Label = tickLabel(ts[i].Value/1000) + "k"
		}
	}
	return ts
}

// tickLabel writes a tick's value in the shortest form ("75", not
// "75.00"), rounded to 12 significant digits first: gonum computes ticks
// as multiples of a step, so 3 * 0.1 would otherwise be written
// 0.30000000000000004.
func tickLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// plainTicks are gonum's default ticks labelled by tickLabel.
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = tickLabel(ts[i].Value)
		}
	}
	return ts
}

// denseTicks are plainTicks with every tick labelled when there are at
// most maxDenseLabels of them: gonum labels only its major ticks, which on
// a short range such as 0 to 2.8 leaves two labels ("0", "2.5").
type denseTicks struct{}

// maxDenseLabels is the most labels denseTicks writes on an axis.
const maxDenseLabels = 8

// Ticks implements plot.Ticker.
func (denseTicks) Ticks(min, max float64) []plot.Tick {
	ts := plainTicks{}.Ticks(min, max)
	if len(ts) > maxDenseLabels {
		return ts
	}
	for i := range ts {
		ts[i].Label = tickLabel(ts[i].Value)
	}
	return ts
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

// curveBand is the shaded 95% confidence band of c at positions x, or nil
// when c has no interval (a single seed).
func curveBand(x []float64, c results.Curve, col color.RGBA) *plotter.Polygon {
	ring := make(plotter.XYs, 0, 2*len(x))
	wide := false
	for i := range x {
		ring = append(ring, plotter.XY{X: x[i], Y: c.Points[i].Mean - c.Points[i].Half})
		wide = wide || c.Points[i].Half > 0
	}
	for i := len(x) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: x[i], Y: c.Points[i].Mean + c.Points[i].Half})
	}
	if !wide {
		return nil
	}
	return &plotter.Polygon{XYs: []plotter.XYs{ring}, Color: faded(col, 0.22)}
}

// addCurve adds c's band (under) and mean line to p.
func addCurve(p *plot.Plot, x []float64, c results.Curve, col color.RGBA, dash []vg.Length) {
	if b := curveBand(x, c, col); b != nil {
		p.Add(b)
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
	l.Color, l.Width, l.Dashes = col, vg.Points(1.6), dash
	return l
}

// fillSample is a legend sample of a filled area.
func fillSample(col color.Color) plot.Thumbnailer {
	return &plotter.Polygon{Color: col}
}

// bandNote says what the confidence marks (e.g. "shaded") of groups
// show, or that there is one seed per group and so no interval.
func bandNote(groups []*results.Group, marks string) string {
	n, same := groups[0].Seeds(), true
	for _, g := range groups {
		same = same && g.Seeds() == n
	}
	switch {
	case !several(groups):
		return "1 seed each"
	case same:
		return fmt.Sprintf("%s: 95%% CI over %d seeds", marks, n)
	}
	return marks + ": 95% CI over seeds"
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

// shapes are the scatter glyphs of successive groups.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}}

// render draws panels side by side, each panelWidth wide and panelHeight
// high, under the shared legend, and writes the PNG to path.
func render(path string, panelWidth vg.Length, legend []legendItem, panels []*plot.Plot) error {
	return renderSized(path, panelWidth, panelHeight, legend, panels)
}

// renderSized is render with panels of the given height.
func renderSized(path string, panelWidth, height vg.Length, legend []legendItem, panels []*plot.Plot) error {
	return renderGrid(path, panelWidth, height, len(panels), legend, panels)
}

// renderGrid draws panels in rows of cols, left to right and top to bottom,
// each panelWidth wide and height high, under the shared legend, and writes
// the PNG to path. One column makes a figure narrow enough for a column of
// a two-column page.
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
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
	dc := draw.New(img)
	for i, row := range rows {
		top := h - legendTop - legendRow*vg.Length(i)
		drawLegendRow(draw.Crop(dc, 0, 0, top-legendRow, top-h), row)
	}
	tiles := draw.Tiles{
		Rows: nrows, Cols: cols,
		PadX: vg.Points(18), PadY: vg.Points(10), PadLeft: vg.Points(6), PadRight: vg.Points(12), PadTop: 4, PadBottom: vg.Points(6),
	}
	canvases := plot.Align(grid, tiles, draw.Crop(dc, 0, 0, 0, -strip))
	for r, row := range grid {
		for c, p := range row {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	return writePNG(path, img)
}

// Legend layout: the height of a row of entries, the space kept free at
// either end of a row, the width of an entry's style sample, and the gap
// between entries.
const (
	legendTop              = 4 // points above the first row
	legendRow              = 0.3 * vg.Inch
	legendMargin vg.Length = 12 // points
	legendThumb  vg.Length = 26
	legendGap    vg.Length = 22
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

// writePNG writes img to path atomically: path never holds a partial image.
func writePNG(path string, img *vgimg.Canvas) error {
	return atomicfile.WriteFunc(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}
