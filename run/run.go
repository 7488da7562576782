package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
	"gorgonia.org/tensor"
)

// Setup is everything a config describes, built and ready: the task sets,
// the model and its training and evaluation graphs.
type Setup struct {
	Config configs.Config
	Train  metalearn.TaskSet
	Test   metalearn.TaskSet
	// EvalTrain and EvalTest are the sets evaluation draws from: Train and
	// Test, or their twins with eval.query query images per class when an
	// Omniglot config scores evaluation on another number than training.
	EvalTrain, EvalTest metalearn.TaskSet
	Model               graph.Model
	Objective           *graph.Objective // training graph, with meta-gradient
	Evaluator           *metalearn.Evaluator
	// Metric is what the evaluation statistics measure; result.json names it.
	Metric metalearn.Metric
	// Score gives the evaluated value of every instance of a batch, in
	// Metric: the post-adaptation query loss (MSE) or query accuracy of the
	// evaluation graph.
	Score metalearn.Scorer
	// Support and Query are the points of a training instance (for Omniglot
	// ways times the per-class counts of the config).
	Support, Query int
	// init draws the initial meta-parameters; record describes the model in
	// model.json.
	init   func(rng *rand.Rand) ([]float64, error)
	record rundir.Model
	// configHash is the SHA-256 of the run's config.yaml, which its
	// checkpoints carry.
	configHash string
	// warnings is Options.Warnings (nil: os.Stderr).
	warnings io.Writer
}

// Options are the settings of a run that are not part of its config: where
// this machine keeps the data, what the runs of one process share, how
// progress is shown. None is written into the run directory.
type Options struct {
	// DataRoot, if not empty, is the data root of Omniglot runs, overriding
	// the config's data.root (the -data flag of the CLI). Where the data lies
	// is a property of the machine, not of the experiment, so a run moved to
	// another machine resumes with that machine's DataRoot.
	DataRoot string
	// DataRelease, if not nil, is the content the data root must hold
	// instead of the family's published dataset, in the family's own type
	// (configs.Env.Release). Omniglot takes an *omniglot.Release: a program
	// that trains on its own data in Omniglot's layout sets it from
	// omniglot.Describe, as the tests do for their synthetic fixture.
	DataRelease any
	// Datasets, if not nil, keeps the data sets loaded by the runs given it,
	// so that the runs of an experiment load them once; nil loads them for
	// each run.
	Datasets *Datasets
	// Progress reports training; nil reports nothing.
	Progress *Progress
	// Warnings receives one line per problem that does not stop the run
	// (an unwritable data cache); nil is os.Stderr.
	Warnings io.Writer
	// Context, if not nil, stops training between two iterations when it is
	// done: the run checkpoints at the iteration it reached and returns
	// ErrInterrupted.
	Context context.Context
}

// ErrInterrupted is returned (wrapped) by a run whose Options.Context was
// done before it finished: it wrote a checkpoint at the iteration it
// reached and released its directory, and Resume continues it to the
// result it would have had without the interruption.
var ErrInterrupted = errors.New("interrupted")

// context is opts.Context, or a context never done.
func (opts Options) context() context.Context {
	if opts.Context == nil {
		return context.Background()
	}
	return opts.Context
}

// ConfigError is a config that passes field-by-field validation but cannot
// be built, such as too few evaluation instances for its task sets. It
// names the field; the caller adds the file.
type ConfigError = configs.ConfigError

