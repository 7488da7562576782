package run

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/rundir"
)

// sameResult compares two results but for timing.
func sameResult(t *testing.T, what string, got, want *rundir.Result) {
	t.Helper()
	g, w := *got, *want
	g.Timing, w.Timing = rundir.Timing{}, rundir.Timing{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: meta-test mean %v worst %v, uninterrupted %v %v", what, g.MetaTest.Mean, g.MetaTest.Worst, w.MetaTest.Mean, w.MetaTest.Worst)
	}
}

// TestResumeBeforeFirstCheckpoint: a run killed after writing config.yaml
// but before its first checkpoint (during the iteration-0 evaluation, with
// a write interrupted half-way) is finished by Resume from iteration 0, with
// the uninterrupted run's result; the interrupted write's temporary file is
// removed.
func TestResumeBeforeFirstCheckpoint(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	full, err := Train(context.Background(), c, filepath.Join(t.TempDir(), "full"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "killed")
	os.MkdirAll(dir, 0o755)
	yml, _ := c.Marshal()
	os.WriteFile(filepath.Join(dir, rundir.ConfigFile), yml, 0o644)
	os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(rundir.MetricsHeader+"0,1,,,1,1,1,1,1,1\n"), 0o644)
	stray := filepath.Join(dir, ".checkpoint.json.tmp123456")
	os.WriteFile(stray, []byte(`{"state":{"Itera`), 0o644)

	if _, err := Train(context.Background(), c, dir, Options{}); !errors.Is(err, rundir.ErrExists) || !strings.Contains(err.Error(), "trmaml resume -run") {
		t.Errorf("train into the killed run: %v, want a refusal pointing to resume", err)
	}
	res, err := Resume(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("resume of a run killed before its first checkpoint: %v", err)
	}
	sameResult(t, "resumed from iteration 0", res, full)
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Error("the interrupted write's temporary file is still there")
	}
}

// TestKillAndResume kills a training process with SIGKILL at chosen
// moments (right after config.yaml appears, before the first checkpoint;
// after the first checkpoint) and finishes it with Resume: the result equals
// the uninterrupted run's. scripts/killtest.sh does the same at random
// moments, many times.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv("TRMAML_TRAIN_INTO"); dir != "" {
		c := tinyConfig()
		c.Meta.Iterations = 300
		c.Eval.Every = 100
		if _, err := Train(context.Background(), c, dir, Options{}); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("starts training processes")
	}
	c := tinyConfig()
	c.Meta.Iterations = 300
	c.Eval.Every = 100
	full, err := Train(context.Background(), c, filepath.Join(t.TempDir(), "full"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{rundir.ConfigFile, rundir.CheckpointFile} {
		dir := filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(os.Args[0], "-test.run", "^TestKillAndResume$")
		cmd.Env = append(os.Environ(), "TRMAML_TRAIN_INTO="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, when)); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		if _, err := os.Stat(filepath.Join(dir, rundir.ResultFile)); err == nil {
			t.Logf("kill after %s came too late: the run had finished", when)
		}
		res, err := Resume(context.Background(), dir, Options{})
		if err != nil {
			t.Fatalf("killed after %s: resume: %v", when, err)
		}
		sameResult(t, "killed after "+when, res, full)
	}
}

// TestSecondWriterRefused: while one process holds a run directory, train,
// resume and eval of it are refused with a message naming the holder.
func TestSecondWriterRefused(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Train(context.Background(), c, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, rundir.ResultFile))
	lock, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for name, f := range map[string]func() error{
		"resume": func() error { _, err := Resume(context.Background(), dir, Options{}); return err },
		"eval":   func() error { _, err := Evaluate(context.Background(), dir, 0, Options{}); return err },
	} {
		if err := f(); !errors.Is(err, dirlock.ErrHeld) || !strings.Contains(err.Error(), "pid ") {
			t.Errorf("%s while another process holds the directory: %v", name, err)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, rundir.ResultFile)); string(after) != string(before) {
		t.Error("a refused writer changed result.json")
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	os.MkdirAll(fresh, 0o755)
	l2, err := dirlock.Acquire(fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release()
	if _, err := Train(context.Background(), c, fresh, Options{}); !errors.Is(err, dirlock.ErrHeld) {
		t.Errorf("train into an empty directory another process holds: %v", err)
	}
}

// TestResumeOverride: resume -override extends an unfinished run, and the
// change is recorded in the manifest and result.json; a field that may not
// change mid-run, and any change to a finished run, are refused; a kill
// between the override's two writes is completed by the same command.
func TestResumeOverride(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.Iterations = 20
	stopped := func() string {
		dir := filepath.Join(t.TempDir(), "run")
		if _, err := Train(ctxtest.StopAfter(context.Background(), 15), c, dir, Options{}); !errors.Is(err, ErrInterrupted) {
			t.Fatalf("interrupted run: %v", err)
		}
		return dir
	}
	dir := stopped()
	if _, err := Resume(context.Background(), dir, Options{}, "inner.alpha=0.5"); err == nil || !strings.Contains(err.Error(), "inner.alpha may not be changed here") {
		t.Errorf("override of inner.alpha: %v, want a refusal", err)
	}
	res, err := Resume(context.Background(), dir, Options{}, "meta.iterations=30")
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 30 || !reflect.DeepEqual(res.Overrides, []string{"meta.iterations=30"}) {
		t.Errorf("overridden run: %d iterations, overrides %v", res.Iterations, res.Overrides)
	}
	s, err := rundir.Verify(dir)
	if err != nil || len(s.Overrides) != 1 || s.Overrides[0].Iteration != 15 || s.Config.Meta.Iterations != 30 {
		t.Errorf("manifest after the override: %+v, %v", s, err)
	}
	if _, err := Resume(context.Background(), dir, Options{}, "meta.iterations=40"); err == nil || !strings.Contains(err.Error(), "finished run") {
		t.Errorf("override of a finished run: %v, want a refusal", err)
	}

	// Killed after writing config.yaml, before sealing it.
	dir = stopped()
	c2 := c
	c2.Meta.Iterations = 30
	yml, _ := c2.Marshal()
	os.WriteFile(filepath.Join(dir, rundir.ConfigFile), yml, 0o644)
	if _, err := Resume(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "meta.iterations: 20 when sealed, now 30") {
		t.Errorf("resume of the half-done override: %v, want the field named", err)
	}
	again, err := Resume(context.Background(), dir, Options{}, "meta.iterations=30")
	if err != nil {
		t.Fatalf("the same override again: %v", err)
	}
	sameResult(t, "override completed after a kill", again, res)
}

// TestResumeFinishedRunWritesNothing: resume of a finished, sealed run has
// nothing to do: it returns the sealed result and leaves every file as it
// was (it used to evaluate the final checkpoint again and rewrite
// result.json, with new timings, and the manifest).
func TestResumeFinishedRunWritesNothing(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.Iterations = 10
	dir := filepath.Join(t.TempDir(), "run")
	want, err := Train(context.Background(), c, dir, Options{Warnings: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	before := dirSnapshot(t, dir, "")
	var warnings strings.Builder
	got, err := Resume(context.Background(), dir, Options{Warnings: &warnings})
	if err != nil {
		t.Fatalf("resume of a finished run: %v", err)
	}
	if after := dirSnapshot(t, dir, ""); after != before {
		t.Errorf("resume of a finished run changed its files:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resume of a finished run returned\n%+v\nwant the sealed result\n%+v", got, want)
	}
	if !strings.Contains(warnings.String(), dir+" is finished") {
		t.Errorf("warnings %q, want them to say the run is finished", warnings.String())
	}
}
