package plots

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
