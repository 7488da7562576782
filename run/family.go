package run

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
	_ "github.com/trmaml/trmaml/tasks"               // the built-in task families
	_ "github.com/trmaml/trmaml/tasks/omniglot/load" // and the data side of those that read files
)

// family is what a config's task family contributes to a Setup: its task
// sets, the model that fits them, and how a graph of it is built.
type family struct {
	train, test, evalTrain, evalTest metalearn.TaskSet
	evalValidation                   metalearn.TaskSet // nil: no meta-validation tasks
	model                            graph.Model
	init                             func(rng *rand.Rand) ([]float64, error)
	record                           rundir.Model
	loss                             graph.Loss
	metric                           graph.Score // nil: the loss is the metric
	inShape                          []int
	support, query, evalQuery        int // points per instance
}

// newFamily builds the task sets of cfg's registered family and the model
// of the kind the family names (configs.Family.Model).
func newFamily(cfg configs.Config, opts Options) (*family, error) {
	fam, err := cfg.Family()
	if err != nil {
		return nil, err
	}
	sets, err := fam.Tasks(cfg, configs.Env{DataRoot: opts.DataRoot, Cache: opts.Datasets, Release: opts.DataRelease, Warnings: opts.Warnings})
	if err != nil {
		return nil, err
	}
	f := &family{
		train: sets.Train, test: sets.Test, evalTrain: sets.EvalTrain, evalTest: sets.EvalTest,
		support: sets.Support, query: sets.Query, evalQuery: sets.EvalQuery, evalValidation: sets.EvalValidation,
	}
	in, out := sets.Train.Dims()
	switch kind := fam.Model(); kind {
	case "mlp":
		sizes := append(append([]int{in}, cfg.Model.Hidden...), out)
		mlp, err := graph.NewMLP(sizes, graph.Activation(cfg.Model.Activation))
		if err != nil {
			return nil, err
		}
		f.model, f.loss, f.inShape = mlp, graph.MSELoss, []int{in}
		f.init = func(rng *rand.Rand) ([]float64, error) {
			return mlp.Init(graph.Init(cfg.Model.Init), cfg.Model.InitStd, rng)
		}
		f.record = rundir.Model{Sizes: mlp.Sizes, Activation: string(mlp.Activation)}
	case "cnn":
		side := int(math.Round(math.Sqrt(float64(in))))
		if side*side != in {
			return nil, fmt.Errorf("run: task family %q: the CNN needs square one-channel images, got %d inputs", fam.Name(), in)
		}
		n := cfg.Model.CNN
		cnn, err := graph.NewCNN(side, side, 1, n.Filters, n.Blocks, out, n.AdaptBN)
		if err != nil {
			return nil, &configs.ConfigError{Field: "model.cnn", Problem: err.Error()}
		}
		f.model, f.loss, f.metric, f.inShape = cnn, graph.SoftmaxCrossEntropy, graph.Accuracy, cnn.InShape()
		f.init = func(rng *rand.Rand) ([]float64, error) { return cnn.Init(rng), nil }
		f.record = rundir.Model{CNN: (*rundir.CNN)(&cnn)}
	default:
		return nil, fmt.Errorf("run: task family %q asks for model %q: want mlp or cnn", fam.Name(), kind)
	}
	return f, nil
}
