package configs_test

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	. "github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/models/mlp"
)

func TestDefaultsValidate(t *testing.T) {
	t.Parallel()
	if err := Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	names := BuiltinNames()
	// The paper's settings and the quick runs the docs and scripts name;
	// a new config file needs no change here.
	want := []string{"sine_k10_maml", "sine_k10_trmaml", "sine_k5_maml", "sine_k5_trmaml", "sine_quick"}
	for _, setting := range []string{"10way_1shot", "10way_5shot", "20way_1shot", "20way_5shot", "5way_1shot"} {
		want = append(want, "omniglot_"+setting+"_maml", "omniglot_"+setting+"_trmaml")
	}
	want = append(want, "omniglot_quick", "linreg_skewed_maml", "linreg_skewed_trmaml")
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("BuiltinNames() = %v lacks %s", names, w)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("BuiltinNames() = %v, not sorted", names)
	}
	runs := experimentMethods(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != name {
				t.Errorf("name = %q, want the file stem %q", c.Name, name)
			}
			if err := c.Validate(); err != nil {
				t.Error(err)
			}
			// Every built-in states every field its family reads and every
			// setting of the methods that run on it (its algorithm and those
			// of the repository's experiment files with it as base), so it
			// must not depend on the defaults: decoding it over a zero Config
			// gives the same result, but for the other families' sections
			// and the sections of other methods that it leaves out (their
			// defaults, in the method's file). A section it states must be
			// complete.
			zero, errs := DecodeOverZero(name)
			for k, sec := range c.Task.Sections {
				if k != c.Task.Family {
					zero.Task.Sections[k] = sec
				}
			}
			stated := topLevelKeys(t, name)
			for k, m := range c.Methods {
				if k != c.Algorithm && !runs[name][k] && !stated[k] {
					zero.Methods[k] = m
				}
			}
			for k, sec := range c.Model.Sections {
				if k != c.Model.Kind {
					zero.Model.Sections[k] = sec
				}
			}
			for k, sec := range c.Inner.Sections {
				if k != c.Inner.Kind {
					zero.Inner.Sections[k] = sec
				}
			}
			if len(errs) > 0 || !reflect.DeepEqual(zero, c) {
				t.Errorf("file is not fully explicit: %v\nover zero: %+v\nover defaults: %+v", errs, zero, c)
			}
		})
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "sine_quick") {
		t.Errorf("Builtin(nope) error %v does not list the available names", err)
	}
}

// topLevelKeys are the keys of the built-in config name's top-level
// mapping.
func topLevelKeys(t *testing.T, name string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for k := range doc {
		keys[k] = true
	}
	return keys
}

