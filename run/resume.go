package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/shell"
	"github.com/trmaml/trmaml/rundir"
)

// Resume continues the unfinished run in dir from its last checkpoint; the
// finished run is identical to one that never stopped (but for timing),
// however often it was interrupted (ctx). A run stopped before its first
// checkpoint starts again from iteration 0 with the config in dir. It holds
// dir's lock, first removes the temporary files of writes a crash
// interrupted, and verifies the directory against its manifest
// (rundir.Verify). sets ("field=value", see ResumeOverridable) change the
// config from the checkpoint on; the change is recorded in the manifest and
// in result.json. A finished run is left as it is: its sealed result is
// returned. A run that finishes (or had) with a DivergenceWarning gets it
// in opts.Warnings.
func Resume(ctx context.Context, dir string, opts Options, sets ...string) (*rundir.Result, error) {
	res, err := resume(ctx, dir, opts, sets...)
	if err == nil {
		if cfg, lerr := configs.LoadRecorded(filepath.Join(dir, rundir.ConfigFile)); lerr == nil {
			warnDiverged(opts, dir, cfg)
		}
	}
	return res, err
}

// resume is Resume without its warning.
func resume(ctx context.Context, dir string, opts Options, sets ...string) (*rundir.Result, error) {
	lock, err := rundir.LockRun(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	ckPath := filepath.Join(dir, rundir.CheckpointFile)
	sealed, err := rundir.Verify(dir)
	if accepted := err == nil || errors.Is(err, rundir.ErrUnsealed) && !fileExists(ckPath); accepted {
		if err := rundir.CleanTemps(dir); err != nil {
			return nil, err
		}
	}
	var changed *rundir.ConfigChangedError
	switch {
	case errors.Is(err, rundir.ErrUnsealed) && !fileExists(ckPath) && len(sets) == 0:
		// Killed between config.yaml and its first seal: nothing was
		// trained, so the run starts from its config, as train would.
		s, err := loadSetup(dir, opts)
		if err != nil {
			return nil, err
		}
		return start(ctx, s, dir, opts.Progress, nil)
	case errors.Is(err, rundir.ErrFinishUnsealed) && len(sets) == 0:
		// model.json and result.json are bound to the final checkpoint:
		// a kill came before their seal.
		if sealed, err = rundir.SealFinished(dir); err != nil {
			return nil, err
		}
	case errors.As(err, &changed) && len(sets) > 0:
		// Killed between writing the overridden config.yaml and sealing
		// it: the same command completes it.
		if sealed, err = completeOverride(dir, changed, sets); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case sealed.Finished && len(sets) == 0:
		// Nothing to resume: evaluating the final checkpoint again would
		// rewrite the sealed result.json with new timings.
		res, err := rundir.ReadResult(filepath.Join(dir, rundir.ResultFile))
		if err != nil {
			return nil, err
		}
		opts.warn(fmt.Sprintf("%s is finished: nothing to resume, its sealed result.json is shown (trmaml eval -run %s evaluates it again)", dir, shell.Quote(dir)))
		return &res, nil
	case len(sets) > 0:
		if err := override(dir, sealed, sets); err != nil {
			return nil, err
		}
		if sealed, err = rundir.Verify(dir); err != nil {
			return nil, err
		}
	}
	opts.warn(sealed.Note(dir))
	s, err := loadSetup(dir, opts)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(ckPath); errors.Is(err, os.ErrNotExist) {
		return start(ctx, s, dir, opts.Progress, sealed.Sets())
	}
	ss, ck, err := restoreSession(s, dir)
	if err != nil {
		return nil, err
	}
	ss.overrides = sealed.Sets()
	ss.trainDur = time.Duration(ck.TrainSeconds * float64(time.Second))
	ss.evalDur = time.Duration(ck.EvalSeconds * float64(time.Second))
	ss.cpu = newCPUMeter(ck.CPU, false)
	defer ss.cpu.stop()
	if ss.kernels = ck.Kernels; len(ss.kernels) > 0 {
		if was, now := ss.kernels[len(ss.kernels)-1], graph.Kernels(); was != now {
			opts.warn(fmt.Sprintf("%s was trained so far with %s and goes on with %s: its numbers will differ in rounding from a run that never stopped (result.json's timing lists both)", dir, was, now))
			ss.kernels = append(ss.kernels, now)
		}
	}
	last, err := ck.LastRow()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ckPath, err)
	}
	if pd := ck.Pending; pd != nil {
		ss.batchSum, ss.batchMax, ss.batchN = pd.BatchSum, pd.BatchMax, pd.BatchN
	}
	// Keep the metric rows up to the checkpoint's last, under the file's
	// own header (a run started before the column names carried units, or
	// before its CVaR columns, keeps its); later rows are redone.
	mpath := filepath.Join(dir, rundir.MetricsFile)
	header, cvar, err := rundir.MetricsHeaderIn(mpath)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be resumed: %w", dir, err)
	}
	ss.cvarColumns = cvar
	if err := rundir.KeepRows(mpath, header, 1+int(rundir.NumColumns)+2*len(cvar), last, &ss.metrics); err != nil {
		return nil, err
	}
	if err := rundir.KeepRows(filepath.Join(dir, rundir.PFile), rundir.PHeader(taskNames(s.Train)), 1+s.Train.Len(), last, &ss.pcsv); err != nil {
		return nil, err
	}
	if ck.TasksSHA256 != "" { // a run started without tasks.csv goes on without it
		ss.tasks = new(bytes.Buffer)
		header := rundir.TasksHeader(taskNames(s.Train), taskNames(s.Test))
		if err := rundir.KeepRows(filepath.Join(dir, rundir.TasksFile), header, rundir.TasksFields(s.Train.Len(), s.Test.Len()), last, ss.tasks); err != nil {
			return nil, err
		}
	}
	// A run interrupted in an evaluation has its checkpoint at that
	// evaluation's iteration with the batches before it pending: the
	// evaluation is done first.
	cfg, it := s.Config, ck.State.Iteration
	if ss.batchN > 0 && (it%cfg.Eval.Every == 0 || it == cfg.Meta.Iterations) {
		ss.p = opts.Progress
		if err := ss.record(ctx); errors.Is(err, errEvaluationStopped) {
			return nil, ss.interrupt()
		} else if err != nil {
			return nil, err
		}
	}
	return ss.train(ctx, opts.Progress)
}

