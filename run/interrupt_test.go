package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/rundir"
)

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
	full, err := Train(context.Background(), c, fullDir, Options{})
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
			ctx := ctxtest.StopAfter(context.Background(), n)
			var err error
			if k == 0 {
				_, err = Train(ctx, c, dir, Options{})
			} else {
				_, err = Resume(ctx, dir, Options{})
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
		res, err := Resume(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, "run resumed after interrupts", res, full)
		for _, f := range []string{rundir.ModelFile, rundir.PFile, rundir.TasksFile} {
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
	if _, err := Train(ctxtest.StopAfter(context.Background(), 7), tinyConfig(), dir, Options{}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rundir.CheckpointFile)
	ck, err := rundir.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	ck.Pending.BatchN = 3
	if _, err := rundir.WriteCheckpoint(path, ck); err != nil {
		t.Fatal(err)
	}
	reseal(t, dir)
	if _, err := Resume(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "pending: evaluated 0 and batch_n 3 do not fit iteration 7") {
		t.Errorf("got %v, want a refusal of the pending field", err)
	}
}

// doneFrom is a context whose Done channel is closed from its k-th call
// on, and whose Err stays nil: each evaluation asks for Done once, the
// training loop only for Err, so a run under it is stopped inside its k-th
// evaluation (the one at iteration 0 being the first, the final one after
// the last iteration's the last), and nowhere else.
type doneFrom struct {
	context.Context
	k      int
	closed chan struct{}
}

func newDoneFrom(k int) *doneFrom {
	c := &doneFrom{Context: context.Background(), k: k, closed: make(chan struct{})}
	close(c.closed)
	return c
}

func (c *doneFrom) Done() <-chan struct{} {
	if c.k--; c.k <= 0 {
		return c.closed
	}
	return make(chan struct{})
}

func (c *doneFrom) Err() error { return nil }

// TestInterruptInEvaluation stops runs inside an evaluation (at iteration
// 0, before the first checkpoint; at iteration 10, with the batches since
// iteration 0 pending; in the final evaluation; and at iteration 20 twice,
// the resumed evaluation stopped again): each returns ErrInterrupted at
// once, with its checkpoint at that iteration (none at iteration 0) and
// its directory unlocked, and the resumed run, which first does the
// evaluation it was stopped in, ends as the uninterrupted run did.
func TestInterruptInEvaluation(t *testing.T) {
	c := tinyConfig() // 30 iterations, evaluated at 0, 10, 20, 30, then the final evaluation
	fullDir := filepath.Join(t.TempDir(), "full")
	full, err := Train(context.Background(), c, fullDir, Options{})
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
	for _, tc := range []struct {
		stops   []int // the evaluation each attempt is stopped in, counted in that attempt
		at      int   // the checkpoint's iteration after the last stop (-1: none)
		pending int   // its pending batches
	}{
		{[]int{1}, -1, 0},
		{[]int{2}, 10, 10},
		{[]int{5}, 30, 0},
		{[]int{3, 1}, 20, 10},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		for k, n := range tc.stops {
			var err error
			if k == 0 {
				_, err = Train(newDoneFrom(n), c, dir, Options{})
			} else {
				_, err = Resume(newDoneFrom(n), dir, Options{})
			}
			if !errors.Is(err, ErrInterrupted) {
				t.Fatalf("stops %v: got %v, want ErrInterrupted", tc.stops, err)
			}
		}
		ck, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
		switch {
		case tc.at < 0 && !errors.Is(err, os.ErrNotExist):
			t.Errorf("stops %v: a checkpoint (%v) where none was due", tc.stops, err)
		case tc.at >= 0 && err != nil:
			t.Fatal(err)
		case tc.at >= 0 && (ck.State.Iteration != tc.at || (ck.Pending == nil) != (tc.pending == 0) || (ck.Pending != nil && ck.Pending.BatchN != tc.pending)):
			t.Errorf("stops %v: checkpoint at iteration %d, pending %+v; want %d with %d pending batches", tc.stops, ck.State.Iteration, ck.Pending, tc.at, tc.pending)
		}
		lock, err := dirlock.Acquire(dir)
		if err != nil {
			t.Fatalf("stops %v: the interrupted run kept its lock: %v", tc.stops, err)
		}
		lock.Release()
		res, err := Resume(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, "run resumed after a stopped evaluation", res, full)
		for _, f := range []string{rundir.ModelFile, rundir.PFile, rundir.TasksFile} {
			if read(dir, f) != read(fullDir, f) {
				t.Errorf("stops %v: %s differs from the uninterrupted run's", tc.stops, f)
			}
		}
		if got, want := withoutElapsed(read(dir, rundir.MetricsFile)), withoutElapsed(read(fullDir, rundir.MetricsFile)); got != want {
			t.Errorf("stops %v: metrics.csv\n%s\nwant\n%s", tc.stops, got, want)
		}
	}
}
