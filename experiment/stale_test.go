package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// TestNoStaleFailure: a cell another process holds is refused without a
// byte written into its directory (no failed.txt); a failed.txt a refused
// attempt left before the run was finished by hand no longer makes the
// cell "failed", and the next experiment run removes it; a cell path that
// is a regular file is reported as not a directory, and the other cells
// still are.
func TestNoStaleFailure(t *testing.T) {
	t.Parallel()
	dir, cfgs := oneRunGrid(t)
	out := filepath.Join(dir, "out")
	jobs := Jobs(cfgs, out)
	var log bytes.Buffer
	if err := Run(context.Background(), out, jobs, 1, &log, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	cell := jobs[0].Dir
	os.Remove(filepath.Join(cell, rundir.ResultFile))
	os.Remove(filepath.Join(cell, rundir.ModelFile))
	os.Remove(filepath.Join(cell, rundir.ManifestFile))
	if err := rundir.Seal(cell, false); err != nil {
		t.Fatal(err)
	}

	lock, err := dirlock.Acquire(cell) // a hand resume holds the cell
	if err != nil {
		t.Fatal(err)
	}
	before := listing(t, cell)
	if err := RunCell(context.Background(), out, jobs, 0, run.Options{}); !errors.Is(err, dirlock.ErrHeld) {
		t.Fatalf("a held cell: %v, want ErrHeld", err)
	}
	if after := listing(t, cell); after != before {
		t.Errorf("a refused cell wrote into the directory another process holds:\nbefore %s\nafter  %s", before, after)
	}
	lock.Release()

	// A failed.txt from an attempt before the hand resume finished it.
	failed := filepath.Join(cell, FailedFile)
	os.WriteFile(failed, []byte("an old failure\n"), 0o644)
	if _, err := run.Resume(context.Background(), cell, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if s := states(t, jobs); s[0] != Finished {
		t.Errorf("a finished run with an old failed.txt: %s, want %s", s[0], Finished)
	}
	if err := Run(context.Background(), out, jobs, 1, &log, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(failed); !errors.Is(err, os.ErrNotExist) {
		t.Error("the experiment left the finished cell's failed.txt")
	}

	file := Job{Config: jobs[0].Config, Dir: filepath.Join(out, "a-file")}
	os.WriteFile(file.Dir, []byte("x"), 0o644)
	cells, err := Cells(append(jobs, file))
	if err != nil {
		t.Fatalf("a cell path that is a file: %v", err)
	}
	if cells[0].State != Finished || cells[1].State != NotDir {
		t.Errorf("states %s, %s; want %s, %s", cells[0].State, cells[1].State, Finished, NotDir)
	}
}

// listing is the names and contents of dir's files.
func listing(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, e := range entries {
		raw, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + " " + string(raw) + "\n")
	}
	return b.String()
}
