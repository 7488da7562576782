package configs_test

import (
	. "github.com/trmaml/trmaml/configs"

	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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
		{"eval.every=", `-set eval.every=: no value after "=" (want FIELD=VALUE`},
		{"eval.every= ", `-set eval.every= : no value after "=" (want FIELD=VALUE`},
		// A second YAML document was dropped and the first one used.
		{"eval.every=5\n---\nseed: 3", `-set eval.every=5` + "\n---\nseed: 3: the value holds more than one YAML document"},
		{"eval.every=*a", `-set eval.every=*a: the value is not YAML: `},
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

// TestParseWithLocatesSettings: a setting applied over a file (an
// experiment's sweep value over its base) that is out of range is located
// at its own line in its own file, not at that line of the base; the
// base's own errors stay in the base.
func TestParseWithLocatesSettings(t *testing.T) {
	t.Parallel()
	base := "# a comment\n# another\n# and a third\nmeta:\n  lr: -1\n"
	var node yaml.Node
	if err := yaml.Unmarshal([]byte("1.5"), &node); err != nil {
		t.Fatal(err)
	}
	v := node.Content[0]
	v.Line = 4 // the sweep's line in the experiment file
	_, err := ParseWith("base.yaml", []byte(base), "grid.yaml", []Setting{{Path: "drmaml.alpha", Value: v}})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"grid.yaml:4: drmaml.alpha = 1.5: must be in (0, 1)", "base.yaml:5: meta.lr = -1: must be"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %q, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "base.yaml:4") {
		t.Errorf("got %q: the setting is blamed on the base", err)
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

// TestOverrideTwice: a setting given twice is refused, as a config file
// refuses a key twice, instead of the last one winning silently.
func TestOverrideTwice(t *testing.T) {
	t.Parallel()
	_, err := Override(Defaults(), "-set", []string{"meta.lr=0.001", "seed=2", "meta.lr=0.002"}, func(string) bool { return true })
	if want := "-set meta.lr=0.002: meta.lr is already set by -set meta.lr=0.001; give it once"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if _, err := Override(Defaults(), "-set", []string{"meta.lr=0.001", "meta.batch=4"}, func(string) bool { return true }); err != nil {
		t.Errorf("two settings: %v", err)
	}
}
