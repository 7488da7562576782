package run

import (
	"fmt"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/innerloops"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models"
	_ "github.com/trmaml/trmaml/models/builtin/engines" // the built-in models
	_ "github.com/trmaml/trmaml/tasks"                  // the built-in task families
	_ "github.com/trmaml/trmaml/tasks/omniglot/data"    // and the data side of those that read files
)

// family is what a config's task family and model contribute to a Setup:
// its task sets, the model built on their points, and how a graph of it
// is built.
type family struct {
	train, test, evalTrain, evalTest metalearn.TaskSet
	evalValidation                   metalearn.TaskSet // nil: no meta-validation tasks
	model                            models.Built
	inner                            innerloops.Built
	io                               configs.IO
	loss                             graph.Loss
	metric                           graph.Score // nil: the loss is the metric
	support, query, evalQuery        int         // points per instance
}

// newFamily builds the task sets of cfg's registered family, the
// registered model of model.kind on the family's points (configs.IO) and
// the registered inner loop of inner.kind:
// class scores train with softmax cross-entropy and are scored by
// accuracy, regression with the squared error.
func newFamily(cfg configs.Config, opts Options) (*family, error) {
	fam, err := cfg.Family()
	if err != nil {
		return nil, err
	}
	model, err := models.Named(cfg.Model.Kind)
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
	if err := checkInstances(cfg, sets.Train.Len(), sets.Test.Len()); err != nil {
		return nil, err
	}
	if cfg.Meta.Output == "best_val" && sets.EvalValidation == nil {
		return nil, &configs.ConfigError{Field: "meta.output", Problem: fmt.Sprintf("best_val needs meta-validation tasks, and this config's %s tasks have none", cfg.Task.Family)}
	}
	built, err := model.Build(cfg.Model.Section(), io)
	if err != nil {
		return nil, err
	}
	loop, err := innerloops.Named(cfg.Inner.Kind)
	if err != nil {
		return nil, err
	}
	inner, err := loop.Build(cfg, cfg.Order == "first")
	if err != nil {
		return nil, err
	}
	f := &family{
		train: sets.Train, test: sets.Test, evalTrain: sets.EvalTrain, evalTest: sets.EvalTest,
		model: built, inner: inner, io: io, loss: graph.MSELoss,
		support: sets.Support, query: sets.Query, evalQuery: sets.EvalQuery, evalValidation: sets.EvalValidation,
	}
	if io.Classes {
		f.loss, f.metric = graph.SoftmaxCrossEntropy, graph.Accuracy
	}
	return f, nil
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
			return &configs.ConfigError{Field: c.field, Problem: fmt.Sprintf("%d is too few: must be >= %d, the number of %s tasks, so that every task is measured", c.v, c.n, c.what)}
		}
	}
	return nil
}
