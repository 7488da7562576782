package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabels is a plot.Plotter that writes a label beside each of a set of
// points, placed so that no two labels overlap each other or the markers in
// Avoid (placeLabels); a label pushed away from its point gets a thin leader
// line back to it, and each sits on a translucent white box so it stays
// legible over bars and lines. gonum's plotter.Labels puts every label at a fixed
// offset, so labels of nearby points (close CVaR levels) run into each other.
type pointLabels struct {
	XYs    plotter.XYs
	Labels []string
	// Avoid are the data points of markers no label may cover (the labelled
	// points are avoided as well); Radius is the markers' half-size.
	Avoid  plotter.XYs
	Radius vg.Length
	Text   text.Style
	Leader draw.LineStyle
}

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	at := func(xy plotter.XY) vg.Point { return vg.Point{X: trX(xy.X), Y: trY(xy.Y)} }
	anchors := make([]vg.Point, len(l.XYs))
	sizes := make([]vg.Point, len(l.XYs))
	pad := l.Text.Font.Size / 6
	for i, xy := range l.XYs {
		anchors[i] = at(xy)
		sizes[i] = vg.Point{X: l.Text.Width(l.Labels[i]) + 2*pad, Y: l.Text.Height(l.Labels[i]) + 2*pad}
	}
	var markers []vg.Point
	for _, xy := range l.Avoid {
		markers = append(markers, at(xy))
	}
	markers = append(markers, anchors...)
	sty := l.Text
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	gap := l.Radius + pad
	boxes := placeLabels(anchors, sizes, markers, l.Radius, c.Rectangle, gap)
	for i, b := range boxes {
		// Beyond the first ring (at most sqrt 2 gap away) a label is
		// not obviously its point's: draw the leader.
		if far := nearest(b, anchors[i]); distance(far, anchors[i]) > 2*gap {
			c.StrokeLine2(l.Leader, anchors[i].X, anchors[i].Y, far.X, far.Y)
		}
	}
	for i, b := range boxes {
		c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 200})
		c.Fill(b.Path())
		c.FillText(sty, vg.Point{X: (b.Min.X + b.Max.X) / 2, Y: (b.Min.Y + b.Max.Y) / 2}, l.Labels[i])
	}
}

// placeLabels returns a box of the given size (X width, Y height) for each
// anchor, placed greedily in order among the candidate positions
// (labelCandidates: beside the anchor in eight directions, then on rings
// further out). Every marker (the anchors included) is a square of
// half-size radius. The first candidate that stays inside bounds, covers no
// marker and no box placed before it, and whose centre is not nearer to
// another marker than to its own anchor (which would attribute it to the
// wrong point) wins; failing that, the first that only breaks the last rule; failing
// that, the one with the least overlap.
func placeLabels(anchors, sizes, markers []vg.Point, radius vg.Length, bounds vg.Rectangle, gap vg.Length) []vg.Rectangle {
	boxes := make([]vg.Rectangle, 0, len(anchors))
	for i, a := range anchors {
		var least, clear vg.Rectangle // the least overlap; the first without any
		leastCost, hasClear, placed := math.Inf(1), false, false
		for _, b := range labelCandidates(a, sizes[i], gap) {
			cost := 0.0
			if !inside(b, bounds) {
				cost += 1e6 // anything on the canvas beats a label cut off at its edge
			}
			for _, m := range markers {
				cost += overlap(b, square(m, radius))
			}
			for _, o := range boxes {
				cost += overlap(b, o)
			}
			if cost < leastCost {
				least, leastCost = b, cost
			}
			if cost > 0 {
				continue
			}
			if !misleading(b, a, markers, radius) {
				boxes, placed = append(boxes, b), true
				break
			}
			if !hasClear {
				clear, hasClear = b, true
			}
		}
		switch {
		case placed:
		case hasClear:
			boxes = append(boxes, clear)
		default:
			boxes = append(boxes, least)
		}
	}
	return boxes
}

// misleading reports whether box b, the label of anchor a, has its centre
// nearer to one of the markers than to a: a reader attributes a label to
// the point nearest to it. Markers within radius of a are a's own
// (coincident points share a label's position whatever it is).
func misleading(b vg.Rectangle, a vg.Point, markers []vg.Point, radius vg.Length) bool {
	centre := vg.Point{X: (b.Min.X + b.Max.X) / 2, Y: (b.Min.Y + b.Max.Y) / 2}
	own := distance(centre, a)
	for _, m := range markers {
		if distance(m, a) > radius && distance(centre, m) < own {
			return true
		}
	}
	return false
}

// labelRings is how many rings of candidate positions labelCandidates
// offers, each one label height further from the anchor than the last.
const labelRings = 8

// labelCandidates are the boxes of the given size beside anchor a, the
// nearest first: gap away to the right, upper right, lower right, left,
// upper left, lower left, above and below, then the same directions on
// rings further out.
func labelCandidates(a, size vg.Point, gap vg.Length) []vg.Rectangle {
	dirs := [][2]int{{1, 0}, {1, 1}, {1, -1}, {-1, 0}, {-1, 1}, {-1, -1}, {0, 1}, {0, -1}}
	var out []vg.Rectangle
	for r := range labelRings {
		d := gap + vg.Length(r)*size.Y
		for _, dir := range dirs {
			// The box's edge nearest to a lies d from it (on a diagonal,
			// both edges: its corner is d away along each axis).
			min := vg.Point{X: boxStart(a.X, dir[0], d, size.X), Y: boxStart(a.Y, dir[1], d, size.Y)}
			out = append(out, vg.Rectangle{Min: min, Max: min.Add(size)})
		}
	}
	return out
}

// boxStart is where, along one axis, a box of the given extent starts that
// lies d beyond c in direction dir (1 or -1), or is centred on c (0).
func boxStart(c vg.Length, dir int, d, extent vg.Length) vg.Length {
	switch dir {
	case 1:
		return c + d
	case -1:
		return c - d - extent
	default:
		return c - extent/2
	}
}

// square is the box of half-size r around p.
func square(p vg.Point, r vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: p.X - r, Y: p.Y - r}, Max: vg.Point{X: p.X + r, Y: p.Y + r}}
}

// overlap is the area two boxes share.
func overlap(a, b vg.Rectangle) float64 {
	w := math.Min(float64(a.Max.X), float64(b.Max.X)) - math.Max(float64(a.Min.X), float64(b.Min.X))
	h := math.Min(float64(a.Max.Y), float64(b.Max.Y)) - math.Max(float64(a.Min.Y), float64(b.Min.Y))
	if w <= 0 || h <= 0 {
		return 0
	}
	return w * h
}

// inside reports whether box b lies within bounds.
func inside(b, bounds vg.Rectangle) bool {
	return b.Min.X >= bounds.Min.X && b.Min.Y >= bounds.Min.Y && b.Max.X <= bounds.Max.X && b.Max.Y <= bounds.Max.Y
}

// nearest is the point of box b closest to p.
func nearest(b vg.Rectangle, p vg.Point) vg.Point {
	return vg.Point{X: min(max(p.X, b.Min.X), b.Max.X), Y: min(max(p.Y, b.Min.Y), b.Max.Y)}
}

// distance is the Euclidean distance between two points.
func distance(a, b vg.Point) vg.Length {
	return vg.Length(math.Hypot(float64(a.X-b.X), float64(a.Y-b.Y)))
}
