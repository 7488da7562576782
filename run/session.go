package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/shell"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// session is one training process on a run directory: the trainer, its
// optimizer, the metric files being accumulated, and the time spent.
type session struct {
	s             *Setup
	dir           string
	opt           metalearn.Optimizer
	tr            *metalearn.Trainer
	metrics, pcsv bytes.Buffer
	// cvarColumns are the CVaR levels of metrics.csv's columns: the
	// config's eval.cvar_alpha for a new run, its header's when resumed.
	cvarColumns []float64
	// tasks is tasks.csv's content, nil for a run started before the
	// file existed, which goes on without it.
	tasks              *bytes.Buffer
	trainDur, evalDur  time.Duration
	cpu                *cpuMeter
	batchSum, batchMax float64
	batchN             int
	p                  *Progress
	// prevCheckpoint is the SHA-256 of the checkpoint file the next one
	// replaces; overrides are the run's config changes (resume -override).
	prevCheckpoint string
	overrides      []string
	// kernels are the arithmetic kernel sets that trained the run, each
	// change appended (rundir.Checkpoint.Kernels); nil when a checkpoint
	// from before they were recorded leaves the earlier ones unknown.
	kernels []string
	// val evaluates the meta-validation tasks (nil without them).
	val *validation
}

// newSession starts the trainer of s at w0 in dir.
func newSession(s *Setup, dir string, w0 []float64) (*session, error) {
	ss := &session{s: s, dir: dir, opt: s.Settings.Optimizer, val: newValidation(s)}
	var err error
	if ss.tr, err = metalearn.NewTrainer(s.Objective, s.Train, w0, s.Settings); err != nil {
		return nil, err
	}
	return ss, nil
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
	if ss.val != nil {
		if err := ss.val.restore(dir, ck.State.Iteration, s.Metric.HigherIsBetter, ck.BestValSHA256); err != nil {
			return nil, rundir.Checkpoint{}, fmt.Errorf("%s cannot be resumed: %w", dir, err)
		}
	}
	return ss, ck, nil
}

// record evaluates the current iterate, appends to the metric files and
// writes them and a checkpoint. When ctx is done it stops the evaluation
// (errEvaluationStopped).
func (ss *session) record(ctx context.Context) error {
	tr := ss.tr
	start := time.Now()
	trainStats, testStats, err := ss.s.evaluate(ctx, tr.State.W, tr.State.Iteration, false)
	if err != nil && tr.State.Iteration == 0 && errors.Is(err, metalearn.ErrNonFinite) {
		return fmt.Errorf("%w; at iteration 0 nothing is trained yet, so the config's scale is to blame: %s", err, scaleFields(ss.s.Config))
	}
	if err != nil {
		return err
	}
	if ss.val != nil {
		if err := ss.val.record(ctx, ss, tr.State.W, tr.State.Iteration); err != nil {
			return err
		}
	}
	ss.evalDur += time.Since(start)
	ss.cpu.eval()
	row := rundir.MetricsRow{Iteration: tr.State.Iteration, Elapsed: ss.trainDur + ss.evalDur,
		BatchMean: math.NaN(), BatchWorst: math.NaN(), CVaRAlpha: ss.cvarColumns,
		Train: withLevels(trainStats, ss.cvarColumns, ss.s.Metric), Test: withLevels(testStats, ss.cvarColumns, ss.s.Metric)}
	if ss.batchN > 0 {
		row.BatchMean, row.BatchWorst = ss.batchSum/float64(ss.batchN), ss.batchMax
	}
	if err := row.Append(&ss.metrics); err != nil {
		return err
	}
	rundir.AppendPRow(&ss.pcsv, tr.State.Iteration, tr.State.P)
	if ss.tasks != nil {
		rundir.AppendTasksRow(ss.tasks, tr.State.Iteration, trainStats.PerTask, testStats.PerTask)
	}
	ss.batchSum, ss.batchMax, ss.batchN = 0, 0, 0
	ss.p.Evaluated(testStats.Mean, testStats.Worst, ss.s.Metric)

	if err := atomicfile.Write(filepath.Join(ss.dir, rundir.MetricsFile), ss.metrics.Bytes()); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(ss.dir, rundir.PFile), ss.pcsv.Bytes()); err != nil {
		return err
	}
	if ss.tasks != nil {
		if err := atomicfile.Write(filepath.Join(ss.dir, rundir.TasksFile), ss.tasks.Bytes()); err != nil {
			return err
		}
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
	ck := rundir.Checkpoint{State: snap, OptimizerState: ss.opt, TrainSeconds: ss.trainDur.Seconds(), EvalSeconds: ss.evalDur.Seconds(), CPU: ss.cpu.times(), Kernels: ss.kernels, Pending: pd,
		Seed: ss.s.Config.Seed, ConfigSHA256: ss.s.configHash, Previous: ss.prevCheckpoint}
	var tasks []byte
	if ss.tasks != nil {
		tasks = ss.tasks.Bytes()
	}
	ck.BindRows(ss.metrics.Bytes(), ss.pcsv.Bytes(), tasks)
	ss.val.bind(&ck)
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
	ss.clearFailed()
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
	ss.p = p
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
			recordErr = ss.record(ctx)
		}
		last = time.Now()
		ss.cpu.skip()
		return recordErr
	})
	p.Done()
	switch {
	case errors.Is(recordErr, errEvaluationStopped):
		return nil, ss.interrupt()
	case errors.Is(recordErr, metalearn.ErrNonFinite):
		return nil, ss.stopped(fmt.Errorf("evaluation at iteration %d: %w", tr.State.Iteration, recordErr))
	case recordErr != nil:
		return nil, recordErr
	case ctx.Err() != nil:
		return nil, ss.interrupt()
	case err != nil:
		return nil, ss.stopped(err)
	}

	w, pFinal := tr.Solution()
	bestIt := 0
	if cfg.Meta.Output == "best_val" {
		if ss.val.bestW == nil {
			return nil, fmt.Errorf("%s: %s does not hold the best model of iteration %d", ss.dir, rundir.BestValModelFile, ss.val.bestIt)
		}
		w, bestIt = ss.val.bestW, ss.val.bestIt
	}
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
	res := ss.s.result(cfg.Meta.Iterations, trainStats, testStats, pFinal, ss.overrides)
	res.BestValIteration = bestIt
	res.Timing = rundir.Timing{
		MsPerIteration: ss.trainDur.Seconds() * 1000 / float64(cfg.Meta.Iterations),
		TrainSeconds:   ss.trainDur.Seconds(), EvalSeconds: ss.evalDur.Seconds(),
		Engine: graph.Engine(), Procs: runtime.GOMAXPROCS(0), CPU: ss.cpu.times(),
	}
	if len(ss.kernels) > 1 {
		res.Timing.Kernels = ss.kernels
	}
	model := ss.s.record
	model.W, model.P, model.Iteration = w, res.FinalP, bestIt
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
	ss.clearFailed()
	return res, rundir.Seal(ss.dir, true)
}

