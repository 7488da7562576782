package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/trmaml/trmaml/internal/shell"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// Train runs cfg into the new directory dir, reporting progress to
// opts.Progress. It holds dir's lock while it writes. On a non-finite loss or
// state it stops with an error and leaves the files of the last evaluation,
// including its checkpoint. When opts.Context is done it checkpoints and
// returns ErrInterrupted.
func Train(cfg configs.Config, dir string, opts Options) (*rundir.Result, error) {
	s, err := Build(cfg, opts)
	if err != nil {
		return nil, err
	}
	lock, err := rundir.Create(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	yml, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, rundir.ConfigFile), yml); err != nil {
		return nil, err
	}
	if err := rundir.Seal(dir, false); err != nil {
		return nil, err
	}
	s.configHash = rundir.HashBytes(yml)
	return start(opts.context(), s, dir, opts.Progress, nil)
}

// start trains s from iteration 0 in dir, which holds its config.yaml and
// nothing else that counts: the metric files are written afresh.
func start(ctx context.Context, s *Setup, dir string, p *Progress, overrides []string) (*rundir.Result, error) {
	cfg := s.Config
	w0, err := s.init(rand.New(rand.NewPCG(cfg.Seed, 0x696e6974)))
	if err != nil {
		return nil, err
	}
	ss, err := newSession(s, dir, w0)
	if err != nil {
		return nil, err
	}
	ss.overrides = overrides
	ss.metrics.WriteString(rundir.MetricsHeader)
	ss.pcsv.WriteString(rundir.PHeader(taskNames(s.Train)))
	ss.ctx, ss.p = ctx, p
	ss.cpu = newCPUMeter(nil, true)
	defer ss.cpu.stop()
	if err := ss.record(); errors.Is(err, errEvaluationStopped) {
		return nil, ss.interrupt() // before the first checkpoint: resume starts again
	} else if err != nil {
		return nil, err
	}
	return ss.train(ctx, p)
}

// Resume continues the unfinished run in dir from its last checkpoint; the
// finished run is identical to one that never stopped (but for timing),
// however often it was interrupted (opts.Context). A
// run stopped before its first checkpoint starts again from iteration 0
// with the config in dir. It holds dir's lock, first removes the temporary
// files of writes a crash interrupted, and verifies the directory against
// its manifest (rundir.Verify). sets ("field=value", see ResumeOverridable)
// change the config from the checkpoint on; the change is recorded in the
// manifest and in result.json.
func Resume(dir string, opts Options, sets ...string) (*rundir.Result, error) {
	lock, err := rundir.Lock(dir)
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
		return start(opts.context(), s, dir, opts.Progress, nil)
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
		return start(opts.context(), s, dir, opts.Progress, sealed.Sets())
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
	last, err := ck.LastRow()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ckPath, err)
	}
	if pd := ck.Pending; pd != nil {
		ss.batchSum, ss.batchMax, ss.batchN = pd.BatchSum, pd.BatchMax, pd.BatchN
	}
	// Keep the metric rows up to the checkpoint's last; later ones are redone.
	if err := rundir.KeepRows(filepath.Join(dir, rundir.MetricsFile), rundir.MetricsHeader, 1+int(rundir.NumColumns), last, &ss.metrics); err != nil {
		return nil, err
	}
	if err := rundir.KeepRows(filepath.Join(dir, rundir.PFile), rundir.PHeader(taskNames(s.Train)), 1+s.Train.Len(), last, &ss.pcsv); err != nil {
		return nil, err
	}
	// A run interrupted in an evaluation has its checkpoint at that
	// evaluation's iteration with the batches before it pending: the
	// evaluation is done first.
	cfg, it := s.Config, ck.State.Iteration
	if ss.batchN > 0 && (it%cfg.Eval.Every == 0 || it == cfg.Meta.Iterations) {
		ss.ctx, ss.p = opts.context(), opts.Progress
		if err := ss.record(); errors.Is(err, errEvaluationStopped) {
			return nil, ss.interrupt()
		} else if err != nil {
			return nil, err
		}
	}
	return ss.train(opts.context(), opts.Progress)
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
	old, err := configs.Parse(changed.Path, changed.Sealed)
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

