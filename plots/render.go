package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

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
	for _, p := range panels {
		fitLabels(p, panelWidth, height)
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

// fitLabels breaks p's title and axis labels into lines that fit a panel
// width wide and height high. gonum/plot pads a data area by the overhang
// of an axis label longer than the area, so one such label squeezes the
// panel beside it to nothing or pushes it into the legend (at a single
// column's width).
func fitLabels(p *plot.Plot, width, height vg.Length) {
	p.Title.Text = wrapText(p.Title.Text, p.Title.TextStyle, 0.95*width)
	// Axis labels are centred on the data area, which the other axis,
	// the title and the tick labels make smaller than the panel.
	p.X.Label.Text = wrapText(p.X.Label.Text, p.X.Label.TextStyle, 0.85*width)
	p.Y.Label.Text = wrapText(p.Y.Label.Text, p.Y.Label.TextStyle, 0.65*height)
}

// wrapText breaks s at spaces into lines no wider than width in style st,
// where a word allows; lines it already has are kept.
func wrapText(s string, st text.Style, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		cur := ""
		for _, word := range strings.Fields(line) {
			if cur != "" && st.Width(cur+" "+word) > width {
				out = append(out, cur)
				cur = word
				continue
			}
			cur = strings.TrimPrefix(cur+" "+word, " ")
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
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
		return straightPDF{c}, nil
	case ".svg":
		return vgsvg.New(w, h), nil
	}
	return nil, fmt.Errorf("plots: %s: want a file ending in .%s", path, strings.Join(Formats, ", ."))
}

// straightPDF is a PDF canvas that draws translucent colours as the PNG and
// SVG canvases do. vgpdf hands the PDF a colour's channels as RGBA returns
// them, premultiplied by alpha, and then sets alpha as well, so every
// translucent fill (confidence bands, histograms) came out darker, nearly
// grey. It passes vgpdf a colour whose RGBA returns straight channels,
// which is what that conversion needs.
type straightPDF struct{ *vgpdf.Canvas }

// SetColor implements vg.Canvas.
func (c straightPDF) SetColor(clr color.Color) {
	if clr != nil {
		clr = straight{color.NRGBA64Model.Convert(clr).(color.NRGBA64)}
	}
	c.Canvas.SetColor(clr)
}

// straight is a colour whose RGBA method returns its channels not
// premultiplied by alpha, for straightPDF only.
type straight struct{ c color.NRGBA64 }

// RGBA returns the straight channels and alpha.
func (s straight) RGBA() (r, g, b, a uint32) {
	return uint32(s.c.R), uint32(s.c.G), uint32(s.c.B), uint32(s.c.A)
}

// write writes img to path atomically: path never holds a partial figure.
func write(path string, img vg.CanvasWriterTo) error {
	return atomicfile.WriteFunc(path, func(w io.Writer) error {
		_, err := img.WriteTo(w)
		return err
	})
}