// Build assembles a Setup from a config, refusing with a *ConfigError what
// the task sets make impossible. It writes nothing; an Omniglot config loads
// the data of opts.DataRoot (once per opts.Datasets).
func Build(cfg configs.Config, opts Options) (*Setup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f, err := newFamily(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := checkInstances(cfg, f.train.Len(), f.test.Len()); err != nil {
		return nil, err
	}
	_, out := f.train.Dims()
	drawn, err := cfg.DrawnBatch()
	if err != nil {
		return nil, err
	}
	dtype := tensor.Float64
	if cfg.Model.Dtype == "float32" {
		dtype = tensor.Float32
	}
	spec := graph.Spec{
		Model: f.model, Tasks: drawn, Support: f.support, Query: f.query,
		Loss: f.loss, Score: f.metric, InShape: f.inShape, OutDim: out, Steps: cfg.Inner.Steps, Alpha: cfg.Inner.Alpha,
		FirstOrder: cfg.Order == "first", MetaGradient: true, Dtype: dtype,
	}
	obj, err := graph.NewObjective(spec)
	if err != nil {
		return nil, err
	}
	spec.Tasks, spec.Query, spec.MetaGradient, spec.FirstOrder = cfg.Eval.Batch, f.evalQuery, false, false
	evalObj, err := graph.NewObjective(spec)
	if err != nil {
		return nil, err
	}
	evalObj.ShareBuffers(obj) // evaluation and training run in turn
	in, _ := f.train.Dims()
	s := &Setup{
		Config: cfg, Train: f.train, Test: f.test, EvalTrain: f.evalTrain, EvalTest: f.evalTest,
		Model: f.model, Objective: obj,
		Evaluator: metalearn.NewEvaluator(evalObj, f.support, f.evalQuery, in, out),
		Metric:    metalearn.MSE,
		Score: func(w []float64, b *metalearn.Batch, out []float64) error {
			return evalObj.Losses(w, b, nil, out, nil)
		},
		Support: f.support, Query: f.query, init: f.init, record: f.record,
	}
	if name := evalObj.Metric(); name != "" {
		if s.Metric, err = metalearn.MetricNamed(name); err != nil {
			return nil, err
		}
		losses := make([]float64, evalObj.Tasks())
		s.Score = func(w []float64, b *metalearn.Batch, out []float64) error {
			return evalObj.LossesMetric(w, b, nil, losses, out, nil)
		}
	}
	s.warnings = opts.Warnings
	return s, nil
}

// warn writes a line that does not stop the run to Options.Warnings.
func (s *Setup) warn(msg string) {
	w := s.warnings
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintln(w, msg)
}

// checkInstances refuses evaluation counts that leave a task unmeasured.
func checkInstances(cfg configs.Config, train, test int) error {
	e := cfg.Eval
	for _, c := range []struct {
		field string
		v, n  int
		what  string
	}{
		{"eval.instances", e.Instances, test, "meta-test"},
		{"eval.train_instances", e.TrainInstances, train, "meta-training"},
		{"eval.final_instances", e.FinalInstances, max(train, test), "meta-training or meta-test"},
	} {
		if c.v < c.n && (c.field != "eval.final_instances" || c.v != 0) {
			return &ConfigError{Field: c.field, Problem: fmt.Sprintf("%d is too few: must be >= %d, the number of %s tasks, so that every task is measured", c.v, c.n, c.what)}
		}
	}
	return nil
}

// evalRNG is the generator of the evaluation of one task set at a given
// iteration: derived from the seed, the set and the iteration alone, so
// evaluations never disturb the training stream, a re-evaluation draws the
// same instances, and no two (seed, set, iteration) share a stream.
func evalRNG(seed uint64, iteration int, set string) *rand.Rand {
	stream := uint64(0x74657374) // "test"
	if set == "train" {
		stream = 0x74726e // "trn"
	}
	return rand.New(rand.NewPCG(seed, stream<<32|uint64(iteration)))
}

func newStats(s metalearn.TaskStats, set metalearn.TaskSet, cvar []float64, m metalearn.Metric) rundir.Stats {
	names := make([]string, set.Len())
	total := 0
	for i := range names {
		names[i] = set.Name(i)
		total += s.Count[i]
	}
	return rundir.Stats{
		Mean: s.Mean, WeightedMean: s.WeightedMean, Worst: s.Worst, WorstTask: names[s.WorstTask],
		Std: s.Std, Instances: total, PerTask: s.PerTask, Tasks: names, Masses: masses(set),
		CVaR: tailStats(s.PerTask, cvar, m),
	}
}

// tailStats is CVaR_alpha of the per-task values at each level.
func tailStats(perTask, levels []float64, m metalearn.Metric) []rundir.TailStat {
	var out []rundir.TailStat
	for _, a := range levels {
		out = append(out, rundir.TailStat{Alpha: a, Value: metalearn.TailMean(perTask, a, m)})
	}
	return out
}

// errEvaluationStopped is returned (wrapped) by an evaluation whose context
// was done: the caller checkpoints and returns ErrInterrupted.
var errEvaluationStopped = errors.New("evaluation stopped")

// evaluate measures w on both task sets with the evaluation generators of
// the given iteration: with eval.instances and eval.train_instances during
// training, with eval.final_instances (if set) for a final solution. When
// ctx is done it stops before its next batch of instances and returns
// errEvaluationStopped (the final evaluation of a paper-scale 20-way run
// takes tens of minutes, longer than Slurm's warning before a time limit).
func (s *Setup) evaluate(ctx context.Context, w []float64, iteration int, final bool) (train, test rundir.Stats, err error) {
	cfg := s.Config
	trainN, testN := cfg.Eval.TrainInstances, cfg.Eval.Instances
	if final && cfg.Eval.FinalInstances > 0 {
		trainN, testN = cfg.Eval.FinalInstances, cfg.Eval.FinalInstances
	}
	score := s.Score
	if done := ctx.Done(); done != nil {
		score = func(w []float64, b *metalearn.Batch, out []float64) error {
			select {
			case <-done:
				return errEvaluationStopped
			default:
				return s.Score(w, b, out)
			}
		}
	}
	tr, err := s.Evaluator.EvaluateScore(w, s.EvalTrain, trainN, evalRNG(cfg.Seed, iteration, "train"), s.Metric, score)
	if err != nil {
		return rundir.Stats{}, rundir.Stats{}, fmt.Errorf("evaluating on the meta-training tasks: %w", err)
	}
	te, err := s.Evaluator.EvaluateScore(w, s.EvalTest, testN, evalRNG(cfg.Seed, iteration, "test"), s.Metric, score)
	if err != nil {
		return rundir.Stats{}, rundir.Stats{}, fmt.Errorf("evaluating on the meta-test tasks: %w", err)
	}
	return newStats(tr, s.EvalTrain, cfg.Eval.CVaRAlpha, s.Metric), newStats(te, s.EvalTest, cfg.Eval.CVaRAlpha, s.Metric), nil
}
