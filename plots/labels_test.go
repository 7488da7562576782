package plots

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestPlaceLabels: crowded anchors (coincident, in a tight row, a tight
// cluster beside other markers, next to the canvas edge) get label boxes
// that overlap no other box and no marker and stay on the canvas; a lone
// anchor's label sits right beside it.
func TestPlaceLabels(t *testing.T) {
	t.Parallel()
	bounds := vg.Rectangle{Max: vg.Point{X: 300, Y: 200}}
	const radius, gap = 4, 6
	label := vg.Point{X: 30, Y: 12}
	for _, c := range []struct {
		name    string
		anchors []vg.Point
		others  []vg.Point // markers without labels
		// unambiguous: every label must be nearer its anchor than any
		// other marker (possible when the markers are apart).
		unambiguous bool
	}{
		{"lone", []vg.Point{{X: 150, Y: 100}}, nil, true},
		// A diagonal pair 20 points apart, as CVaR a=0.05 and a=0.01 were:
		// each label on the far side of its own point.
		{"diagonal pair", []vg.Point{{X: 150, Y: 100}, {X: 165, Y: 110}}, nil, true},
		{"pair among markers", []vg.Point{{X: 150, Y: 100}, {X: 170, Y: 100}},
			[]vg.Point{{X: 160, Y: 125}, {X: 160, Y: 75}, {X: 110, Y: 100}}, true},
		{"coincident", []vg.Point{{X: 150, Y: 100}, {X: 150, Y: 100}, {X: 150, Y: 100}}, nil, true},
		{"tight row", []vg.Point{{X: 100, Y: 100}, {X: 103, Y: 101}, {X: 106, Y: 100}, {X: 109, Y: 99}, {X: 112, Y: 100}, {X: 115, Y: 100}}, nil, false},
		{"cluster among markers", []vg.Point{{X: 150, Y: 100}, {X: 152, Y: 104}, {X: 155, Y: 98}},
			[]vg.Point{{X: 160, Y: 100}, {X: 140, Y: 100}, {X: 150, Y: 112}, {X: 150, Y: 88}}, false},
		{"corner", []vg.Point{{X: 2, Y: 2}, {X: 5, Y: 3}, {X: 298, Y: 198}}, nil, false},
	} {
		markers := append(append([]vg.Point(nil), c.others...), c.anchors...)
		sizes := make([]vg.Point, len(c.anchors))
		for i := range sizes {
			sizes[i] = label
		}
		boxes := placeLabels(c.anchors, sizes, markers, radius, bounds, gap)
		if len(boxes) != len(c.anchors) {
			t.Fatalf("%s: %d boxes for %d anchors", c.name, len(boxes), len(c.anchors))
		}
		for i, b := range boxes {
			if b.Size() != label {
				t.Errorf("%s: box %d has size %v, want %v", c.name, i, b.Size(), label)
			}
			if !inside(b, bounds) {
				t.Errorf("%s: box %d = %v leaves the canvas", c.name, i, b)
			}
			for j, m := range markers {
				if overlap(b, square(m, radius)) > 0 {
					t.Errorf("%s: box %d = %v covers marker %d at %v", c.name, i, b, j, m)
				}
			}
			if c.unambiguous && misleading(b, c.anchors[i], markers, radius) {
				t.Errorf("%s: box %d = %v lies nearer another marker than its anchor %v", c.name, i, b, c.anchors[i])
			}
			for j := range i {
				if overlap(b, boxes[j]) > 0 {
					t.Errorf("%s: boxes %d = %v and %d = %v overlap", c.name, i, b, j, boxes[j])
				}
			}
		}
	}
	// Alone, a label goes right beside its anchor: gap to the right, centred.
	got := placeLabels([]vg.Point{{X: 150, Y: 100}}, []vg.Point{label}, nil, radius, bounds, gap)[0]
	want := vg.Rectangle{Min: vg.Point{X: 156, Y: 94}, Max: vg.Point{X: 186, Y: 106}}
	if got != want {
		t.Errorf("a lone label at %v, want %v", got, want)
	}
}

// TestOverlap: the shared area of two boxes, 0 when they only touch.
func TestOverlap(t *testing.T) {
	t.Parallel()
	r := func(x0, y0, x1, y1 vg.Length) vg.Rectangle {
		return vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}
	}
	for _, c := range []struct {
		a, b vg.Rectangle
		want float64
	}{
		{r(0, 0, 2, 2), r(1, 1, 3, 3), 1},
		{r(0, 0, 2, 2), r(2, 0, 4, 2), 0},
		{r(0, 0, 4, 4), r(1, 1, 2, 3), 2},
		{r(0, 0, 1, 1), r(5, 5, 6, 6), 0},
	} {
		if got := overlap(c.a, c.b); got != c.want {
			t.Errorf("overlap(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
