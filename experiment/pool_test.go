package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

func TestRunGridResumes(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"exp.yaml":  "name: g\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [second]\nseeds: [1, 2]\n",
		"base.yaml": tinyBase,
	})
	_, cfgs, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 4 {
		t.Fatalf("%d runs, want 4", len(cfgs))
	}
	out := filepath.Join(dir, "out")
	jobs := Jobs(cfgs, out)
	var log bytes.Buffer
	if err := Run(context.Background(), out, jobs, 2, &log, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if _, err := os.Stat(filepath.Join(j.Dir, rundir.ResultFile)); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(log.String(), "experiment: 80/80 iterations over 4 runs") {
		t.Errorf("no overall progress line in:\n%s", log.String())
	}

	keep, _ := os.ReadFile(filepath.Join(jobs[0].Dir, rundir.MetricsFile))
	// An interrupted run, checkpoint at its end: killed before finishing.
	os.Remove(filepath.Join(jobs[1].Dir, rundir.ResultFile))
	os.Remove(filepath.Join(jobs[1].Dir, rundir.ModelFile))
	os.Remove(filepath.Join(jobs[1].Dir, rundir.ManifestFile))
	if err := rundir.Seal(jobs[1].Dir, false); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), out, jobs, 2, &log, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(jobs[0].Dir, rundir.MetricsFile)); string(again) != string(keep) {
		t.Error("a finished run was redone")
	}
	if _, err := os.Stat(filepath.Join(jobs[1].Dir, rundir.ResultFile)); err != nil {
		t.Errorf("the interrupted run was not finished: %v", err)
	}
}

// TestRunRefusesChangedConfigAndRestartsUncheckpointed: a run directory
// made from another config is refused (the experiment file was edited), and
// one that stopped before its first checkpoint is started over.
func TestRunRefusesChangedConfigAndRestartsUncheckpointed(t *testing.T) {
	t.Parallel()
	dir, cfgs := oneRunGrid(t)
	out := filepath.Join(dir, "out")
	jobs := Jobs(cfgs, out)
	var log bytes.Buffer
	if err := Run(context.Background(), out, jobs, 1, &log, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	// Only config.yaml left, as after a kill during the first evaluation.
	for _, f := range []string{rundir.ResultFile, rundir.CheckpointFile, rundir.MetricsFile, rundir.PFile, rundir.ModelFile, rundir.ManifestFile} {
		os.Remove(filepath.Join(jobs[0].Dir, f))
	}
	if err := Run(context.Background(), out, jobs, 1, &log, false, run.Options{}); err != nil {
		t.Fatalf("run stopped before its first checkpoint was not restarted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(jobs[0].Dir, rundir.ResultFile)); err != nil {
		t.Fatal(err)
	}
	jobs[0].Config.Meta.Iterations = 40
	if err := Run(context.Background(), out, jobs, 1, &log, false, run.Options{}); err == nil || !strings.Contains(err.Error(), "different config") {
		t.Fatalf("edited experiment: error %v, want a refusal", err)
	}
}

// TestSameConfigComparesWhatRunsRead: a run directory continues under a
// job whose config differs only in the sections of other methods and
// families (an ablation base file replaced by a sweep leaves cvar's and
// entropic TR-MAML's p_lr elsewhere in a TR-MAML run); a change in its
// own method's or family's section, or in a common field, is refused.
func TestSameConfigComparesWhatRunsRead(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"base.yaml": tinyBase,
		"exp.yaml": "name: g\nbase: base.yaml\nalgorithms: [trmaml]\norders: [second]\nseeds: [1]\n"})
	_, cfgs, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	job := Jobs(cfgs, filepath.Join(dir, "out"))[0]
	raw, err := job.Config.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(job.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(job.Dir, rundir.ConfigFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		edit   func(c *configs.Config)
		refuse bool
	}{
		{"unchanged", func(*configs.Config) {}, false},
		{"cvar.p_lr", func(c *configs.Config) { c.Settings("cvar").(*metalearn.CVaR).PLR *= 2 }, false},
		{"trmaml_entropic.p_lr", func(c *configs.Config) { c.Settings("trmaml_entropic").(*metalearn.EntropicTRMAML).PLR *= 2 }, false},
		{"task.linreg", func(c *configs.Config) { c.Task.Sections["linreg"] = configs.Defaults().Task.Sections["sinusoid"] }, false},
		{"trmaml.p_lr", func(c *configs.Config) { c.Settings("trmaml").(*metalearn.TRMAML).PLR *= 2 }, true},
		{"task.sinusoid", func(c *configs.Config) { c.Task.Sections["sinusoid"] = configs.Defaults().Task.Sections["linreg"] }, true},
		{"inner.steps", func(c *configs.Config) { c.Inner.Steps++ }, true},
	}
	for _, tc := range cases {
		j := job
		j.Config = job.Config.Clone()
		tc.edit(&j.Config)
		err := sameConfig(j)
		if got := err != nil; got != tc.refuse {
			t.Errorf("%s changed: error %v, want refused %v", tc.name, err, tc.refuse)
		}
	}
}

// TestRunRefusesForeignAndBusyDirectories: an experiment into a run
// directory, into a directory holding other runs, or into one another
// process is writing is refused before anything is written.
func TestRunRefusesForeignAndBusyDirectories(t *testing.T) {
	t.Parallel()
	dir, cfgs := oneRunGrid(t)
	var log bytes.Buffer

	runDir := filepath.Join(dir, "finished")
	if _, err := run.Train(context.Background(), cfgs[0], runDir, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), runDir, Jobs(cfgs, runDir), 1, &log, false, run.Options{}); !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "is a run directory") {
		t.Errorf("into a run directory: %v", err)
	}

	mixed := filepath.Join(dir, "mixed")
	os.MkdirAll(filepath.Join(mixed, "trmaml-second-seed9"), 0o755)
	if err := Run(context.Background(), mixed, Jobs(cfgs, mixed), 1, &log, false, run.Options{}); !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "trmaml-second-seed9") {
		t.Errorf("into a directory with other runs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mixed, "maml-second-seed1")); err == nil {
		t.Error("a refused experiment started a run")
	}

	busy := filepath.Join(dir, "busy")
	os.MkdirAll(busy, 0o755)
	lock, err := dirlock.Acquire(busy)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), busy, Jobs(cfgs, busy), 1, &log, false, run.Options{}); !errors.Is(err, dirlock.ErrHeld) || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("into a locked directory: %v", err)
	}
	lock.Release()
}

// FuzzParse: no experiment file makes the decoder panic; an accepted one
// expands into valid configs.
func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\nbase: sine_quick\nalgorithms: [maml]\norders: [second]\nseeds: [1]\n"))
	f.Add([]byte("name: q\nbase: sine_quick\nalgorithms: [maml, trmaml]\norders: [second, first]\nseeds: [1, 2]\niterations: 6000\n"))
	f.Add([]byte("seeds: [1.5]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, cfgs, err := Parse("f.yaml", data, run.Options{})
		if err != nil {
			return
		}
		for _, c := range cfgs {
			if err := c.Validate(); err != nil {
				t.Fatalf("accepted an invalid config: %v", err)
			}
		}
	})
}

// oneRunGrid writes a grid of one tiny MAML run (exp.yaml on tinyBase) into
// a new directory and returns the directory and the grid's config.
func oneRunGrid(t *testing.T) (string, []configs.Config) {
	t.Helper()
	dir := writeFiles(t, map[string]string{
		"exp.yaml":  "name: g\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1]\n",
		"base.yaml": tinyBase,
	})
	_, cfgs, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, cfgs
}
