package plots

import (
	"fmt"
	"image/color"
	"maps"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/results"
	"gonum.org/v1/plot/vg/draw"
)

// TestGroupColours: a built-in method's group has its method's colour
// whatever the other groups and their order; a method that is not built in
// gets a colour of its own name, outside the built-in methods' palette,
// unless another such method of the figure has it; a second group of one
// method gets that method's colour in another shade.
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
		c := groupColours(groups(name))[0]
		if !slices.Contains(otherColours, c) || slices.Contains(palette, c) {
			t.Errorf("%s: colour %v is not one of the other methods' colours", name, c)
		}
		// The same beside built-in methods.
		if got := groupColours(groups("maml", name, "trmaml"))[1]; got != c {
			t.Errorf("%s: colour %v beside MAML and TR-MAML, %v alone", name, got, c)
		}
	}
	// Two methods whose names hash to one colour differ in a figure of
	// both, in either order, and each group of theirs is its method's.
	a, b := CollidingNames()
	ab, ba := groupColours(groups(a, b, a)), groupColours(groups(b, a))
	if ab[0] == ab[1] || ab[0] != ba[1] || ab[1] != ba[0] || ab[2] != variant(ab[0], 1) {
		t.Errorf("%s and %s: colours %v, in the other order %v", a, b, ab, ba)
	}
}

// CollidingNames returns two names of methods that are not built in whose
// colours alone are the same (their names hash to one of otherColours),
// found by searching names: the first such pair of user0, user1, ..., in
// name order. Exported for the package's external tests.
func CollidingNames() (string, string) {
	first := map[color.RGBA]string{}
	for i := range 100 {
		name := fmt.Sprintf("user%d", i)
		c := MethodColours([]string{name})[name]
		if prev, ok := first[c]; ok {
			return min(prev, name), max(prev, name)
		}
		first[c] = name
	}
	panic("plots: no two of 100 method names share a colour")
}

// TestMethodColoursOfASet: the colours of the methods shown together.
// Built-in methods keep theirs whatever else is shown; methods that are not
// built in get pairwise different colours, also two whose names hash to
// one colour and more of them than otherColours has (then shades of
// them), the same whatever the order of the names; one whose colour no
// other takes keeps it.
func TestMethodColoursOfASet(t *testing.T) {
	t.Parallel()
	a, b := CollidingNames() // a sorts first, so keeps its colour
	alone := func(name string) color.RGBA { return MethodColours([]string{name})[name] }
	ca := alone(a)
	i := slices.Index(otherColours, ca)
	if i < 0 {
		t.Fatalf("%s alone: colour %v is not one of otherColours", a, ca)
	}
	next := otherColours[(i+1)%len(otherColours)]
	var c string // a name whose colour is neither a's nor the next
	for j := 0; c == ""; j++ {
		if n := fmt.Sprintf("other%d", j); alone(n) != ca && alone(n) != next {
			c = n
		}
	}
	many := func(n int) []string {
		var names []string
		for j := range n {
			names = append(names, fmt.Sprintf("method_%d", j))
		}
		return names
	}
	builtins := slices.Sorted(maps.Keys(methodStyles))
	for _, tc := range []struct {
		name string
		algs []string
		want map[string]color.RGBA // nil: only pairwise different
	}{
		{"colliding pair", []string{a, b}, map[string]color.RGBA{a: ca, b: next}},
		{"colliding pair, other order", []string{b, a}, map[string]color.RGBA{a: ca, b: next}},
		{"colliding pair repeated, with built-ins", []string{"trmaml", b, "maml", a, b},
			map[string]color.RGBA{a: ca, b: next, "maml": palette[0], "trmaml": palette[1]}},
		{"a third keeps its own", []string{c, b, a}, map[string]color.RGBA{a: ca, b: next, c: alone(c)}},
		{"every built-in beside the pair", append([]string{b, a}, builtins...), nil},
		{"twice as many as otherColours", many(2 * len(otherColours)), nil},
		{"seven times as many, with built-ins", append(many(7*len(otherColours)), builtins...), nil},
	} {
		got := MethodColours(tc.algs)
		reversed := slices.Clone(tc.algs)
		slices.Reverse(reversed)
		if back := MethodColours(reversed); !maps.Equal(got, back) {
			t.Errorf("%s: colours %v, names reversed %v", tc.name, got, back)
		}
		for alg, want := range tc.want {
			if got[alg] != want {
				t.Errorf("%s: %s's colour %v, want %v", tc.name, alg, got[alg], want)
			}
		}
		owner := map[color.RGBA]string{}
		for _, alg := range tc.algs {
			col, ok := got[alg]
			if !ok {
				t.Errorf("%s: no colour for %s", tc.name, alg)
			}
			if st, ok := methodStyles[alg]; ok && col != st.col {
				t.Errorf("%s: built-in %s's colour %v, want its own %v", tc.name, alg, col, st.col)
			}
			if prev, ok := owner[col]; ok && prev != alg {
				t.Errorf("%s: %s and %s share colour %v", tc.name, prev, alg, col)
			}
			owner[col] = alg
		}
		if len(got) != len(owner) {
			t.Errorf("%s: %d colours for %d methods", tc.name, len(owner), len(got))
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
				if ms := methodSet(tc.algs)[tc.algs[i]]; st != ms {
					t.Errorf("%v: group %d style %v, the method's is %v", tc.algs, i, st, ms)
				}
			}
		}
	}
}
