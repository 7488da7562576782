package experiment

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

func states(t *testing.T, jobs []Job) []State {
	t.Helper()
	cells, err := Cells(jobs)
	if err != nil {
		t.Fatal(err)
	}
	s := make([]State, len(cells))
	for i, c := range cells {
		s[i] = c.State
	}
	return s
}

// TestRunCellAndStates trains cells one at a time as array tasks would and
// checks every state Cells reports: not started, finished, interrupted (a
// done context), failed (a damaged checkpoint, with its error), running (a
// held lock); out-of-range cells are refused; the cells' results equal a
// whole-grid Run's.
// stopBeforeTraining is a context that stops training before its first
// iteration (Err) but no evaluation (its Done is Background's, nil): a run
// under it checkpoints at iteration 0 and is interrupted.
type stopBeforeTraining struct{ context.Context }

func (stopBeforeTraining) Err() error { return context.Canceled }

func TestRunCellAndStates(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"exp.yaml":  "name: g\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [second]\nseeds: [1, 2]\n",
		"base.yaml": tinyBase,
	})
	_, cfgs, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cells")
	jobs := Jobs(cfgs, out)
	if got := states(t, jobs); !reflect.DeepEqual(got, []State{NotStarted, NotStarted, NotStarted, NotStarted}) {
		t.Fatalf("fresh grid: %v", got)
	}
	for _, i := range []int{-1, 4} {
		if err := RunCell(context.Background(), out, jobs, i, run.Options{}); !errors.Is(err, ErrCellRange) || !strings.Contains(err.Error(), "4 cells, 0 to 3") {
			t.Errorf("cell %d: %v, want ErrCellRange naming the grid's cells", i, err)
		}
	}
	if err := RunCell(context.Background(), out, jobs, 1, run.Options{}); err != nil {
		t.Fatal(err)
	}
	// Stopped before their first iteration, after the evaluation at
	// iteration 0 (a done context's Done would stop that evaluation, and
	// the run before its first checkpoint).
	for _, i := range []int{2, 3} {
		if err := RunCell(stopBeforeTraining{context.Background()}, out, jobs, i, run.Options{}); !errors.Is(err, run.ErrInterrupted) {
			t.Fatalf("cell %d under a done context: %v, want run.ErrInterrupted", i, err)
		}
	}
	os.WriteFile(filepath.Join(jobs[3].Dir, rundir.CheckpointFile), []byte(`{"state":{}}`), 0o644)
	if err := RunCell(context.Background(), out, jobs, 3, run.Options{}); err == nil {
		t.Fatal("a damaged checkpoint was resumed")
	}
	if got := states(t, jobs); !reflect.DeepEqual(got, []State{NotStarted, Finished, Interrupted, Failed}) {
		t.Errorf("states %v, want not started, finished, interrupted, failed", got)
	}
	cells, _ := Cells(jobs)
	if cells[2].Checkpoint != 0 || !strings.Contains(cells[3].Detail, rundir.CheckpointFile) {
		t.Errorf("interrupted cell's checkpoint %d (want 0), failed cell's detail %q (want the checkpoint's error)", cells[2].Checkpoint, cells[3].Detail)
	}
	lock, err := dirlock.Acquire(jobs[2].Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := states(t, jobs)[2]; got != Running {
		t.Errorf("locked cell: %v, want running", got)
	}
	if err := RunCell(context.Background(), out, jobs, 2, run.Options{}); !errors.Is(err, dirlock.ErrHeld) {
		t.Errorf("a second process on a running cell: %v, want dirlock.ErrHeld", err)
	}
	lock.Release()

	// Without checkpoint and manifest, as killed before the first save's
	// seal: resumes from iteration 0.
	os.Remove(filepath.Join(jobs[3].Dir, rundir.CheckpointFile))
	os.Remove(filepath.Join(jobs[3].Dir, rundir.ManifestFile))
	for _, i := range []int{0, 2, 3} {
		if err := RunCell(context.Background(), out, jobs, i, run.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := states(t, jobs); !reflect.DeepEqual(got, []State{Finished, Finished, Finished, Finished}) {
		t.Errorf("states %v, want all finished", got)
	}
	// A finished run that a process holds (trmaml eval reading it) stays
	// finished, naming the holder.
	lock, err = dirlock.Acquire(jobs[1].Dir)
	if err != nil {
		t.Fatal(err)
	}
	cells, _ = Cells(jobs)
	lock.Release()
	if c := cells[1]; c.State != Finished || !strings.HasPrefix(c.Detail, "in use by pid ") {
		t.Errorf("held finished cell: %v, %q; want finished, in use by its holder", c.State, c.Detail)
	}
	if _, err := os.Stat(filepath.Join(jobs[3].Dir, FailedFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s stays after the run finished: %v", FailedFile, err)
	}
	whole := filepath.Join(dir, "whole")
	if err := Run(context.Background(), whole, Jobs(cfgs, whole), 2, io.Discard, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	for i, j := range Jobs(cfgs, whole) {
		if a, b := resultWithoutTiming(t, jobs[i].Dir), resultWithoutTiming(t, j.Dir); !reflect.DeepEqual(a, b) {
			t.Errorf("cell %d: result differs from the whole grid's run", i)
		}
	}
}

// TestRunInterrupted: a Run whose context is done returns run.ErrInterrupted
// and starts nothing more; the next Run finishes the grid.
func TestRunInterrupted(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"exp.yaml":  "name: g\nbase: base.yaml\nalgorithms: [maml]\norders: [second]\nseeds: [1, 2]\n",
		"base.yaml": tinyBase,
	})
	_, cfgs, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(done, out, Jobs(cfgs, out), 1, io.Discard, false, run.Options{}); !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("got %v, want run.ErrInterrupted", err)
	}
	if err := Run(context.Background(), out, Jobs(cfgs, out), 1, io.Discard, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := states(t, Jobs(cfgs, out)); !reflect.DeepEqual(got, []State{Finished, Finished}) {
		t.Errorf("states %v after the second Run", got)
	}
}

func resultWithoutTiming(t *testing.T, dir string) rundir.Result {
	t.Helper()
	r, err := rundir.ReadResult(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	r.Timing = rundir.Timing{}
	return r
}
