package serve

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/rundir"
)

// userA and userB are methods of this test's program (registered below,
// MAML under other names) whose names alone hash to one colour: found by
// searching names, the first such pair of user0, user1, ...
var userA, userB = collidingNames()

func collidingNames() (string, string) {
	first := map[color.RGBA]string{}
	for i := range 100 {
		name := fmt.Sprintf("user%d", i)
		c := plots.MethodColours([]string{name})[name]
		if prev, ok := first[c]; ok {
			return prev, name
		}
		first[c] = name
	}
	panic("serve: no two of 100 method names share a colour")
}

func init() {
	for _, name := range []string{userA, userB} {
		metalearn.RegisterMethod(metalearn.MethodInfo{Name: name, New: func() metalearn.MethodSettings { return &metalearn.MAML{} }})
	}
}

// TestListColoursUserMethodsApart: two methods of a user's program whose
// names hash to one colour are listed in different colours, each the
// colour a figure of the listed methods gives it, MAML's its own.
func TestListColoursUserMethodsApart(t *testing.T) {
	root := t.TempDir()
	for _, alg := range []string{userA, userB, "maml"} {
		cfg, err := configs.Builtin("sine_quick")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Algorithm = alg
		raw, err := cfg.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, alg)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.ConfigFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, list := served(t, root)
	figure := plots.MethodColours([]string{"maml", userA, userB})
	got := map[string]string{}
	for _, r := range list.Runs {
		got[r.Algorithm] = r.Colour
		c := figure[r.Algorithm]
		if want := fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B); r.Colour != want {
			t.Errorf("%s (%s, %s): colour %q, a figure of the listed methods draws it %q", r.Name, r.Algorithm, r.State, r.Colour, want)
		}
	}
	if len(got) != 3 || got[userA] == got[userB] || got["maml"] != "#0072b2" {
		t.Errorf("colours by method %v: want three, %s's and %s's different, MAML's blue #0072b2", got, userA, userB)
	}
	// Listed again, from the cache: the same colours.
	again, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again {
		if r.Colour != got[r.Algorithm] {
			t.Errorf("%s listed again: colour %q, first %q", r.Name, r.Colour, got[r.Algorithm])
		}
	}
}
