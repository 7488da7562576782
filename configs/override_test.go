package configs_test

import (
	. "github.com/trmaml/trmaml/configs"

	"strings"
	"testing"
)

func TestOverride(t *testing.T) {
	t.Parallel()
	base, err := Builtin("omniglot_quick")
	if err != nil {
		t.Fatal(err)
	}
	evalOnly := func(p string) bool { return strings.HasPrefix(p, "eval.") || strings.HasPrefix(p, "task.omniglot.") }
	c, err := Override(base, "-set", []string{"task.omniglot.resize=nearest", "task.omniglot.rotate_eval=false", "eval.final_instances=40"}, evalOnly)
	if err != nil {
		t.Fatal(err)
	}
	if o := omni(c); o.Resize != "nearest" || o.RotateEval || !o.Rotate || c.Eval.FinalInstances != 40 {
		t.Errorf("overrides not applied: %+v, eval %+v", o, c.Eval)
	}
	if omni(base).Resize == "nearest" {
		t.Error("Override changed the config it was given")
	}
	if c.Seed != base.Seed || c.Meta.Iterations != base.Meta.Iterations || omni(c).Ways != omni(base).Ways {
		t.Errorf("fields not set changed: %+v", c)
	}
	for _, tc := range []struct {
		set  string
		want string
	}{
		{"task.omniglot.resize=bicubic", `-set: task.omniglot.resize = "bicubic": must be one of bilinear, lanczos, nearest`},
		{"task.omniglot.rotate_eval=maybe", `-set task.omniglot.rotate_eval=maybe: task.omniglot.rotate_eval: cannot use "maybe" (string): want true or false`},
		{"task.omniglot.colour=red", `-set task.omniglot.colour=red: unknown field "colour" in task.omniglot (allowed: ways, rotate, rotate_eval, image_size, resize)`},
		{"seed=3", `-set seed=3: seed may not be changed here`},
		{"eval.every", `-set eval.every: want FIELD=VALUE`},
	} {
		_, err := Override(base, "-set", []string{tc.set}, evalOnly)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.set, err, tc.want)
		}
	}
}

// TestOverrideNamesItsFlag: resume's refusals say -override, not eval's -set.
func TestOverrideNamesItsFlag(t *testing.T) {
	t.Parallel()
	base := Defaults()
	_, err := Override(base, "-override", []string{"seed=3"}, func(string) bool { return false })
	if err == nil || !strings.HasPrefix(err.Error(), "-override seed=3: seed may not be changed here") {
		t.Fatalf("error %v, want it to start with -override seed=3", err)
	}
}

// TestOverrideEmptySection: a method with no settings (MAML) says so
// rather than listing no keys.
func TestOverrideEmptySection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, want string }{
		{"maml.x=1", `-set maml.x=1: unknown field "x" in maml (maml has no settings)`},
		{"maml=1", `-set maml=1: maml: cannot use "1" (int): want an empty mapping, {} (it has no settings)`},
		{"meta.x=1", `unknown field "x" in meta (allowed: iterations, batch,`},
	} {
		_, err := Override(Defaults(), "-set", []string{tc.set}, func(string) bool { return true })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.set, err, tc.want)
		}
	}
	if _, err := Override(Defaults(), "-set", []string{"maml={}"}, func(string) bool { return true }); err != nil {
		t.Errorf("maml={}: %v", err)
	}
}
