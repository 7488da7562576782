package run

import (
	"fmt"
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/innerloops"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models"
	_ "github.com/trmaml/trmaml/models/builtin/engines" // the built-in models
	_ "github.com/trmaml/trmaml/tasks"                  // the built-in task families
	_ "github.com/trmaml/trmaml/tasks/omniglot/data"    // and the data side of those that read files
)

// family is what a config's registered parts contribute to a Setup: the
// task family's sets, the model built on their points, the inner loop
// built for training and for evaluation, and the initial meta-parameters.
type family struct {
	train, test, evalTrain, evalTest metalearn.TaskSet
	evalValidation                   metalearn.TaskSet // nil: no meta-validation tasks
	model                            models.Built
	// inner is the loop of inner.kind as training runs it, evalInner as
	// evaluation does, with eval.steps.
	inner, evalInner          innerloops.Built
	evalSteps                 int
	loss                      graph.Loss
	metric                    graph.Score // nil: the loss is the metric
	support, query, evalQuery int         // points per instance
	// init draws the model's parameters (read from init.from if set);
	// the inner loop's own follow them.
	init func(rng *rand.Rand) ([]float64, error)
}

// newFamily checks cfg and builds its registered parts: the task sets of
// its family, the model of model.kind on the family's points (configs.IO)
// and the inner loop of inner.kind. Class scores train with softmax
// cross-entropy and are scored by accuracy, regression with the squared
// error. It is the only place that looks the parts up by name.
func newFamily(cfg configs.Config, opts Options) (*family, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fam, err := cfg.Family()
	if err != nil {
		return nil, err
	}
	sets, err := fam.Tasks(cfg, configs.Env{DataRoot: opts.DataRoot, Cache: opts.Datasets, Release: opts.DataRelease, Warnings: opts.Warnings})
	if err != nil {
		return nil, err
	}
	io := fam.IO(cfg)
	if sets.IO != nil {
		io = *sets.IO
	}
	if in, out := sets.Train.Dims(); in != io.Inputs() || out != io.Outputs {
		return nil, fmt.Errorf("run: task family %q: its tasks have %d inputs and %d outputs, its IO says %s", fam.Name(), in, out, io)
	}
	if err := cfg.CheckSets(sets.Train.Len(), sets.Test.Len(), sets.EvalValidation != nil); err != nil {
		return nil, err
	}
	model, err := models.Named(cfg.Model.Kind)
	if err != nil {
		return nil, err
	}
	built, err := model.Build(cfg.Model.Section(), io)
	if err != nil {
		return nil, err
	}
	f := &family{
		train: sets.Train, test: sets.Test, evalTrain: sets.EvalTrain, evalTest: sets.EvalTest,
		model: built, loss: graph.MSELoss, evalSteps: cfg.EvalSteps(), init: built.Init,
		support: sets.Support, query: sets.Query, evalQuery: sets.EvalQuery, evalValidation: sets.EvalValidation,
	}
	if io.Classes {
		f.loss, f.metric = graph.SoftmaxCrossEntropy, graph.Accuracy
	}
	loop, err := innerloops.Named(cfg.Inner.Kind)
	if err != nil {
		return nil, err
	}
	if f.inner, err = loop.Build(cfg, cfg.Order == "first"); err != nil {
		return nil, fmt.Errorf("inner loop %q: %w", cfg.Inner.Kind, err)
	}
	f.evalInner = f.inner
	if f.evalSteps != cfg.Inner.Steps && f.inner.Loop != nil { // graph's default loop takes the steps in the spec
		c := cfg
		c.Inner.Steps = f.evalSteps
		if f.evalInner, err = loop.Build(c, false); err != nil {
			return nil, fmt.Errorf("inner loop %q at eval.steps = %d: %w", cfg.Inner.Kind, c.Inner.Steps, err)
		}
	}
	if cfg.Init.From != "" {
		f.init, err = models.InitFrom(cfg, io, built)
	}
	return f, err
}
