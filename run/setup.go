package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

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
	EvalValidation      metalearn.TaskSet // meta-validation tasks (nil: none), for best_val (validation.go)
	Model               graph.Model
	Objective           *graph.Objective // training graph, with meta-gradient
	Evaluator           *metalearn.Evaluator
	// Settings are the trainer's: the method, optimizer and schedule of the
	// config. Its Method and Optimizer carry training state, so a Setup
	// trains once (metalearn.Settings).
	Settings metalearn.Settings
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
	// Datasets, if not nil, keeps the data sets loaded by the runs given it
	// (such as Omniglot's decoded images, one per data root, image size,
	// resize and release), so that the runs of an experiment load them once;
	// nil loads them for each run. It is safe for concurrent use.
	Datasets *configs.DataCache
	// Progress reports training; nil reports nothing.
	Progress *Progress
	// Warnings receives one line per problem that does not stop the run
	// (an unwritable data cache); nil is os.Stderr.
	Warnings io.Writer
}

// ErrInterrupted is returned (wrapped) by a run whose context was done
// before it finished: it wrote a checkpoint at the iteration it
// reached and released its directory, and Resume continues it to the
// result it would have had without the interruption.
var ErrInterrupted = errors.New("interrupted")

// Build assembles a config into everything the engine needs: the task sets,
// the training and evaluation graphs and the trainer's settings. It refuses
// with a *configs.ConfigError what the task sets make impossible. It writes
// nothing; an Omniglot config loads the data of opts.DataRoot (once per
// opts.Datasets).
func Build(cfg configs.Config, opts Options) (*Setup, error) {
	f, err := newFamily(cfg, opts)
	if err != nil {
		return nil, err
	}
	output := metalearn.OutputRule(cfg.Meta.Output)
	if cfg.Meta.Output == "best_val" {
		output = metalearn.OutputLast // the trainer's; the session picks the best
	}
	method, err := cfg.NewMethod()
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	drawn, err := cfg.DrawnBatch() // checked by Validate
	if err != nil {
		return nil, err
	}
	in, out := f.train.Dims()
	dtype := tensor.Float64
	if cfg.Model.Dtype == "float32" {
		dtype = tensor.Float32
	}
	spec := graph.Spec{
		Model: f.model.Net, Tasks: drawn, Support: f.support, Query: f.query,
		Loss: f.loss, Score: f.metric, InShape: f.model.InShape, OutDim: out, Steps: cfg.Inner.Steps, Alpha: cfg.Inner.Alpha,
		FirstOrder: cfg.Order == "first", MetaGradient: true, Dtype: dtype, InnerName: cfg.Inner.Kind,
	}
	if f.inner.Loop != nil { // the loop holds its steps, step size and order
		spec.Inner, spec.Steps, spec.Alpha, spec.FirstOrder = f.inner.Loop, 0, 0, false
	}
	obj, err := graph.NewObjective(spec)
	if err != nil {
		return nil, err
	}
	// The evaluation graph: eval.batch instances of eval.query query points,
	// eval.steps inner steps, no meta-gradient.
	spec.Tasks, spec.Query, spec.MetaGradient, spec.FirstOrder = cfg.Eval.Batch, f.evalQuery, false, false
	if spec.Inner == nil {
		spec.Steps = f.evalSteps
	} else {
		spec.Inner = f.evalInner.Loop
	}
	evalObj, err := graph.NewObjective(spec)
	if err != nil {
		return nil, err
	}
	if evalObj.NumParams() != obj.NumParams() {
		return nil, &configs.ConfigError{Field: "eval.steps", Problem: fmt.Sprintf("inner loop %s has %d meta-parameters at %d steps and %d at inner.steps = %d: evaluate it with inner.steps (eval.steps 0)",
			cfg.Inner.Kind, evalObj.NumParams(), f.evalSteps, obj.NumParams(), cfg.Inner.Steps)}
	}
	evalObj.ShareBuffers(obj) // evaluation and training run in turn
	net, err := json.Marshal(f.model.Record)
	if err != nil {
		return nil, err
	}
	opt, err := metalearn.NewOptimizer(cfg.Meta.Optimizer, cfg.Meta.LR, obj.NumParams())
	if err != nil {
		return nil, err
	}
	schedule, err := metalearn.NewSchedule(cfg.Meta.Schedule, cfg.Meta.LR, cfg.Meta.LRMin, cfg.Meta.Iterations)
	if err != nil {
		return nil, err
	}
	initModel, own, n := f.init, f.inner.Own, obj.NumParams()
	s := &Setup{
		Config: cfg, Train: f.train, Test: f.test, EvalTrain: f.evalTrain, EvalTest: f.evalTest, EvalValidation: f.evalValidation,
		Model: f.model.Net, Objective: obj,
		Evaluator: metalearn.NewEvaluator(evalObj, f.support, f.evalQuery, in, out),
		Metric:    metalearn.MSE,
		Score: func(w []float64, b *metalearn.Batch, out []float64) error {
			return evalObj.Losses(w, b, nil, out, nil)
		},
		Settings: metalearn.Settings{
			Method: method, Iterations: cfg.Meta.Iterations, Batch: drawn, Support: f.support, Query: f.query,
			BallRadius: cfg.Meta.BallRadius, Output: output,
			Optimizer: opt, Schedule: schedule, Seed: cfg.Seed, Warn: opts.warn,
		},
		Support: f.support, Query: f.query, record: rundir.Model{Kind: cfg.Model.Kind, Net: net},
		// The model's parameters, then the inner loop's own (learned step
		// sizes), all at own.
		init: func(rng *rand.Rand) ([]float64, error) {
			w, err := initModel(rng)
			if err != nil {
				return nil, err
			}
			for len(w) < n {
				w = append(w, own)
			}
			return w, nil
		},
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
	return s, nil
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
	cfg, err := configs.ParseRecorded(cfgPath, yml)
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

// warn writes line (if not empty) to o.Warnings.
func (o Options) warn(line string) {
	if line == "" {
		return
	}
	w := o.Warnings
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintln(w, line)
}