// loadSetup builds the run of the config.yaml in dir, with the fields of
// sets changed (see Evaluate); errors name the file.
func loadSetup(dir string, opts Options, sets ...string) (*Setup, error) {
	cfgPath := filepath.Join(dir, rundir.ConfigFile)
	yml, err := os.ReadFile(cfgPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s: not a run directory (or one killed before its config was written: start it again with train)", dir, rundir.ConfigFile)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := configs.Parse(cfgPath, yml)
	if err != nil {
		return nil, err
	}
	if len(sets) > 0 {
		if cfg, err = evalSets(cfg, sets); err != nil {
			return nil, err
		}
	}
	s, err := Build(cfg, opts)
	if err != nil {
		return nil, blameSets(cfgPath, sets, err)
	}
	s.configHash = rundir.HashBytes(yml)
	return s, nil
}

// restoreSession continues s from the checkpoint in dir, refusing (with the
// file and the field) a checkpoint that is damaged or does not fit s.
func restoreSession(s *Setup, dir string) (*session, rundir.Checkpoint, error) {
	ckPath := filepath.Join(dir, rundir.CheckpointFile)
	raw, err := os.ReadFile(ckPath)
	if err != nil {
		return nil, rundir.Checkpoint{}, fmt.Errorf("%s cannot be resumed: %w", dir, err)
	}
	ck, err := rundir.DecodeCheckpoint(ckPath, raw)
	if err != nil {
		return nil, rundir.Checkpoint{}, fmt.Errorf("%s cannot be resumed: %w", dir, err)
	}
	if n := s.Objective.NumParams(); len(ck.State.W) != n {
		return nil, rundir.Checkpoint{}, fmt.Errorf("%s: state.W: %d parameters, the model of %s has %d", ckPath, len(ck.State.W), rundir.ConfigFile, n)
	}
	ss, err := newSession(s, dir, ck.State.W)
	if err != nil {
		return nil, rundir.Checkpoint{}, fmt.Errorf("%s: %w", ckPath, err)
	}
	if err := restoreOptimizer(ss.opt, ck.Optimizer); err != nil {
		return nil, rundir.Checkpoint{}, fmt.Errorf("%s: %w", ckPath, err)
	}
	if err := ss.tr.Restore(ck.State); err != nil {
		return nil, rundir.Checkpoint{}, fmt.Errorf("%s: %w (does it belong to this %s?)", ckPath, err, rundir.ConfigFile)
	}
	ss.prevCheckpoint = rundir.HashBytes(raw)
	return ss, ck, nil
}

// session is one training process on a run directory: the trainer, its
// optimizer, the metric files being accumulated, and the time spent.
type session struct {
	s                  *Setup
	dir                string
	opt                metalearn.Optimizer
	tr                 *metalearn.Trainer
	metrics, pcsv      bytes.Buffer
	trainDur, evalDur  time.Duration
	cpu                *cpuMeter
	batchSum, batchMax float64
	batchN             int
	p                  *Progress
	// ctx stops the evaluations (nil: never).
	ctx context.Context
	// prevCheckpoint is the SHA-256 of the checkpoint file the next one
	// replaces; overrides are the run's config changes (resume -override).
	prevCheckpoint string
	overrides      []string
}

func newSession(s *Setup, dir string, w0 []float64) (*session, error) {
	cfg := s.Config
	opt, err := metalearn.NewOptimizer(cfg.Meta.Optimizer, cfg.Meta.LR, len(w0))
	if err != nil {
		return nil, err
	}
	method, err := NewMethod(cfg)
	if err != nil {
		return nil, err
	}
	schedule, err := metalearn.NewSchedule(cfg.Meta.Schedule, cfg.Meta.LR, cfg.Meta.LRMin, cfg.Meta.Iterations)
	if err != nil {
		return nil, err
	}
	settings := metalearn.Settings{
		Method: method, Iterations: cfg.Meta.Iterations, Batch: cfg.Meta.Batch, Support: s.Support, Query: s.Query,
		BallRadius: cfg.Meta.BallRadius, Output: metalearn.OutputRule(cfg.Meta.Output),
		Optimizer: opt, Schedule: schedule, Seed: cfg.Seed,
	}
	tr, err := metalearn.NewTrainer(s.Objective, s.Train, w0, settings)
	if err != nil {
		return nil, err
	}
	return &session{s: s, dir: dir, opt: opt, tr: tr}, nil
}

// record evaluates the current iterate, appends to the metric files and
// writes them and a checkpoint.
func (ss *session) record() error {
	tr := ss.tr
	start := time.Now()
	ctx := ss.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	trainStats, testStats, err := ss.s.evaluate(ctx, tr.State.W, tr.State.Iteration, false)
	if err != nil && tr.State.Iteration == 0 && errors.Is(err, metalearn.ErrNonFinite) {
		return fmt.Errorf("%w; at iteration 0 nothing is trained yet, so the config's scale is to blame: %s", err, scaleFields(ss.s.Config))
	}
	if err != nil {
		return err
	}
	ss.evalDur += time.Since(start)
	ss.cpu.eval()
	row := rundir.MetricsRow{Iteration: tr.State.Iteration, Elapsed: ss.trainDur + ss.evalDur,
		BatchMean: math.NaN(), BatchWorst: math.NaN(), Train: trainStats, Test: testStats}
	if ss.batchN > 0 {
		row.BatchMean, row.BatchWorst = ss.batchSum/float64(ss.batchN), ss.batchMax
	}
	row.Append(&ss.metrics)
	rundir.AppendPRow(&ss.pcsv, tr.State.Iteration, tr.State.P)
	ss.batchSum, ss.batchMax, ss.batchN = 0, 0, 0
	ss.p.Evaluated(testStats.Mean, testStats.Worst, ss.s.Metric)

	if err := atomicfile.Write(filepath.Join(ss.dir, rundir.MetricsFile), ss.metrics.Bytes()); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(ss.dir, rundir.PFile), ss.pcsv.Bytes()); err != nil {
		return err
	}
	return ss.checkpoint(nil)
}

