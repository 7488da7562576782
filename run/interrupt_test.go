package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/rundir"
)

// afterChecks is a context that is done from its (n+1)-th Err call on: the
// training loop asks once per iteration, so a run under it stops after
// exactly n iterations, wherever that falls relative to the evaluations.
type afterChecks struct {
	context.Context
	n int
}

func (c *afterChecks) Err() error {
	if c.n == 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

// withoutElapsed drops metrics.csv's elapsed_seconds column, the one
// wall-clock value in it.
func withoutElapsed(csv string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(csv, "\n") {
		f := strings.Split(line, ",")
		if len(f) > 1 {
			f[1] = ""
		}
		b.WriteString(strings.Join(f, ","))
	}
	return b.String()
}

// TestInterruptCheckpointsAndResumes interrupts a run at iterations between
// evaluations, at an evaluation, before the first iteration and before the
// final evaluation, and once twice in a row: each time the run returns
// ErrInterrupted, leaves a checkpoint at that iteration and an unlocked
// directory, and the resumed run ends with the uninterrupted run's
// result.json, model.json, p.csv and metrics.csv (but for wall-clock time).
func TestInterruptCheckpointsAndResumes(t *testing.T) {
	c := tinyConfig() // 30 iterations, evaluated every 10
	fullDir := filepath.Join(t.TempDir(), "full")
	full, err := Train(c, fullDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := func(dir, f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, stops := range [][]int{{7}, {10}, {0}, {30}, {4, 9}, {13, 17}} {
		dir := filepath.Join(t.TempDir(), "run")
		at := 0
		for k, n := range stops {
			ctx := &afterChecks{Context: context.Background(), n: n}
			var err error
			if k == 0 {
				_, err = Train(c, dir, Options{Context: ctx})
			} else {
				_, err = Resume(dir, Options{Context: ctx})
			}
			at += n
			if !errors.Is(err, ErrInterrupted) {
				t.Fatalf("stops %v: got %v, want ErrInterrupted", stops, err)
			}
			ck, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			if ck.State.Iteration != at {
				t.Errorf("stops %v: checkpoint at iteration %d, want %d", stops, ck.State.Iteration, at)
			}
			lock, err := dirlock.Acquire(dir)
			if err != nil {
				t.Fatalf("stops %v: the interrupted run kept its lock: %v", stops, err)
			}
			lock.Release()
		}
		if _, err := os.Stat(filepath.Join(dir, rundir.ResultFile)); err == nil {
			t.Fatalf("stops %v: an interrupted run wrote %s", stops, rundir.ResultFile)
		}
		res, err := Resume(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, "run resumed after interrupts", res, full)
		for _, f := range []string{rundir.ModelFile, rundir.PFile} {
			if read(dir, f) != read(fullDir, f) {
				t.Errorf("stops %v: %s differs from the uninterrupted run's", stops, f)
			}
		}
		if got, want := withoutElapsed(read(dir, rundir.MetricsFile)), withoutElapsed(read(fullDir, rundir.MetricsFile)); got != want {
			t.Errorf("stops %v: metrics.csv\n%s\nwant\n%s", stops, got, want)
		}
	}
}

// TestResumeRefusesInconsistentPending: a checkpoint whose pending batches
// do not fit its iteration is refused, naming the field.
func TestResumeRefusesInconsistentPending(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Train(tinyConfig(), dir, Options{Context: &afterChecks{Context: context.Background(), n: 7}}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rundir.CheckpointFile)
	ck, err := rundir.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	ck.Pending.BatchN = 3
	raw, err := rundir.EncodeCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, raw, 0o644)
	reseal(t, dir)
	if _, err := Resume(dir, Options{}); err == nil || !strings.Contains(err.Error(), "pending: evaluated 0 and batch_n 3 do not fit iteration 7") {
		t.Errorf("got %v, want a refusal of the pending field", err)
	}
}