// ResumeOverridable says which config fields resume -override may change
// mid-run: meta.iterations (to extend or shorten a run, down to its
// checkpoint) and the evaluation protocol (eval.*). Everything else would
// make the run's history and its continuation two different experiments.
func ResumeOverridable(path string) bool {
	return path == "meta.iterations" || strings.HasPrefix(path, "eval.")
}

// override changes the fields of sets in the sealed, unfinished run in dir:
// config.yaml is rewritten, then the manifest records the change.
func override(dir string, sealed *rundir.Sealed, sets []string) error {
	if sealed.Finished {
		return fmt.Errorf("%s is a finished run: -override changes unfinished runs only (train a new run with the changed config)", dir)
	}
	cfg, err := configs.Override(sealed.Config, "-override", sets, ResumeOverridable)
	if err != nil {
		return fmt.Errorf("%w (resume -override may change: meta.iterations, eval.*)", err)
	}
	it := 0
	if ck, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile)); err == nil {
		it = ck.State.Iteration
	}
	if cfg.Meta.Iterations < it {
		return fmt.Errorf("-override meta.iterations=%d: below the checkpoint's iteration %d", cfg.Meta.Iterations, it)
	}
	yml, err := cfg.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, rundir.ConfigFile), yml); err != nil {
		return err
	}
	return rundir.Seal(dir, false, rundir.Override{Iteration: it, Set: sets, Before: rundir.HashBytes([]byte(sealed.Manifest.Config))})
}

// completeOverride seals the config.yaml a killed override wrote, if it is
// the sealed config with sets applied, and verifies dir again.
func completeOverride(dir string, changed *rundir.ConfigChangedError, sets []string) (*rundir.Sealed, error) {
	old, err := configs.ParseRecorded(changed.Path, changed.Sealed)
	if err != nil {
		return nil, changed
	}
	cfg, err := configs.Override(old, "-override", sets, ResumeOverridable)
	if err != nil {
		return nil, changed
	}
	if yml, err := cfg.Marshal(); err != nil || !bytes.Equal(yml, changed.Now) {
		return nil, changed
	}
	// Seal only config.yaml's change: verify the rest first, under the
	// old config, by restoring it for the check.
	if err := atomicfile.Write(changed.Path, changed.Sealed); err != nil {
		return nil, err
	}
	sealed, err := rundir.Verify(dir)
	if err != nil {
		return nil, err
	}
	if err := override(dir, sealed, sets); err != nil {
		return nil, err
	}
	return rundir.Verify(dir)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
