package run

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/models/mlp"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// tinyConfig is a seconds-long TR-MAML run on the paper's task sets.
func tinyConfig() configs.Config {
	c := configs.Defaults()
	c.Name = "tiny"
	c.Algorithm = "trmaml"
	mlp.Section(c).Hidden = []int{8}
	c.Meta.Iterations = 30
	c.Meta.Batch = 10
	c.Eval.Every = 10
	c.Eval.Instances = 490
	c.Eval.TrainInstances = 100
	c.Eval.Batch = 245
	c.Eval.Query = 5
	return c
}

func readResult(t *testing.T, path string) rundir.Result {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r rundir.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTrainDeterministic: the same config and seed give the same result.json
// (but for wall-clock timing), model and metrics; a re-evaluation with the
// run's seed reproduces the result's statistics.
func TestTrainDeterministic(t *testing.T) {
	t.Parallel()
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, d := range dirs {
		if _, err := Train(context.Background(), tinyConfig(), d, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := readResult(t, filepath.Join(dirs[0], rundir.ResultFile)), readResult(t, filepath.Join(dirs[1], rundir.ResultFile))
	if a.Timing.Engine != graph.Engine() || a.Timing.Procs != runtime.GOMAXPROCS(0) {
		t.Errorf("timing records engine %q on %d procs, want %q on %d", a.Timing.Engine, a.Timing.Procs, graph.Engine(), runtime.GOMAXPROCS(0))
	}
	a.Timing, b.Timing = rundir.Timing{}, rundir.Timing{}
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same seed wrote different results")
	}
	for _, f := range []string{rundir.ModelFile, rundir.PFile, rundir.TasksFile, rundir.ConfigFile} {
		x, _ := os.ReadFile(filepath.Join(dirs[0], f))
		y, _ := os.ReadFile(filepath.Join(dirs[1], f))
		if len(x) == 0 || string(x) != string(y) {
			t.Errorf("%s differs between identical runs (or is empty)", f)
		}
	}
	if len(a.MetaTest.PerTask) != 490 || len(a.MetaTrain.PerTask) != 100 || len(a.FinalP) != 100 {
		t.Errorf("per-task lengths %d, %d and p length %d, want 490, 100, 100",
			len(a.MetaTest.PerTask), len(a.MetaTrain.PerTask), len(a.FinalP))
	}

	ev, err := Evaluate(context.Background(), dirs[0], 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev.MetaTest, a.MetaTest) || !reflect.DeepEqual(ev.MetaTrain, a.MetaTrain) {
		t.Errorf("eval -run gave meta-test mean %v, result.json %v", ev.MetaTest.Mean, a.MetaTest.Mean)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], rundir.EvalFile)); err != nil {
		t.Error(err)
	}

	c := tinyConfig()
	c.Seed = 2
	other := filepath.Join(t.TempDir(), "c")
	if _, err := Train(context.Background(), c, other, Options{}); err != nil {
		t.Fatal(err)
	}
	if r := readResult(t, filepath.Join(other, rundir.ResultFile)); r.MetaTest.Mean == a.MetaTest.Mean {
		t.Error("a different seed gave the same meta-test mean")
	}
}

func TestTrainRefusesExistingRunDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Train(context.Background(), tinyConfig(), dir, Options{}); !errors.Is(err, rundir.ErrExists) {
		t.Fatalf("Train into a non-empty directory: %v, want rundir.ErrExists", err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Error("an existing file was changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries after a refused run, want 1", len(entries))
	}
}

// TestTrainStopsOnNonFinite drives a run to divergence: it must stop with
// ErrNonFinite, keep the last checkpoint and write no result.
func TestTrainStopsOnNonFinite(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.Optimizer = "sgd"
	c.Meta.LR = 1e8
	c.Meta.Iterations = 200
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Train(context.Background(), c, dir, Options{})
	if !errors.Is(err, metalearn.ErrNonFinite) {
		t.Fatalf("diverging run returned %v, want ErrNonFinite", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	var ck struct {
		State metalearn.State `json:"state"`
	}
	if err := json.Unmarshal(raw, &ck); err != nil {
		t.Fatalf("checkpoint unreadable: %v", err)
	}
	if len(ck.State.W) == 0 {
		t.Error("checkpoint has no parameters")
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ResultFile)); !errors.Is(err, os.ErrNotExist) {
		t.Error("a diverged run wrote result.json")
	}
	if m, _ := os.ReadFile(filepath.Join(dir, rundir.MetricsFile)); !strings.HasPrefix(string(m), "iteration,") {
		t.Error("metrics.csv missing after divergence")
	}
}

// unfinish turns the finished run of c in dir into an unfinished one of
// iterations in all, as if stopped after its last checkpoint: the config
// file asks for more, result.json is gone, and the directory is sealed so.
// It returns the edited config.
func unfinish(t *testing.T, c configs.Config, dir string, iterations int) configs.Config {
	t.Helper()
	c.Meta.Iterations = iterations
	yml, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.ConfigFile), yml, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, rundir.ResultFile)); err != nil {
		t.Fatal(err)
	}
	// Bound and sealed afresh: this test is about what resume does with
	// such a state, not about the bindings.
	rebind(t, dir)
	return c
}

// TestResumeMatchesUninterruptedRun stops a run after its checkpoint at
// iteration 20 (by copying the directory then) and resumes it: the result
// must equal the uninterrupted run's, but for timing.
func TestResumeMatchesUninterruptedRun(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.Iterations = 20
	partial := filepath.Join(t.TempDir(), "partial")
	if _, err := Train(context.Background(), c, partial, Options{}); err != nil {
		t.Fatal(err)
	}
	c = unfinish(t, c, partial, 30)
	// A metrics row past the checkpoint, as a crash between writes would leave.
	m, _ := os.ReadFile(filepath.Join(partial, rundir.MetricsFile))
	os.WriteFile(filepath.Join(partial, rundir.MetricsFile), append(m, []byte("25,1,1,1,1,1,1,1,1,1\n")...), 0o644)

	resumed, err := Resume(context.Background(), partial, Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Train(context.Background(), c, filepath.Join(t.TempDir(), "full"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "resumed run", resumed, full)
	m, _ = os.ReadFile(filepath.Join(partial, rundir.MetricsFile))
	if rows := strings.Count(string(m), "\n"); rows != 1+4 || strings.Contains(string(m), "\n25,") {
		t.Errorf("resumed metrics.csv:\n%s\nwant rows for iterations 0, 10, 20, 30", m)
	}
}
