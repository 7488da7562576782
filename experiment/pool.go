package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// ErrForeign is returned (wrapped) when the output directory of an
// experiment is a run directory or holds runs of something else.
var ErrForeign = errors.New("not this experiment's directory")

// Run executes the jobs, whose directories lie in out, with the given
// number of workers, skipping finished runs and resuming unfinished ones,
// and reports progress to w (redrawn in place on a terminal). It holds out's
// lock throughout, and refuses (ErrForeign) an out that is a run directory
// or holds directories other than the jobs' (another experiment's runs,
// which a report of out would mix in). It returns the errors of failed runs,
// joined; the other runs still complete. The runs share opts.Datasets (a
// new one if nil); each reports its own progress. When ctx is done, the
// runs in progress stop at a checkpoint, no other starts, and the
// error wraps run.ErrInterrupted.
func Run(ctx context.Context, out string, jobs []Job, workers int, w io.Writer, terminal bool, opts run.Options) error {
	lock, err := openOut(out, jobs)
	if err != nil {
		return err
	}
	defer lock.Release()
	if opts.Datasets == nil {
		opts.Datasets = new(configs.DataCache)
	}
	board := newBoard(w, terminal, jobs)
	queue := make(chan int)
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for k := 0; k < workerCount(workers, len(jobs)); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				if ctx.Err() != nil {
					continue // not started: the rerun starts it
				}
				o := opts
				o.Progress = board.progress(i)
				errs[i] = runJob(ctx, jobs[i], o)
				board.finish(i, errs[i])
			}
		}()
	}
	stop := board.start()
	for i := range jobs {
		queue <- i
	}
	close(queue)
	wg.Wait()
	stop()
	if ctx.Err() != nil && !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, run.ErrInterrupted) }) {
		errs = append(errs, fmt.Errorf("experiment %w before its remaining runs started", run.ErrInterrupted))
	}
	return errors.Join(errs...)
}

// workerCount is how many of the workers asked for Run starts: at least
// one, and no more than there are jobs (the rest would wait idle, and a
// mistyped -jobs of 10^12 would exhaust memory starting them).
func workerCount(workers, jobs int) int {
	return max(1, min(workers, jobs))
}

// Stopped reports whether err, from Run, means the grid did not run to its
// end: another process holds it, it holds foreign files, or a signal
// stopped it at a checkpoint. Otherwise its finished runs are reported,
// even if some failed.
func Stopped(err error) bool {
	return errors.Is(err, dirlock.ErrHeld) || errors.Is(err, ErrForeign) || errors.Is(err, run.ErrInterrupted)
}

// openOut makes and locks the experiment directory out, refusing a run
// directory and directories that are not the jobs'.
func openOut(out string, jobs []Job) (*dirlock.Lock, error) {
	if err := checkOut(out, jobs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	lock, err := dirlock.Acquire(out)
	if err != nil {
		return nil, err
	}
	// Again under the lock: another process may have written meanwhile.
	if err := checkOut(out, jobs); err != nil {
		lock.Release()
		return nil, err
	}
	// The temporary files of a killed earlier write (of its report).
	if _, err := atomicfile.CleanTemps(out); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// CheckOut refuses (ErrForeign) an experiment directory out that is a run
// directory or holds directories other than the jobs' and SchedulerDir, and
// a run directory there made from another config than its job's: what a
// run of the jobs into out would refuse, checked before anything is
// written. A missing out is fine.
func CheckOut(out string, jobs []Job) error {
	if err := checkOut(out, jobs); err != nil {
		return err
	}
	for _, j := range jobs {
		if err := sameConfig(j); err != nil {
			return err
		}
	}
	return nil
}

// checkOut is CheckOut without the configs.
func checkOut(out string, jobs []Job) error {
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return fmt.Errorf("%s: %w: it is not a directory: -out names the experiment's directory", out, ErrForeign)
	}
	for _, f := range []string{rundir.ConfigFile, rundir.CheckpointFile, rundir.ResultFile} {
		if fileExists(filepath.Join(out, f)) {
			return fmt.Errorf("%s: %w: it is a run directory (it holds %s): choose another -out", out, ErrForeign, f)
		}
	}
	own := map[string]bool{SchedulerDir: true}
	for _, j := range jobs {
		if filepath.Clean(filepath.Dir(j.Dir)) != filepath.Clean(out) {
			return fmt.Errorf("job directory %s is not in %s", j.Dir, out)
		}
		own[filepath.Base(j.Dir)] = true
	}
	entries, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var foreign []string
	for _, e := range entries {
		if e.IsDir() && !own[e.Name()] {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("%s: %w: it holds directories that are not runs of this experiment: %s (its table and figures would mix them in): choose another -out, or move them away",
			out, ErrForeign, strings.Join(foreign, ", "))
	}
	return nil
}

// runJob skips a finished run, resumes an unfinished one (from its
// checkpoint, or from iteration 0 if it stopped before the first) and
// starts the rest, provided that a run directory already there was made
// from the same config: an edited experiment file is refused, not silently
// ignored. Nothing a later rerun needs is ever removed. A failure is kept
// in the run directory's FailedFile.
func runJob(ctx context.Context, j Job, opts run.Options) error {
	if !fileExists(filepath.Join(j.Dir, rundir.ConfigFile)) {
		_, err := run.Train(ctx, j.Config, j.Dir, opts)
		recordFailure(j, err)
		return err
	}
	if err := sameConfig(j); err != nil {
		return err
	}
	if finished(j.Dir) {
		clearFailure(j)
		return nil
	}
	_, err := run.Resume(ctx, j.Dir, opts)
	recordFailure(j, err)
	return err
}

// sameConfig refuses a run directory of j made from another config than
// j's; a directory without config is fine. The settings of the methods,
// task families and model a run does not use are not compared
// (configs.Config.Read): a config.yaml written before it held only what
// the run reads carries them, but the run never reads them, so a rewritten experiment
// file that leaves them elsewhere (an ablation base file replaced by a
// sweep) still continues the runs it made.
func sameConfig(j Job) error {
	cfgPath := filepath.Join(j.Dir, rundir.ConfigFile)
	if !fileExists(cfgPath) {
		return nil
	}
	stored, err := configs.LoadRecorded(cfgPath)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(stored.Read(), j.Config.Read()) {
		return fmt.Errorf("%s was made from a different config than the experiment now gives; "+
			"use a new -out or restore the experiment file", j.Dir)
	}
	return nil
}

// finished reports whether the run in dir is finished: its result.json
// sealed (one written by a run killed before sealing it is finished by
// resume).
func finished(dir string) bool {
	if !fileExists(filepath.Join(dir, rundir.ResultFile)) {
		return false
	}
	s, err := rundir.Verify(dir)
	return err == nil && s.Finished
}
