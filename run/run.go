// Package run turns an experiment configuration into a run directory: it
// assembles the task family, model graph, trainer and evaluator the config
// names, trains with progress reporting, evaluates every few iterations, and
// writes the resolved config, metrics.csv, p.csv, checkpoint.json,
// model.json and result.json. Files are written to a temporary name and
// renamed (package atomicfile), so a crash never leaves one half-written.
package run

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/tensor"
)

// File names inside a run directory.
const (
	ConfigFile     = "config.yaml"
	MetricsFile    = "metrics.csv"
	PFile          = "p.csv"
	CheckpointFile = "checkpoint.json"
	ModelFile      = "model.json"
	ResultFile     = "result.json"
	EvalFile       = "evaluation.json"
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
	record Model
}

// ConfigError is a config that passes field-by-field validation but cannot
// be built, such as too few evaluation instances for its task sets. It
// names the field; the caller adds the file.
type ConfigError = configs.ConfigError

// Build assembles a Setup from a config, refusing with a *ConfigError what
// the task sets make impossible. It writes nothing; an Omniglot config loads
// the data (once per process, see DataRoot).
func Build(cfg configs.Config) (*Setup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f, err := newFamily(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkInstances(cfg, f.train.Len(), f.test.Len()); err != nil {
		return nil, err
	}
	_, out := f.train.Dims()
	dtype := tensor.Float64
	if cfg.Model.Dtype == "float32" {
		dtype = tensor.Float32
	}
	spec := graph.Spec{
		Model: f.model, Tasks: cfg.Meta.Batch, Support: f.support, Query: f.query,
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
	return s, nil
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

// Stats are one evaluation of a task set, as stored in result.json, in the
// run's metric (Result.Metric): Worst is the largest MSE but the smallest
// accuracy.
type Stats struct {
	Mean         float64   `json:"mean"`
	WeightedMean float64   `json:"weighted_mean"`
	Worst        float64   `json:"worst"`
	WorstTask    string    `json:"worst_task"`
	Std          float64   `json:"std"`
	Instances    int       `json:"instances"`
	PerTask      []float64 `json:"per_task"`
	Tasks        []string  `json:"tasks"`
	// Masses are the tasks' TaskSet.Mass, the relative weights of the
	// training distribution (C(Z_i, N) up to a factor for Omniglot alphabets):
	// what WeightedMean weighs by. Run directories written before the field
	// existed hold only sinusoid tasks, whose masses are all 1, and are read
	// so.
	Masses []float64 `json:"masses"`
}

func newStats(s metalearn.TaskStats, set metalearn.TaskSet) Stats {
	names := make([]string, set.Len())
	total := 0
	for i := range names {
		names[i] = set.Name(i)
		total += s.Count[i]
	}
	return Stats{
		Mean: s.Mean, WeightedMean: s.WeightedMean, Worst: s.Worst, WorstTask: names[s.WorstTask],
		Std: s.Std, Instances: total, PerTask: s.PerTask, Tasks: names, Masses: masses(set),
	}
}

// evaluate measures w on both task sets with the evaluation generators of
// the given iteration: with eval.instances and eval.train_instances during
// training, with eval.final_instances (if set) for a final solution.
func (s *Setup) evaluate(w []float64, iteration int, final bool) (train, test Stats, err error) {
	cfg := s.Config
	trainN, testN := cfg.Eval.TrainInstances, cfg.Eval.Instances
	if final && cfg.Eval.FinalInstances > 0 {
		trainN, testN = cfg.Eval.FinalInstances, cfg.Eval.FinalInstances
	}
	tr, err := s.Evaluator.EvaluateScore(w, s.EvalTrain, trainN, evalRNG(cfg.Seed, iteration, "train"), s.Metric, s.Score)
	if err != nil {
		return Stats{}, Stats{}, fmt.Errorf("evaluating on the meta-training tasks: %w", err)
	}
	te, err := s.Evaluator.EvaluateScore(w, s.EvalTest, testN, evalRNG(cfg.Seed, iteration, "test"), s.Metric, s.Score)
	if err != nil {
		return Stats{}, Stats{}, fmt.Errorf("evaluating on the meta-test tasks: %w", err)
	}
	return newStats(tr, s.EvalTrain), newStats(te, s.EvalTest), nil
}

// ErrRunExists is returned when the output directory already holds files:
// a run directory is never overwritten.
var ErrRunExists = errors.New("run directory already exists and is not empty")

// createRunDir makes dir and takes its lock, refusing a directory with
// content other than the lock and interrupted writes' temporary files (which
// it removes).
func createRunDir(dir string) (*dirlock.Lock, error) {
	if err := refuseContent(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := openRunDir(dir)
	if err != nil {
		return nil, err
	}
	// Again under the lock: another process may have started meanwhile.
	if err := refuseContent(dir); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// refuseContent refuses a directory holding anything but a lock file and
// temporary files; a missing directory is fine.
func refuseContent(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == dirlock.Name || atomicfile.IsTemp(e.Name()) {
			continue
		}
		if fileExists(filepath.Join(dir, ConfigFile)) && !fileExists(filepath.Join(dir, ResultFile)) {
			return fmt.Errorf("%s: %w: it holds an unfinished run (continue it with trmaml resume -run %s)", dir, ErrRunExists, dir)
		}
		return fmt.Errorf("%s: %w (choose a new -out, or remove it yourself)", dir, ErrRunExists)
	}
	return nil
}

// openRunDir takes the lock of the existing run directory dir, so that no
// other process writes it meanwhile, and removes the temporary files of
// writes a crash interrupted.
func openRunDir(dir string) (*dirlock.Lock, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	lock, err := dirlock.Acquire(dir)
	if err != nil {
		return nil, err
	}
	if _, err := atomicfile.CleanTemps(dir); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
