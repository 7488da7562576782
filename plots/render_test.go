package plots

import (
	"strings"
	"testing"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

func TestFitLabels(t *testing.T) {
	t.Parallel()
	style := newPanel("", "", "").X.Label.TextStyle
	for _, c := range []struct {
		name, in string
		width    vg.Length
		lines    int
	}{
		{"fits", "meta-training iteration", 3 * vg.Inch, 1},
		{"empty", "", vg.Inch, 1},
		{"long", "meta-training task amplitude (dotted: gap in the range)", 1.5 * vg.Inch, 2},
		{"kept lines", "first\nsecond", 3 * vg.Inch, 2},
		{"one long word", "supercalifragilisticexpialidocious", 0.3 * vg.Inch, 1},
	} {
		got := wrapText(c.in, style, c.width)
		lines := strings.Split(got, "\n")
		if len(lines) != c.lines || strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(c.in), " ") {
			t.Errorf("%s: %q wrapped at %v is %q, want %d lines of the same words", c.name, c.in, c.width, got, c.lines)
		}
		for _, l := range lines[:len(lines)-1] {
			if style.Width(l) > c.width {
				t.Errorf("%s: line %q is %v wide, more than %v", c.name, l, style.Width(l), c.width)
			}
		}
	}

	// A panel's labels fit its size after fitLabels: gonum/plot would
	// otherwise pad the data area by their overhang.
	p := newPanel("(b) total weight on hard tasks", "meta-training task amplitude (dotted: gap in the range)", "p mass on amplitude ≥ 4.95")
	w, h := 1.7*vg.Inch, 1.8*vg.Inch
	fitLabels(p, w, h)
	for _, l := range []struct {
		text string
		max  vg.Length
		font text.Style
	}{{p.Title.Text, w, p.Title.TextStyle}, {p.X.Label.Text, w, p.X.Label.TextStyle}, {p.Y.Label.Text, 0.65 * h, p.Y.Label.TextStyle}} {
		for _, line := range strings.Split(l.text, "\n") {
			if l.font.Width(line) > l.max {
				t.Errorf("%q: line %q wider than %v", l.text, line, l.max)
			}
		}
	}
}
