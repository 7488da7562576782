package run

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/rundir"
)

// Train runs cfg into the new directory dir, reporting progress to
// opts.Progress. It holds dir's lock while it writes. On a non-finite loss or
// state it stops with an error and leaves the files of the last evaluation,
// including its checkpoint. When ctx is done it checkpoints and returns
// ErrInterrupted. A run that finishes with a DivergenceWarning gets it in
// opts.Warnings.
func Train(ctx context.Context, cfg configs.Config, dir string, opts Options) (*rundir.Result, error) {
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
	res, err := start(ctx, s, dir, opts.Progress, nil)
	if err == nil {
		warnDiverged(opts, dir, cfg)
	}
	return res, err
}

// start trains s from iteration 0 in dir, which holds its config.yaml and
// nothing else that counts: the metric files are written afresh.
func start(ctx context.Context, s *Setup, dir string, p *Progress, overrides []string) (*rundir.Result, error) {
	train, test := taskNames(s.Train), taskNames(s.Test)
	w0, err := s.init(rand.New(rand.NewPCG(s.Config.Seed, 0x696e6974)))
	if err != nil {
		return nil, err
	}
	ss, err := newSession(s, dir, w0)
	if err != nil {
		return nil, err
	}
	ss.overrides = overrides
	ss.kernels = []string{graph.Kernels()}
	ss.cvarColumns = s.Config.Eval.CVaRAlpha
	ss.metrics.WriteString(rundir.MetricsHeaderFor(s.Metric.Name, ss.cvarColumns...))
	ss.pcsv.WriteString(rundir.PHeader(train))
	ss.tasks = bytes.NewBufferString(rundir.TasksHeader(train, test))
	ss.p = p
	ss.cpu = newCPUMeter(nil, true)
	defer ss.cpu.stop()
	if err := ss.record(ctx); errors.Is(err, errEvaluationStopped) {
		return nil, ss.interrupt() // before the first checkpoint: resume starts again
	} else if err != nil {
		return nil, err
	}
	return ss.train(ctx, p)
}
