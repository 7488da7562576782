package plots

import (
	"image/color"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/results"
	"gonum.org/v1/plot/vg/draw"
)

// TestGroupColours: a group's colour is its method's whatever the other
// groups and their order; a method that is not built in gets a colour of
// its own name, outside the built-in methods' palette; a second group of
// one method gets that method's colour in another shade.
func TestGroupColours(t *testing.T) {
	t.Parallel()
	blue, vermillion, orange := palette[0], palette[1], palette[4]
	groups := func(algs ...string) []*results.Group {
		var gs []*results.Group
		for _, a := range algs {
			gs = append(gs, &results.Group{Key: results.Key{Algorithm: a}})
		}
		return gs
	}
	for _, tc := range []struct {
		algs []string
		want []color.RGBA
	}{
		{[]string{"maml", "trmaml"}, []color.RGBA{blue, vermillion}},
		{[]string{"dromaml", "maml"}, []color.RGBA{orange, blue}},
		{[]string{"trmaml"}, []color.RGBA{vermillion}},
		{[]string{"cvar", "dromaml", "maml", "trmaml", "trmaml_entropic"}, []color.RGBA{palette[2], orange, blue, vermillion, palette[3]}},
		{[]string{"maml", "maml", "maml"}, []color.RGBA{blue, {0, 74, 116, 255}, {89, 163, 205, 255}}},
		// Black cannot darken: DR-MAML+'s further groups are greys.
		{[]string{"drmaml_plus", "drmaml_plus", "drmaml_plus"}, []color.RGBA{{0, 0, 0, 255}, {89, 89, 89, 255}, {153, 153, 153, 255}}},
	} {
		if got := groupColours(groups(tc.algs...)); !slices.Equal(got, tc.want) {
			t.Errorf("%v: colours %v, want %v", tc.algs, got, tc.want)
		}
	}
	for _, name := range []string{"reptile", "my_method", "anil_maml", "x"} {
		c := MethodColour(name)
		if !slices.Contains(otherColours, c) || slices.Contains(palette, c) {
			t.Errorf("%s: colour %v is not one of the other methods' colours", name, c)
		}
		// The same whichever groups the figure has.
		if got := groupColours(groups("maml", name, "trmaml"))[1]; got != c {
			t.Errorf("%s: colour %v beside MAML and TR-MAML, %v alone", name, got, c)
		}
	}
}

// TestGroupStyles: in figures with markers (adversary, p weights) a group's
// glyph is its method's, the trade-off figure's, whatever the other groups
// and their order; a second group of one method differs from the first in
// glyph as well as shade; an unregistered method has the square, which no
// built-in method has.
func TestGroupStyles(t *testing.T) {
	t.Parallel()
	groups := func(algs ...string) []*results.Group {
		var gs []*results.Group
		for _, a := range algs {
			gs = append(gs, &results.Group{Key: results.Key{Algorithm: a}})
		}
		return gs
	}
	box, triangle, pyramid := draw.GlyphDrawer(draw.BoxGlyph{}), draw.GlyphDrawer(draw.TriangleGlyph{}), draw.GlyphDrawer(draw.PyramidGlyph{})
	for _, tc := range []struct {
		algs []string
		want []draw.GlyphDrawer
	}{
		{[]string{"maml", "trmaml"}, []draw.GlyphDrawer{box, triangle}},
		{[]string{"drmaml", "drmaml_plus", "dromaml", "maml", "trmaml"},
			[]draw.GlyphDrawer{draw.PlusGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}, box, triangle}},
		{[]string{"trmaml", "trmaml"}, []draw.GlyphDrawer{triangle, pyramid}},
		{[]string{"my_method"}, []draw.GlyphDrawer{draw.SquareGlyph{}}},
		{[]string{"drmaml_plus", "drmaml_plus"}, []draw.GlyphDrawer{draw.RingGlyph{}, draw.SquareGlyph{}}},
	} {
		styles := groupStyles(groups(tc.algs...))
		for i, st := range styles {
			if st.shape != tc.want[i] {
				t.Errorf("%v: group %d (%s) has glyph %T, want %T", tc.algs, i, tc.algs[i], st.shape, tc.want[i])
			}
			if i == 0 || tc.algs[i] != tc.algs[i-1] {
				if ms := methodStyle(tc.algs[i]); st != ms {
					t.Errorf("%v: group %d style %v, the method's is %v", tc.algs, i, st, ms)
				}
			}
		}
	}
}
