package run

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/data/omniglot"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// Datasets holds the Omniglot data loaded by the runs given it
// (Options.Datasets), one per data root, image size and resize: the runs of an
// experiment share it (sampling only reads it). The zero value is empty and
// ready; it is safe for concurrent use.
type Datasets struct {
	mu sync.Mutex
	m  map[datasetKey]*omniglot.Dataset
}

type datasetKey struct {
	dir     string
	size    int
	resize  omniglot.Resize
	content string // the release's content hash
}

// loadOmniglot returns the dataset of the resolved data root, loading it
// unless opts.Datasets holds it.
func loadOmniglot(cfg configs.Config, opts Options) (*omniglot.Dataset, error) {
	root, err := omniglot.ResolveRoot(opts.DataRoot, cfg.Data.Root)
	if err != nil {
		return nil, err
	}
	key := datasetKey{root.Dir, cfg.Task.Omniglot.ImageSize, omniglot.Resize(cfg.Task.Omniglot.Resize), omniglot.ContentSHA256}
	if opts.DataRelease != nil {
		key.content = opts.DataRelease.ContentSHA256
	}
	datasets := opts.Datasets
	if datasets == nil {
		datasets = new(Datasets)
	}
	datasets.mu.Lock()
	defer datasets.mu.Unlock()
	if d := datasets.m[key]; d != nil {
		return d, nil
	}
	d, err := omniglot.Load(root.Dir, omniglot.Options{Size: key.size, Resize: key.resize, Release: opts.DataRelease})
	if err != nil {
		err = root.Annotate(err)
		if errors.Is(err, omniglot.ErrMissing) {
			return nil, &ConfigError{Field: "data.root", Problem: err.Error()}
		}
		return nil, err
	}
	if d.Info.CacheErr != nil {
		// One line, once per loaded data set: the run is unaffected,
		// but every start decodes the images again.
		w := opts.Warnings
		if w == nil {
			w = os.Stderr
		}
		fmt.Fprintf(w, "trmaml: warning: the decoded Omniglot cache %s cannot be written, so the images are decoded again on every start: %v\n", d.Info.CachePath, d.Info.CacheErr)
	}
	if datasets.m == nil {
		datasets.m = map[datasetKey]*omniglot.Dataset{}
	}
	datasets.m[key] = d
	return d, nil
}

// omniglotFamily is N-way classification of Omniglot characters with
// alphabets as tasks (25 meta-training, 20 meta-test) and MAML's CNN.
func omniglotFamily(cfg configs.Config, opts Options) (*family, error) {
	d, err := loadOmniglot(cfg, opts)
	if err != nil {
		return nil, err
	}
	oc, t := cfg.Task.Omniglot, cfg.Task
	sets := func(queries int, rotate bool) (train, test metalearn.TaskSet, err error) {
		spec := omniglot.Spec{Ways: oc.Ways, Shots: t.Support, Queries: queries, Rotate: rotate}
		tr, err := omniglot.NewTaskSet(d, omniglot.Train, spec)
		if err != nil {
			return nil, nil, &ConfigError{Field: "task.omniglot.ways", Problem: err.Error()}
		}
		te, err := omniglot.NewTaskSet(d, omniglot.Test, spec)
		if err != nil {
			return nil, nil, &ConfigError{Field: "task.omniglot.ways", Problem: err.Error()}
		}
		return tr, te, nil
	}
	train, test, err := sets(t.Query, oc.Rotate)
	if err != nil {
		return nil, err
	}
	evalTrain, evalTest := train, test
	if cfg.Eval.Query != t.Query || oc.RotateEval != oc.Rotate {
		if evalTrain, evalTest, err = sets(cfg.Eval.Query, oc.RotateEval); err != nil {
			return nil, err
		}
	}
	n := cfg.Model.CNN
	cnn, err := graph.NewCNN(d.Size(), d.Size(), 1, n.Filters, n.Blocks, oc.Ways, n.AdaptBN)
	if err != nil {
		return nil, &ConfigError{Field: "model.cnn", Problem: err.Error()}
	}
	return &family{
		train: train, test: test, evalTrain: evalTrain, evalTest: evalTest, model: cnn,
		init:   func(rng *rand.Rand) ([]float64, error) { return cnn.Init(rng), nil },
		record: rundir.Model{CNN: (*rundir.CNN)(&cnn)},
		loss:   graph.SoftmaxCrossEntropy, metric: graph.Accuracy, inShape: cnn.InShape(),
		support: oc.Ways * t.Support, query: oc.Ways * t.Query, evalQuery: oc.Ways * cfg.Eval.Query,
	}, nil
}