// checkpoint writes checkpoint.json at the current iteration, with the
// training since the last evaluation (nil right after one).
func (ss *session) checkpoint(pd *rundir.Pending) error {
	snap, err := ss.tr.Snapshot()
	if err != nil {
		return err
	}
	ck := rundir.Checkpoint{State: snap, OptimizerState: ss.opt, TrainSeconds: ss.trainDur.Seconds(), EvalSeconds: ss.evalDur.Seconds(), CPU: ss.cpu.times(), Pending: pd,
		Seed: ss.s.Config.Seed, ConfigSHA256: ss.s.configHash, Previous: ss.prevCheckpoint}
	ck.BindRows(ss.metrics.Bytes(), ss.pcsv.Bytes())
	sum, err := rundir.WriteCheckpoint(filepath.Join(ss.dir, rundir.CheckpointFile), ck)
	if err != nil {
		return err
	}
	ss.prevCheckpoint = sum
	return rundir.Seal(ss.dir, false)
}

// interrupt checkpoints the run at the current iteration, unless the
// checkpoint of the last evaluation is there already, and returns
// ErrInterrupted, wrapped with how to continue.
func (ss *session) interrupt() error {
	it := ss.tr.State.Iteration
	if ss.batchN > 0 {
		pd := &rundir.Pending{Evaluated: it - ss.batchN, BatchSum: ss.batchSum, BatchMax: ss.batchMax, BatchN: ss.batchN}
		if err := ss.checkpoint(pd); err != nil {
			return fmt.Errorf("%s: interrupted at iteration %d, and its checkpoint failed: %w", ss.s.Config.Name, it, err)
		}
	}
	return fmt.Errorf("%s: %w at iteration %d, checkpoint written (trmaml resume -run %s continues it)", ss.s.Config.Name, ErrInterrupted, it, shell.Quote(ss.dir))
}