// clearFailed removes the FailedFile of an earlier attempt from a run that
// went on to finish or be interrupted.
func (ss *session) clearFailed() {
	os.Remove(filepath.Join(ss.dir, rundir.FailedFile))
}

// stopped is the error of a run that stopped on err after iteration 0:
// what went wrong, what to change when the training diverged, and that the
// run directory holds the last evaluation and its checkpoint.
func (ss *session) stopped(err error) error {
	cfg := ss.s.Config
	switch {
	case errors.Is(err, metalearn.ErrMethod): // the registered name, beside the Go type the trainer names
		err = fmt.Errorf("algorithm %s: %w", cfg.Algorithm, err)
	case errors.Is(err, metalearn.ErrNonFinite), errors.Is(err, metalearn.ErrNonFiniteState):
		err = fmt.Errorf("%w; the training diverged: %s", err, makeSmaller(cfg))
	}
	err = fmt.Errorf("%s: training stopped: %w (the files in %s are from the last evaluation; trmaml eval -run %s evaluates its checkpoint)", cfg.Name, err, ss.dir, shell.Quote(ss.dir))
	// Marked failed, for trmaml status: a resume would stop the same way.
	if werr := atomicfile.Write(filepath.Join(ss.dir, rundir.FailedFile), []byte(err.Error()+"\n")); werr != nil {
		return fmt.Errorf("%w; and %s could not be written: %v", err, rundir.FailedFile, werr)
	}
	return err
}

// result is the Result of the solution of s evaluated after iterations,
// with the task distribution p if the method moves it, without timing.
func (s *Setup) result(iterations int, train, test rundir.Stats, p []float64, overrides []string) *rundir.Result {
	cfg := s.Config
	res := &rundir.Result{
		Name: cfg.Name, Algorithm: cfg.Algorithm, CVaRLevel: cvarLevel(cfg), Order: cfg.Order, Seed: cfg.Seed, Iterations: iterations,
		Output: cfg.Meta.Output, MetaTest: test, MetaTrain: train, Metric: s.Metric.Name, Overrides: overrides,
	}
	if movesP(cfg.Algorithm) {
		res.FinalP = p
	}
	return res
}

// movesP reports whether the algorithm's task distribution changes during
// training, so that result.json and model.json record its final value.
func movesP(algorithm string) bool {
	info, ok := metalearn.LookupMethod(algorithm)
	return !ok || !info.FixedP
}

// cvarLevel is what result.json records as cvar_level: the level of a
// CVaR run, 0 (omitted) for the others. The field is CVaR's alone: another
// method's swept setting (metalearn.MethodInfo.Swept) is in config.yaml,
// which is where reports read it from.
func cvarLevel(cfg configs.Config) float64 {
	if m, ok := cfg.Settings(cfg.Algorithm).(*metalearn.CVaR); ok {
		return m.Level
	}
	return 0
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
// scale of the losses before training: the initial weights (as the model
// names them), the inner step and the inputs (as the family does).
func scaleFields(c configs.Config) string {
	f := fmt.Sprintf("inner.alpha = %g, inner.steps = %d, meta.lr = %g", c.Inner.Alpha, c.Inner.Steps, c.Meta.LR)
	if m, ok := configs.LookupModel(c.Model.Kind); ok {
		if sf, ok := m.(configs.ScaleFielder); ok {
			f = sf.ScaleFields(c) + ", " + f
		}
	}
	if fam, err := c.Family(); err == nil {
		if sf, ok := fam.(configs.ScaleFielder); ok {
			f += ", " + sf.ScaleFields(c)
		}
	}
	return f
}

// withLevels is st with CVaR entries at every level of levels, so that a
// run resumed under another eval.cvar_alpha keeps filling its metrics.csv
// columns.
func withLevels(st rundir.Stats, levels []float64, m metalearn.Metric) rundir.Stats {
	have := make([]float64, len(st.CVaR))
	for i, t := range st.CVaR {
		have[i] = t.Alpha
	}
	for _, a := range levels {
		if !slices.Contains(have, a) {
			st.CVaR = append(slices.Clip(st.CVaR), tailStats(st.PerTask, []float64{a}, m)...)
		}
	}
	return st
}
