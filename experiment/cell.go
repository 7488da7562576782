package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/slurm"
)

// A grid's cells are its runs numbered from 0 in the order Parse expands
// them, the order of Jobs: that order is the contract between
// `trmaml experiment -cell I` and every scheduler that runs cell I as task I
// of an array, so it only depends on the experiment file.

// SchedulerDir is the directory of an experiment's scheduler files (the
// Slurm scripts and logs) inside its output directory: the one directory
// there that is not a run.
const SchedulerDir = slurm.SchedulerDir

// FailedFile, in a run directory, holds the error the run last stopped
// with, when that was neither success nor an interruption; it goes when the
// run is continued successfully or interrupted. run writes it for a run
// that stopped training; the experiment for any other error.
const FailedFile = rundir.FailedFile

// State is where a cell stands.
type State string

// The states of a cell.
const (
	NotStarted  State = "not started"     // no run directory with a config yet
	Running     State = "running"         // a process holds its unfinished run directory's lock
	Interrupted State = "interrupted"     // stopped without result or error: resume it
	Failed      State = "failed"          // stopped on an error (FailedFile)
	Finished    State = "finished"        // result.json written and sealed (Detail names a process reading it)
	Damaged     State = "damaged"         // refused by rundir.Verify: Detail names the file
	NotDir      State = "not a directory" // the cell's path is a file (or other), not a run directory
)

// Cell is one cell of a grid and its state.
type Cell struct {
	Index int
	Job   Job
	State State
	// Checkpoint is the iteration of the run's checkpoint (-1 without one).
	Checkpoint int
	// Detail is the failure's last line, the lock holder of a running
	// cell, or "in use by" the holder of a finished one.
	Detail string
}

// Name is the cell's run directory name, which identifies it in listings.
func (c Cell) Name() string { return filepath.Base(c.Job.Dir) }

// Cells reads the state of every job from its run directory.
func Cells(jobs []Job) ([]Cell, error) { return CellsHeld(jobs, dirlock.Holder) }

// CellsHeld is Cells with probe telling whether a process holds a run
// directory's lock and who: a watcher that must not touch the lock
// itself (trmaml serve) passes its own.
func CellsHeld(jobs []Job, probe func(dir string) (string, bool, error)) ([]Cell, error) {
	cells := make([]Cell, len(jobs))
	for i, j := range jobs {
		c := Cell{Index: i, Job: j, State: NotStarted, Checkpoint: -1}
		if st, err := os.Stat(j.Dir); err == nil && !st.IsDir() {
			c.State, c.Detail = NotDir, fmt.Sprintf("%s is a %s, not a run directory: move it away", j.Dir, kind(st.Mode()))
			cells[i] = c
			continue
		}
		if j.unreadable != nil {
			c.State, c.Detail = Damaged, j.unreadable.Error()
			cells[i] = c
			continue
		}
		holder, held, err := probe(j.Dir)
		if err != nil {
			c.State, c.Detail = Damaged, err.Error()
			cells[i] = c
			continue
		}
		if ck, err := rundir.ReadCheckpoint(filepath.Join(j.Dir, rundir.CheckpointFile)); err == nil {
			c.Checkpoint = ck.State.Iteration
		}
		// A held directory may be between one save's writes, so a failed
		// check there is no damage: it is verified only to tell a finished
		// run that a process reads (below) from one still being written.
		var sealed *rundir.Sealed
		var damaged error
		if !held && fileExists(filepath.Join(j.Dir, rundir.ConfigFile)) {
			sealed, damaged = rundir.Verify(j.Dir)
		}
		// The run's own state comes first: a FailedFile counts only when
		// the run has not finished, nor saved a checkpoint, since.
		switch {
		case held && finished(j.Dir):
			// Sealed and finished: the holder reads it (trmaml eval), or
			// the run is past its last save.
			c.State, c.Detail = Finished, "in use by "+holder
		case held:
			c.State, c.Detail = Running, holder
		case damaged == nil && sealed != nil && sealed.Finished:
			c.State = Finished
		case failedSince(j.Dir):
			raw, err := os.ReadFile(filepath.Join(j.Dir, FailedFile))
			if err != nil {
				return nil, err
			}
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			c.State, c.Detail = Failed, lines[len(lines)-1]
		case damaged != nil:
			c.State, c.Detail = Damaged, damaged.Error()
		case fileExists(filepath.Join(j.Dir, rundir.ConfigFile)):
			c.State = Interrupted
		}
		cells[i] = c
	}
	return cells, nil
}

// failedSince reports whether dir has a FailedFile at least as new as its
// checkpoint: one older was written before the run went on (a hand resume).
func failedSince(dir string) bool {
	f, err := os.Stat(filepath.Join(dir, FailedFile))
	if err != nil || !f.Mode().IsRegular() {
		return false
	}
	ck, err := os.Stat(filepath.Join(dir, rundir.CheckpointFile))
	return err != nil || !f.ModTime().Before(ck.ModTime())
}

// kind names a file mode's type for a refusal.
func kind(m os.FileMode) string {
	if m.IsRegular() {
		return "regular file"
	}
	return "file of type " + m.Type().String()
}

// ErrCellRange is returned (wrapped) for a cell index outside the grid.
var ErrCellRange = errors.New("cell out of range")

// RunCell trains or resumes cell i of the jobs, whose directories lie in
// out, and returns; a finished cell is left as it is. Unlike Run it does
// not hold out's lock, only the run directory's, so that the cells of one
// grid run at once in separate processes (a scheduler's array tasks); it
// refuses the same outs as Run. ctx stops it as it stops Run.
func RunCell(ctx context.Context, out string, jobs []Job, i int, opts run.Options) error {
	if i < 0 || i >= len(jobs) {
		return fmt.Errorf("-cell %d: %w: the grid has %d cells, 0 to %d (trmaml experiment -list shows them)", i, ErrCellRange, len(jobs), len(jobs)-1)
	}
	if err := checkOut(out, jobs); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return runJob(ctx, jobs[i], opts)
}

// recordFailure keeps the error a run stopped with in its FailedFile, for
// Cells, or removes the file when the run finished or was interrupted. A
// run that stopped before it had a config has no directory to keep it in.
func recordFailure(j Job, runErr error) {
	path := filepath.Join(j.Dir, FailedFile)
	if errors.Is(runErr, dirlock.ErrHeld) {
		return // another process writes the directory: nothing is written into it
	}
	if runErr == nil || errors.Is(runErr, run.ErrInterrupted) {
		os.Remove(path)
		return
	}
	if fileExists(filepath.Join(j.Dir, rundir.ConfigFile)) {
		atomicfile.Write(path, []byte(runErr.Error()+"\n"))
	}
}

// clearFailure removes the FailedFile of the finished run of j (one a
// failed attempt left before the run was finished by another), under the
// directory's lock; a directory another process holds is left alone.
func clearFailure(j Job) {
	path := filepath.Join(j.Dir, FailedFile)
	if !fileExists(path) {
		return
	}
	lock, err := dirlock.Acquire(j.Dir)
	if err != nil {
		return
	}
	defer lock.Release()
	os.Remove(path)
}