// experimentMethods maps each built-in config to the methods that the
// experiment files under experiments/ run with it as their base.
func experimentMethods(t *testing.T) map[string]map[string]bool {
	t.Helper()
	runs := map[string]map[string]bool{}
	err := filepath.WalkDir("experiments", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var spec struct {
			Base       string   `yaml:"base"`
			Algorithms []string `yaml:"algorithms"`
		}
		if err := yaml.Unmarshal(raw, &spec); err != nil || spec.Base == "" {
			return err // a *_base.yaml config has no base
		}
		base := strings.TrimSuffix(spec.Base, ".yaml")
		if strings.ContainsAny(spec.Base, `/\`) || strings.HasSuffix(spec.Base, ".yaml") {
			p := filepath.Clean(filepath.Join(filepath.Dir(path), spec.Base))
			if filepath.Dir(p) != "." {
				return nil // not a built-in
			}
			base = strings.TrimSuffix(p, ".yaml")
		}
		if runs[base] == nil {
			runs[base] = map[string]bool{}
		}
		for _, a := range spec.Algorithms {
			runs[base][a] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs["sine_k5_maml"]) < 3 {
		t.Fatalf("experiment bases: %v, want sine_k5_maml's grids", runs)
	}
	return runs
}

func TestDefaultsMatchPaperFile(t *testing.T) {
	t.Parallel()
	c, err := Builtin("sine_k5_maml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Defaults()) {
		t.Errorf("sine_k5_maml.yaml = %+v\nDefaults() = %+v", c, Defaults())
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	configs := map[string]Config{"defaults": Defaults()}
	for _, name := range BuiltinNames() {
		c, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		configs[name] = c
	}
	linear := Defaults()
	mlp.Section(linear).Hidden = []int{}
	sine(linear).PhaseMax = 2 * math.Pi
	configs["linear"] = linear
	for name, c := range configs {
		data, err := c.Marshal()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Task.Family == "sinusoid" && (!strings.Contains(string(data), "phase_max: ") || strings.Contains(string(data), "phase_max: pi")) {
			t.Errorf("%s: phase_max not written as a number:\n%s", name, data)
		}
		if strings.Count(string(data), "family: ") != 1 || !strings.Contains(string(data), "  "+c.Task.Family+":\n") {
			t.Errorf("%s: want the section of family %s and no other:\n%s", name, c.Task.Family, data)
		}
		back, err := Parse(name+".yaml", data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, data)
		}
		// What the run reads comes back; the rest is not written.
		if !reflect.DeepEqual(back.Read(), c.Read()) {
			t.Errorf("%s: round trip changed config:\n got %+v\nwant %+v", name, back.Read(), c.Read())
		}
		if fam, _ := c.Family(); fam.Model() == "cnn" && strings.Contains(string(data), "hidden:") || fam.Model() == "mlp" && strings.Contains(string(data), "  cnn:") {
			t.Errorf("%s: writes model fields a %s does not read:\n%s", name, fam.Model(), data)
		}
		if c.Task.Family == "sinusoid" && strings.Contains(string(data), "\ncvar:\n") != (c.Algorithm == "cvar") {
			t.Errorf("%s: a %s run's config.yaml with the CVaR section %v:\n%s", name, c.Algorithm, !(c.Algorithm == "cvar"), data)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(path, []byte("algorithm: trmaml\ninner:\n  steps: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Algorithm = "trmaml"
	want.Inner.Steps = 3
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load = %+v, want %+v", c, want)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	if err := os.WriteFile(path, []byte("inner:\n  alpha: -0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path+":2: inner.alpha = -0.1: must be > 0") {
		t.Errorf("Load error %v does not name file, line, field and rule", err)
	}
}

func TestPhaseMax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"pi", math.Pi},
		{"2pi", 2 * math.Pi},
		{"3", 3},
		{"1.5", 1.5},
	} {
		c, err := Parse("x.yaml", []byte("task:\n  sinusoid:\n    phase_max: "+tc.in+"\n"))
		if err != nil {
			t.Errorf("phase_max %s: %v", tc.in, err)
			continue
		}
		if got := float64(sine(c).PhaseMax); got != tc.want {
			t.Errorf("phase_max %s = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{"unknown top-level key", "algorithm: maml\nfoo: 1\n",
			// the methods' sections (a method registered later adds its own)
			// come after meta
			[]string{`x.yaml:2: unknown field "foo" (allowed: name, algorithm, order, seed, task, model, inner, meta, trmaml, trmaml_entropic, cvar, `, `, eval, data, init)`}},
		{"cvar level out of range", "algorithm: cvar\ncvar:\n  level: 1.5\n",
			[]string{`x.yaml:3: cvar.level = 1.5: must be in (0, 1]`}},
		{"cvar level zero", "cvar:\n  level: 0\n", []string{`x.yaml:2: cvar.level = 0: must be in (0, 1]`}},
		{"drmaml alpha one", "drmaml:\n  alpha: 1\n", []string{`x.yaml:2: drmaml.alpha = 1: must be in (0, 1)`}},
		{"drmaml_plus alpha zero", "drmaml_plus:\n  alpha: 0\n", []string{`x.yaml:2: drmaml_plus.alpha = 0: must be in (0, 1)`}},
		{"candidates below the meta-batch", "algorithm: drmaml\nmeta:\n  batch: 25\ndrmaml:\n  candidates: 10\n",
			[]string{`x.yaml:5: drmaml.candidates = 10: the candidate batch must be >= meta.batch = 25`}},
		{"alpha so close to 1 that the candidates exhaust memory", "algorithm: drmaml_plus\nmeta:\n  batch: 50\ndrmaml_plus:\n  alpha: 0.99999\n",
			[]string{`x.yaml:5: drmaml_plus.alpha = 0.99999: needs a candidate batch of meta.batch / (1-alpha) = 5000000 instances, more than 10000`}},
		{"candidates too many", "algorithm: drmaml\ndrmaml:\n  candidates: 1000000\n",
			[]string{`x.yaml:3: drmaml.candidates = 1000000: must be <= 10000`}},
		{"negative eta_q", "dromaml:\n  eta_q: -0.1\n", []string{`x.yaml:2: dromaml.eta_q = -0.1: must be > 0`}},
		{"zero eta_q", "dromaml:\n  eta_q: 0\n", []string{`x.yaml:2: dromaml.eta_q = 0: must be > 0 (0 would keep q uniform: MAML on the uniform distribution)`}},
		{"negative group adjustment", "dromaml:\n  adjustment: -1\n", []string{`x.yaml:2: dromaml.adjustment = -1: must be a finite number >= 0`}},
		{"cvar_alpha repeated", "eval:\n  cvar_alpha: [0.5, 0.7, 0.5]\n",
			[]string{`x.yaml:2: eval.cvar_alpha[2] = 0.5: repeats eval.cvar_alpha[0]: each level once`}},
		{"cvar_alpha outside (0, 1)", "eval:\n  cvar_alpha: [1]\n", []string{`x.yaml:2: eval.cvar_alpha[0] = 1: must be in (0, 1)`}},
		{"negative entropic step", "trmaml_entropic:\n  p_lr: -1\n", []string{`x.yaml:2: trmaml_entropic.p_lr = -1: must be > 0`}},
		{"zero TR-MAML step", "trmaml:\n  p_lr: 0\n", []string{`x.yaml:2: trmaml.p_lr = 0: must be > 0 (0 would keep p uniform: MAML on the uniform distribution)`}},
		{"zero CVaR step", "cvar:\n  p_lr: 0\n", []string{`x.yaml:2: cvar.p_lr = 0: must be > 0 (0 would keep p uniform: MAML on the uniform distribution)`}},
		{"unknown algorithm", "algorithm: reptile\n", []string{`x.yaml:1: algorithm = "reptile": must be one of maml, trmaml, trmaml_entropic, cvar`}},
		{"unknown nested key", "inner:\n  steps: 1\n  alpah: 0.1\n",
			[]string{`x.yaml:3: unknown field "alpah" in inner (allowed: kind, steps, alpha, anil, mamlpp)`}},
		{"unknown deeply nested key", "task:\n  sinusoid:\n    phase: 1\n",
			[]string{`x.yaml:3: unknown field "phase" in task.sinusoid (allowed: phase_max, x_min`}},
		{"wrong type", "task:\n  support: five\n",
			[]string{`x.yaml:2: task.support: cannot use "five" (string): want an integer`}},
		{"float for integer", "meta:\n  iterations: 1.5\n",
			[]string{`x.yaml:2: meta.iterations: cannot use "1.5" (float): want an integer`}},
		{"negative seed", "seed: -1\n",
			[]string{`x.yaml:1: seed: cannot use "-1" (int): want a non-negative integer`}},
		{"scalar for mapping", "inner: 3\n",
			[]string{`x.yaml:1: inner: cannot use "3" (int): want a mapping (keys: kind, steps, alpha)`}},
		{"pair of wrong length", "task:\n  sinusoid:\n    test_amplitudes: [0.1, 2, 5]\n",
			[]string{`x.yaml:3: task.sinusoid.test_amplitudes: cannot use a list of 3: want a list of 2, each a number`}},
		{"wrong element type", "model:\n  mlp:\n    hidden: [40, forty]\n",
			[]string{`x.yaml:3: model.mlp.hidden[1]: cannot use "forty" (string): want an integer`}},
		{"bad phase string", "task:\n  sinusoid:\n    phase_max: tau\n",
			[]string{`x.yaml:3: task.sinusoid.phase_max: cannot use "tau" (string): want a number, "pi" or "2pi"`}},
		{"phase out of range", "task:\n  sinusoid:\n    phase_max: 7\n",
			[]string{`x.yaml:3: task.sinusoid.phase_max = 7: must be in (0, 2pi]`}},
		{"alpha zero", "inner:\n  alpha: 0\n",
			[]string{`x.yaml:2: inner.alpha = 0: must be > 0`}},
		{"alpha negative", "inner:\n  steps: 1\n  alpha: -0.1\n",
			[]string{`x.yaml:3: inner.alpha = -0.1: must be > 0`}},
		{"support < 1", "task:\n  support: 0\n",
			[]string{`x.yaml:2: task.support = 0: must be in [1, 10000]`}},
		{"batch < 1", "meta:\n  batch: 0\n",
			[]string{`x.yaml:2: meta.batch = 0: must be in [1, 10000]`}},
		{"p_lr < 0", "trmaml:\n  p_lr: -1e-4\n",
			[]string{`x.yaml:2: trmaml.p_lr = -0.0001: must be > 0`}},
		{"NaN", "inner:\n  alpha: .nan\n",
			[]string{`x.yaml:2: inner.alpha = NaN: must be a finite number > 0`}},
		{"Inf", "meta:\n  lr: .inf\n",
			[]string{`x.yaml:2: meta.lr = +Inf: must be a finite number > 0`}},
		{"bad algorithm", "algorithm: mamll\n",
			[]string{`x.yaml:1: algorithm = "mamll": must be one of maml, trmaml`}},
		{"bad order", "seed: 2\norder: third\n",
			[]string{`x.yaml:2: order = "third": must be one of second, first`}},
		{"bad output", "meta:\n  output: best\n",
			[]string{`x.yaml:2: meta.output = "best": must be one of last, T1, T2`}},
		{"bad activation", "model:\n  mlp:\n    activation: gelu\n",
			[]string{`x.yaml:3: model.mlp.activation = "gelu": must be one of relu, tanh, sigmoid, softplus`}},
		{"bad name", "name: a b\n",
			[]string{`x.yaml:1: name = "a b": must be non-empty and use only A-Z a-z 0-9 _ . -`}},
		// A longer name made train create runs/ and then fail to make the
		// run directory inside it: file name too long.
		{"name too long", "name: " + strings.Repeat("a", 201) + "\n",
			[]string{`x.yaml:1: name = "aaa`, `: is 201 bytes, at most 200: it names the run's directory`}},
		{"train range outside test range", "task:\n  sinusoid:\n    train_amplitudes: [[0.05, 1]]\n",
			[]string{`x.yaml:3: task.sinusoid.train_amplitudes[0] = [0.05, 1]: must be [lo, hi] with lo < hi inside test_amplitudes [0.1, 5]`}},
		{"train ranges overlap", "task:\n  sinusoid:\n    train_amplitudes:\n      - [0.1, 1]\n      - [0.5, 2]\n",
			[]string{`x.yaml:5: task.sinusoid.train_amplitudes[1] = [0.5, 2]: must not overlap train_amplitudes[0] = [0.1, 1]`}},
		{"no train ranges", "task:\n  sinusoid:\n    train_amplitudes: []\n",
			[]string{`x.yaml:3: task.sinusoid.train_amplitudes = []: must be a non-empty list`}},
		{"x range empty", "task:\n  sinusoid:\n    x_max: -5\n",
			[]string{`x.yaml:3: task.sinusoid.x_max = -5: must be > x_min (-5)`}},
		{"default out of new range has no line", "task:\n  sinusoid:\n    test_amplitudes: [1, 5]\n",
			[]string{`x.yaml: task.sinusoid.train_amplitudes[0] = [0.1, 1.05]: must be [lo, hi] with lo < hi inside test_amplitudes [1, 5]`}},
		{"all errors reported", "inner:\n  alpha: -1\nmeta:\n  batch: 0\n  optimizer: rmsprop\n",
			[]string{`x.yaml:2: inner.alpha = -1: must be > 0`, `x.yaml:4: meta.batch = 0: must be in [1, 10000]`,
				`x.yaml:5: meta.optimizer = "rmsprop": must be one of adam, sgd`}},
		{"empty file", "",
			[]string{`x.yaml:1: empty file: want a YAML mapping of config fields`}},
		{"comments only", "# nothing\n",
			[]string{`x.yaml:1: empty file: want a YAML mapping of config fields`}},
		{"null document", "---\n",
			[]string{`x.yaml:2: document: cannot use "" (null): want a mapping (keys: name, algorithm`}},
		{"two documents", "algorithm: maml\n---\norder: first\n",
			[]string{`x.yaml:2: a second YAML document: want exactly one`}},
		{"duplicate key", "inner:\n  alpha: 0.1\n  alpha: 0.2\n",
			[]string{`x.yaml:3: inner.alpha: duplicate key (first at line 2): each key may appear only once`}},
		{"duplicate top-level key", "seed: 1\nseed: 2\n",
			[]string{`x.yaml:2: seed: duplicate key (first at line 1)`}},
		{"syntax error", "inner:\n  alpha: 1\n   steps: 2\n",
			[]string{`x.yaml:3: mapping values are not allowed`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

// TestBuiltinSummary: every built-in config has a short summary.
func TestBuiltinSummary(t *testing.T) {
	for _, name := range BuiltinNames() {
		s, err := BuiltinSummary(name)
		if err != nil || len(s) < 20 || len(s) > 100 || strings.HasPrefix(s, name+":") || strings.Contains(s, "#") {
			t.Errorf("%s: summary %q, %v", name, s, err)
		}
	}
	if got, _ := BuiltinSummary("sine_quick"); got != "a short TR-MAML run on sinusoid regression with K = 5, the CLI's built-in default" {
		t.Errorf("sine_quick: %q", got)
	}
	if _, err := BuiltinSummary("nope"); err == nil || !strings.Contains(err.Error(), "sine_quick") {
		t.Errorf("unknown name: %v", err)
	}
}

// TestCVaRAlphaNaN: a NaN level is refused once, as not finite; it was also
// reported as repeating the level at index -1 (NaN equals no level, so the
// search for an earlier equal one found none).
func TestCVaRAlphaNaN(t *testing.T) {
	t.Parallel()
	_, err := Parse("x.yaml", []byte("eval:\n  cvar_alpha: [0.5, .nan]\n"))
	want := "x.yaml:2: eval.cvar_alpha[1] = NaN: must be a finite number in (0, 1)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want exactly %q", err, want)
	}
}
