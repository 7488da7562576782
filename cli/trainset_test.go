package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/rundir"
)

// TestTrainSetAndBuiltinName trains a built-in config by name under -set
// and checks that config.yaml records the resolved config, and that bad
// settings are refused with the messages of config files, before anything
// is written.
func TestTrainSetAndBuiltinName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var out, errOut bytes.Buffer
	err := dispatch([]string{"train", "-config", "sine_quick", "-set", "meta.iterations=200", "-set", "eval.every=100",
		"-set", "eval.instances=490", "-set", "eval.train_instances=100", "-set", "task.sinusoid.x_max=4.5", "-out", dir}, &out, &errOut)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, errOut.String())
	}
	if h := strings.SplitAfter(mustRead(t, filepath.Join(dir, rundir.MetricsFile)), "\n")[0]; h != rundir.MetricsHeaderFor("mse") {
		t.Errorf("metrics.csv header %q, want the one with units", h)
	}
	// config.yaml is the built-in's, changed in exactly these lines.
	got := strings.Split(mustRead(t, filepath.Join(dir, rundir.ConfigFile)), "\n")
	base, _ := configs.Builtin("sine_quick")
	raw, err := base.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	was := strings.Split(string(raw), "\n")
	if len(got) != len(was) {
		t.Fatalf("config.yaml has %d lines, the built-in %d", len(got), len(was))
	}
	var changed []string
	for i := range got {
		if got[i] != was[i] {
			changed = append(changed, strings.TrimSpace(got[i]))
		}
	}
	if want := "x_max: 4.5|iterations: 200|every: 100|instances: 490|train_instances: 100"; strings.Join(changed, "|") != want {
		t.Errorf("config.yaml changed lines %q, want %q", changed, want)
	}
	if _, err := configs.Load(filepath.Join(dir, rundir.ConfigFile)); err != nil {
		t.Error(err)
	}

	file := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(file, []byte("name: c\nalgorithm: maml\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-set", "meta.iteratons=5"}, `-set meta.iteratons=5: unknown field "iteratons" in meta (allowed: iterations, batch, optimizer,`},
		{[]string{"-set", "meta.iterations=0"}, "-set: meta.iterations = 0: must be in [1, 100000000]"},
		{[]string{"-set", "meta.iterations=many"}, `-set meta.iterations=many: meta.iterations: cannot use "many" (string): want an integer`},
		{[]string{"-set", "meta.iterations"}, "-set meta.iterations: want FIELD=VALUE"},
		{[]string{"-config", "sine_quik"}, "open sine_quik: no such file or directory, and no built-in config has that name (trmaml configs lists them)"},
		{[]string{"-config", file, "-set", "inner.steps=-1"}, "-set: inner.steps = -1"},
		{[]string{"-set", "eval.select=bogus"}, `-set: eval.select = "bogus": must be one of "", worst, mean, cvar`},
		// A section the run does not read: the change would vanish from config.yaml.
		{[]string{"-set", "cvar.level=0.3"}, "-set cvar.level=0.3: cvar.level: a run of this config does not read the cvar section (its algorithm is trmaml; set algorithm=cvar too to use it)"},
		{[]string{"-set", "task.omniglot.ways=20"}, "does not read the task.omniglot section (its task.family is sinusoid; set task.family=omniglot too"},
		{[]string{"-set", "model.conv4.filters=8"}, "does not read the model.conv4 section (its model.kind is mlp"},
		{[]string{"-set", "inner.anil.head=1"}, "does not read the inner.anil section (its inner.kind is sgd"},
	} {
		out := filepath.Join(t.TempDir(), "refused")
		err := dispatch(append(append([]string{"train"}, c.args...), "-out", out), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("train %v: %v, want %q", c.args, err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("train %v: refused, but made %s", c.args, out)
		}
	}
}

// TestConfigsListsBuiltins: one line per built-in config, each naming it.
func TestConfigsListsBuiltins(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch([]string{"configs"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	names := configs.BuiltinNames()
	if len(lines) != len(names)+1 {
		t.Fatalf("%d lines for %d configs:\n%s", len(lines), len(names), out.String())
	}
	for i, n := range names {
		if f := strings.Fields(lines[i]); f[0] != n || len(f) < 6 {
			t.Errorf("line %d: %q, want %s and its summary", i, lines[i], n)
		}
	}
}

// TestTrainSetSectionChosenLater: a method's setting is read when another
// -set chooses that method, in either order, and config.yaml records it.
func TestTrainSetSectionChosenLater(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run")
	err := dispatch([]string{"train", "-set", "cvar.level=0.3", "-set", "algorithm=cvar", "-set", "meta.iterations=10",
		"-set", "eval.every=10", "-out", out}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	yml, err := os.ReadFile(filepath.Join(out, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(yml), "algorithm: cvar") || !regexp.MustCompile(`(?m)^cvar:\n  level: 0.3$`).Match(yml) {
		t.Errorf("config.yaml does not record algorithm cvar at level 0.3:\n%s", yml)
	}
}