// train runs the remaining iterations (metalearn.Trainer.Run), then
// evaluates the solution of the output rule and writes model.json and
// result.json. When ctx is done it stops between two iterations, or before
// the final evaluation, and returns ss.interrupt's error.
func (ss *session) train(ctx context.Context, p *Progress) (*rundir.Result, error) {
	cfg, tr := ss.s.Config, ss.tr
	ss.p, ss.ctx = p, ctx
	p.Start(fmt.Sprintf("%s seed %d", cfg.Name, cfg.Seed), tr.State.Iteration, cfg.Meta.Iterations)
	var recordErr error
	last := time.Now()
	ss.cpu.skip() // as last: the files written before are not training
	err := tr.Run(ctx, func(st metalearn.StepStats) error {
		ss.trainDur += time.Since(last)
		ss.cpu.train()
		ss.batchSum += st.MeanLoss
		ss.batchMax = max(ss.batchMax, st.MaxLoss)
		ss.batchN++
		p.Step(tr.State.Iteration, st.MeanLoss, st.MaxLoss)
		if tr.State.Iteration%cfg.Eval.Every == 0 || tr.State.Iteration == cfg.Meta.Iterations {
			recordErr = ss.record()
		}
		last = time.Now()
		ss.cpu.skip()
		return recordErr
	})
	p.Done()
	switch {
	case errors.Is(recordErr, errEvaluationStopped):
		return nil, ss.interrupt()
	case recordErr != nil:
		return nil, err
	case ctx.Err() != nil:
		return nil, ss.interrupt()
	case err != nil:
		return nil, fmt.Errorf("%s: training stopped: %w (the files in %s are from the last evaluation; trmaml eval -run %s evaluates its checkpoint)", cfg.Name, err, ss.dir, shell.Quote(ss.dir))
	}

	w, pFinal := tr.Solution()
	start := time.Now()
	ss.cpu.skip()
	trainStats, testStats, err := ss.s.evaluate(ctx, w, cfg.Meta.Iterations, true)
	if errors.Is(err, errEvaluationStopped) {
		return nil, ss.interrupt() // the checkpoint of the last iteration is there
	} else if err != nil {
		return nil, err
	}
	ss.evalDur += time.Since(start)
	ss.cpu.eval()
	res := &rundir.Result{
		Name: cfg.Name, Algorithm: cfg.Algorithm, CVaRLevel: cvarLevel(cfg), Order: cfg.Order, Seed: cfg.Seed, Iterations: cfg.Meta.Iterations,
		Output: cfg.Meta.Output, MetaTest: testStats, MetaTrain: trainStats,
		Timing: rundir.Timing{
			MsPerIteration: ss.trainDur.Seconds() * 1000 / float64(cfg.Meta.Iterations),
			TrainSeconds:   ss.trainDur.Seconds(), EvalSeconds: ss.evalDur.Seconds(),
			Engine: graph.Engine(), Procs: runtime.GOMAXPROCS(0), CPU: ss.cpu.times(),
		},
		Metric: ss.s.Metric.Name, Overrides: ss.overrides,
	}
	model := ss.s.record
	model.W = w
	if movesP(cfg.Algorithm) {
		res.FinalP, model.P = pFinal, pFinal
	}
	state, err := rundir.CheckpointStateHash(filepath.Join(ss.dir, rundir.CheckpointFile))
	if err != nil {
		return nil, err
	}
	model.StateSHA256, res.StateSHA256 = state, state
	if err := rundir.WriteBound(filepath.Join(ss.dir, rundir.ModelFile), model); err != nil {
		return nil, err
	}
	if err := rundir.WriteBound(filepath.Join(ss.dir, rundir.ResultFile), res); err != nil {
		return nil, err
	}
	return res, rundir.Seal(ss.dir, true)
}

// EvalOverridable says which config fields an evaluation may change (eval
// -set): the evaluation protocol and the fields of how instances are
// prepared that task families list (configs.EvalFields, e.g.
// task.omniglot.resize), never what was trained.
func EvalOverridable(path string) bool {
	return strings.HasPrefix(path, "eval.") || slices.Contains(configs.EvalFields(), path)
}

