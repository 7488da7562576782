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
	_ "github.com/trmaml/trmaml/tasks/omniglot/load"    // and the data side of those that read files
)

// family is what a config's task family and model contribute to a Setup:
// its task sets, the model built on their points, and how a graph of it
// is built.
type family struct {
	train, test, evalTrain, evalTest metalearn.TaskSet
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
		support: sets.Support, query: sets.Query, evalQuery: sets.EvalQuery,
	}
	if io.Classes {
		f.loss, f.metric = graph.SoftmaxCrossEntropy, graph.Accuracy
	}
	return f, nil
}
