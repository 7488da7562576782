package metalearn

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/regname"
)

// TestRegisterMethodRefusesBadNames: a name that cannot be a config key
// beside the top-level ones, or one taken, panics with the reason, and the
// table is left as it was.
func TestRegisterMethodRefusesBadNames(t *testing.T) {
	before := MethodNames()
	for _, c := range []struct{ name, want string }{
		{"", "a name must be a lowercase letter"},
		{"my method", "a name must be"},
		{"tilted.v2", "a name must be"},
		{"meta", "fixed key"},
		{"eval", "fixed key"},
		{"cvar", "registered twice"},
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			RegisterMethod(MethodInfo{Name: c.name, New: func() MethodSettings { return &MAML{} }})
			return ""
		}()
		if !strings.Contains(got, c.want) || !strings.Contains(got, fmt.Sprintf("%q", c.name)) {
			t.Errorf("RegisterMethod(%q): panic %q, want %q", c.name, got, c.want)
		}
	}
	for _, name := range before {
		if err := regname.Check("method", name, regname.ConfigKeys); err != nil {
			t.Errorf("built-in %v", err)
		}
	}
	if after := MethodNames(); !slices.Equal(after, before) {
		t.Errorf("methods after the refusals: %v, want %v", after, before)
	}
}
