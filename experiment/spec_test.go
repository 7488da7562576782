package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
)

const tinyBase = `name: tiny
model: {kind: mlp, mlp: {hidden: [8]}}
meta: {iterations: 20, batch: 10}
eval: {every: 10, instances: 490, train_instances: 100, batch: 245, query: 5}
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadRefusals(t *testing.T) {
	t.Parallel()
	var levels []string
	for i := 1; i <= 60; i++ {
		levels = append(levels, strconv.FormatFloat(float64(i)/100, 'g', -1, 64))
	}
	levels60 := strings.Join(levels, ",")
	cases := []struct {
		body string
		want []string
	}{
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\ncolour: red\n", []string{"exp.yaml:6", "colour"}},
		{"name: x\nbase: base.yaml\nalgorithms: [reptile]\norders: [second]\nseeds: [1]\n", []string{"exp.yaml:3", "algorithms", "trmaml_entropic", "cvar"}},
		{"name: x\nbase: base.yaml\nalgorithms: [cvar]\norders: [second]\nseeds: [1]\nsweep: {cvar.level: [0.5, 0]}\n", []string{"cvar.level = 0", "(0, 1]"}},
		{"name: x\nbase: base.yaml\nalgorithms: [cvar]\norders: [second]\nseeds: [1]\nsweep: {cvar.level: [0.5, 0.5]}\n", []string{"exp.yaml:6", "repeated"}},
		{"name: x\nbase: base.yaml\nalgorithms: [cvar]\norders: [second]\nseeds: [1]\nsweep: {cvar.level: []}\n", []string{"exp.yaml:6", "non-empty list"}},
		{"name: x\nbase: base.yaml\nalgorithms: [cvar]\norders: [second]\nseeds: [1]\nsweep: {nope.x: [1]}\n", []string{"exp.yaml:6", `unknown field "nope"`}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [third]\nseeds: [1]\n", []string{"exp.yaml:4", "orders"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: []\n", []string{"exp.yaml:5", "seeds"}},
		{"name: x\nbase: nosuch\nalgorithms: [maml]\norders: [second]\nseeds: [1]\n", []string{"exp.yaml:2", "base", "nosuch"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [one]\n", []string{"exp.yaml:5", "seeds[0]"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1, 1]\n", []string{"exp.yaml:5", "seeds", "repeat"}},
		// The strict decoder: no truncated floats, no wrapped seeds, one
		// document, a message for an empty file, bases that say what is wrong.
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1.5]\n", []string{"exp.yaml:5", `seeds[0]: cannot use "1.5" (float): want a non-negative integer`}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\niterations: 1.5\n", []string{"exp.yaml:6", `iterations: cannot use "1.5" (float): want an integer`}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [18446744073709551616]\n", []string{"exp.yaml:5", "seeds[0]", "want a non-negative integer"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [-1]\n", []string{"exp.yaml:5", "seeds[0]"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\n---\nname: y\n", []string{"exp.yaml:6: a second YAML document: want exactly one"}},
		{"", []string{"exp.yaml:1: empty file"}},
		{"name: x\nbase: /etc/base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\n", []string{"exp.yaml:2", "base", "must be relative to the experiment file, not absolute"}},
		{"name: x\nbase: sub\nalgorithms: [maml]\norders: [second]\nseeds: [1]\n", []string{"exp.yaml:2", "base", "sub is a directory"}},
		{"name: x\nbase: other.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\n", []string{"exp.yaml:2", "other.yaml: no such file"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\niterations: 200000000\n", []string{"exp.yaml:6", "iterations = 200000000: must be in [0, 100000000]"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\nname: y\n", []string{"exp.yaml:6", "duplicate key"}},
		// A sweep value long enough that a cell's directory name could not
		// be made: that cell failed after the others had trained.
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\nsweep: {eval.cvar_alpha: [[" + levels60 + "], [0.5]]}\n", []string{"exp.yaml", "run x-maml_cvar_alpha0.01x0.02x", "at most 200: it names the run's directory"}},
		// The slurm: section passes sbatch long options through, checked
		// like every other field.
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\nslurm:\n  partition: cpu\n  partiton: gpu\n", []string{"exp.yaml:8", "slurm", `"partiton" is not an sbatch long option`}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\nslurm: {time: \"1:00:00\"}\n", []string{"exp.yaml:6", "--time is set by trmaml: use -time"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\nslurm: {partition: [a, b]}\n", []string{"exp.yaml:6", "partition", "want a single value"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\nslurm: [partition]\n", []string{"exp.yaml:6", "mapping of sbatch long options"}},
		{"name: x\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\nslurm: {qos: \"-high\"}\n", []string{"exp.yaml:6", "not starting with -"}},
	}
	for _, c := range cases {
		dir := writeFiles(t, map[string]string{"exp.yaml": c.body, "base.yaml": tinyBase})
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		_, _, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
		if err == nil {
			t.Errorf("accepted:\n%s", c.body)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	}
}

// TestSweep: a sweep axis under a method's section (cvar.level) expands
// that method's runs only, named and placed by level;
// an axis over a common field (inner.steps) multiplies every method's runs
// and names them by its last key and value.
func TestSweep(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"base.yaml": tinyBase,
		"exp.yaml":   "name: x\nbase: base.yaml\nalgorithms: [maml, trmaml_entropic, cvar]\norders: [second]\nseeds: [1, 2]\nsweep: {cvar.level: [1, 0.05]}\n",
		"steps.yaml": "name: y\nbase: base.yaml\nalgorithms: [maml, cvar]\norders: [second]\nseeds: [1]\nsweep: {inner.steps: [1, 2], cvar.level: [0.5]}\n",
		"bad.yaml":   "name: x\nbase: base.yaml\nalgorithms: [cvar]\norders: [second]\nseeds: [1]\nsweep:\n  cvar.levle: [1]\n  inner.steps: [1.5]\n"})
	_, cfgs, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range Jobs(cfgs, "out") {
		got = append(got, fmt.Sprintf("%s %s %s %g", filepath.Base(j.Dir), j.Config.Name, j.Config.Algorithm, j.Config.Settings("cvar").(*metalearn.CVaR).Level))
	}
	want := []string{
		"maml-second-seed1 x-maml-second maml 0.1", "maml-second-seed2 x-maml-second maml 0.1",
		"trmaml_entropic-second-seed1 x-trmaml_entropic-second trmaml_entropic 0.1", "trmaml_entropic-second-seed2 x-trmaml_entropic-second trmaml_entropic 0.1",
		"cvar1-second-seed1 x-cvar1-second cvar 1", "cvar1-second-seed2 x-cvar1-second cvar 1",
		"cvar0.05-second-seed1 x-cvar0.05-second cvar 0.05", "cvar0.05-second-seed2 x-cvar0.05-second cvar 0.05",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("jobs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	_, cfgs, err = Load(filepath.Join(dir, "steps.yaml"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, j := range Jobs(cfgs, "out") {
		got = append(got, fmt.Sprintf("%s %d %g", filepath.Base(j.Dir), j.Config.Inner.Steps, j.Config.Settings("cvar").(*metalearn.CVaR).Level))
	}
	want = []string{"maml_steps1-second-seed1 1 0.1", "maml_steps2-second-seed1 2 0.1", "cvar0.5_steps1-second-seed1 1 0.5", "cvar0.5_steps2-second-seed1 2 0.5"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("jobs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	_, _, err = Load(filepath.Join(dir, "bad.yaml"), run.Options{})
	for _, w := range []string{`bad.yaml:7: unknown field "levle" in sweep cvar (allowed: level, p_lr)`, "bad.yaml:8: sweep inner.steps: cannot use \"1.5\" (float): want an integer"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("bad sweep: error %v does not contain %q", err, w)
		}
	}
}

// TestSweepRefusesAxesNoRunReads: an axis over a field the experiment file
// sets itself, over a method that is not run or over another task family's
// section would be overwritten or ignored, leaving runs that differ only
// in their names; each is refused at its line, naming what to write.
func TestSweepRefusesAxesNoRunReads(t *testing.T) {
	t.Parallel()
	head := "name: x\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [second]\nseeds: [1]\n"
	cases := []struct{ body, want string }{
		{"sweep: {seed: [1, 2]}\n", `exp.yaml:6: sweep.seed = [1, 2]: is set by the experiment file itself: list the seeds under seeds`},
		{"sweep: {algorithm: [cvar]}\n", `exp.yaml:6: sweep.algorithm = [cvar]: is set by the experiment file itself: list the methods under algorithms`},
		{"sweep: {order: [first]}\n", `exp.yaml:6: sweep.order = [first]: is set by the experiment file itself: list the orders under orders`},
		{"sweep: {name: [a, b]}\n", `exp.yaml:6: sweep.name = [a, b]: is set by the experiment file itself`},
		{"iterations: 30\nsweep:\n  inner.steps: [1, 2]\n  meta.iterations: [10, 20]\n", `exp.yaml:9: sweep.meta.iterations = [10, 20]: would be overridden by iterations: 30`},
		{"sweep: {cvar.level: [0.5, 0.1]}\n", `exp.yaml:6: sweep.cvar.level = [0.5, 0.1]: is a setting of cvar, which is not among algorithms [maml trmaml]`},
		{"sweep: {task.linreg.tasks: [[{theta: [1], variances: [1], noise: 0, mass: 1}]]}\n", `exp.yaml:6: sweep.task.linreg.tasks = [theta1_variances1_noise0_mass1]: is a setting of task family linreg, and the runs are of sinusoid`},
		// linreg runs read their tasks, the sinusoid runs do not: both of
		// those would be the same run twice.
		{"sweep:\n  task.family: [sinusoid, linreg]\n  task.linreg.tasks: [[{theta: [1], variances: [1], noise: 0, mass: 1}], [{theta: [2], variances: [1], noise: 0, mass: 1}]]\n",
			`exp.yaml:6: sweep = "x-maml_familysinusoid_taskstheta2_variances1_noise0_mass1-second": is the same run as x-maml_familysinusoid_taskstheta1_variances1_noise0_mass1-second (seed 1)`},
	}
	for _, c := range cases {
		dir := writeFiles(t, map[string]string{"exp.yaml": head + c.body, "base.yaml": tinyBase})
		_, _, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
	// The same axes where runs read them are accepted.
	for _, body := range []string{"sweep: {inner.steps: [1, 2], trmaml.p_lr: [1.0e-4, 2.0e-4]}\n", "sweep: {meta.iterations: [10, 20]}\n"} {
		dir := writeFiles(t, map[string]string{"exp.yaml": head + body, "base.yaml": tinyBase})
		if _, _, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{}); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// TestRunGridResumes runs a 2x1x2 grid with two workers, then re-runs it:
// finished runs are skipped untouched and an unfinished one is resumed.