// Evaluate re-evaluates the solution saved in run directory dir with the
// run's own evaluation protocol and seed (or evalSeed, if not zero), writes
// evaluation.json there and returns it. With the run's seed it reproduces
// the statistics of result.json. A run without model.json (unfinished, or
// stopped on a non-finite value) is evaluated at its last good checkpoint:
// the output rule's solution at that iteration, which Result.Iterations and
// Result.Source give. sets ("field.path=value", see EvalOverridable)
// evaluate the same solution under another protocol or image preparation;
// the result records them and goes to rundir.EvalFileFor(sets).
func Evaluate(dir string, evalSeed uint64, opts Options, sets ...string) (*rundir.Result, error) {
	lock, err := rundir.Lock(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	sealed, err := rundir.Verify(dir)
	if err != nil {
		return nil, err
	}
	if err := rundir.CleanTemps(dir); err != nil {
		return nil, err
	}
	opts.warn(sealed.Note(dir))
	s, err := loadSetup(dir, opts, sets...)
	if err != nil {
		return nil, err
	}
	cfg := s.Config
	w, p, iterations, source, err := savedSolution(s, dir, sealed.Finished)
	if err != nil {
		return nil, err
	}
	if evalSeed != 0 {
		s.Config.Seed = evalSeed
	}
	start := time.Now()
	cpu := newCPUMeter(nil, true)
	defer cpu.stop()
	trainStats, testStats, err := s.evaluate(context.Background(), w, iterations, true)
	if err != nil {
		return nil, err
	}
	cpu.eval()
	res := &rundir.Result{
		Name: cfg.Name, Algorithm: cfg.Algorithm, CVaRLevel: cvarLevel(cfg), Order: cfg.Order, Seed: s.Config.Seed, Iterations: iterations,
		Output: cfg.Meta.Output, MetaTest: testStats, MetaTrain: trainStats, FinalP: p, Source: source,
		Timing: rundir.Timing{EvalSeconds: time.Since(start).Seconds(), Engine: graph.Engine(), Procs: runtime.GOMAXPROCS(0),
			EvalInstances: finalInstances(cfg), CPU: cpu.times()},
		Metric: s.Metric.Name, Overrides: sets,
	}
	return res, rundir.WriteJSON(filepath.Join(dir, rundir.EvalFileFor(sets)), res)
}

// finalInstances is the number of instances of a final evaluation: both
// splits, as Setup.evaluate draws them.
func finalInstances(cfg configs.Config) int {
	if n := cfg.Eval.FinalInstances; n > 0 {
		return 2 * n
	}
	return cfg.Eval.TrainInstances + cfg.Eval.Instances
}

// savedSolution returns the solution of the run in dir: model.json's, or,
// when the run has none, the output rule's at its checkpoint.
func savedSolution(s *Setup, dir string, finished bool) (w, p []float64, iterations int, source string, err error) {
	path := filepath.Join(dir, rundir.ModelFile)
	model, err := rundir.ReadModel(path)
	if !finished {
		// A model.json the manifest does not seal is from a kill while
		// finishing: the checkpoint is the run's state.
		err = os.ErrNotExist
	}
	if errors.Is(err, os.ErrNotExist) {
		ss, ck, err := restoreSession(s, dir)
		if err != nil {
			return nil, nil, 0, "", fmt.Errorf("%s has no finished model and no checkpoint to evaluate: %w", dir, err)
		}
		w, p = ss.tr.Solution()
		if !movesP(s.Config.Algorithm) {
			p = nil
		}
		return w, p, ck.State.Iteration, fmt.Sprintf("%s at iteration %d (no %s)", rundir.CheckpointFile, ck.State.Iteration, rundir.ModelFile), nil
	}
	if err != nil {
		return nil, nil, 0, "", err
	}
	if len(model.W) != s.Objective.NumParams() {
		return nil, nil, 0, "", fmt.Errorf("%s: w: %d parameters, the model of %s has %d", path, len(model.W), rundir.ConfigFile, s.Objective.NumParams())
	}
	return model.W, model.P, s.Config.Meta.Iterations, "", nil
}

// taskNames are the names of the tasks of set, in order.
func taskNames(set metalearn.TaskSet) []string {
	names := make([]string, set.Len())
	for i := range names {
		names[i] = set.Name(i)
	}
	return names
}

// scaleFields names the config fields, with their values, that set the
// scale of the losses before training: the initial weights, the inputs and
// the inner step.
func scaleFields(c configs.Config) string {
	f := fmt.Sprintf("model.init_std = %g, inner.alpha = %g, inner.steps = %d, meta.lr = %g", c.Model.InitStd, c.Inner.Alpha, c.Inner.Steps, c.Meta.LR)
	if fam, err := c.Family(); err == nil {
		if sf, ok := fam.(configs.ScaleFielder); ok {
			f += ", " + sf.ScaleFields(c)
		}
	}
	return f
}
