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
	"github.com/trmaml/trmaml/data"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/metalearn"
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
	Config    configs.Config
	Train     metalearn.TaskSet
	Test      metalearn.TaskSet
	Model     graph.MLP
	Objective *graph.Objective // training graph, with meta-gradient
	Evaluator *metalearn.Evaluator
	// Metric is what the evaluation statistics measure; result.json names it.
	Metric metalearn.Metric
	// Score gives the evaluated value of every instance of a batch, in
	// Metric: the post-adaptation query loss of the evaluation graph.
	Score metalearn.Scorer
}

// ConfigError is a config that passes field-by-field validation but cannot
// be built, such as too few evaluation instances for its task sets. It
// names the field; the caller adds the file.
type ConfigError struct {
	Field, Problem string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Problem }

// Build assembles a Setup from a config, refusing with a *ConfigError what
// the task sets make impossible. It writes nothing.
func Build(cfg configs.Config) (*Setup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Task.Family != "sinusoid" {
		return nil, fmt.Errorf("run: task family %q is not available (allowed: sinusoid)", cfg.Task.Family)
	}
	sc := cfg.Task.Sinusoid
	train, test, err := data.NewSinusoid(data.SinusoidSpec{
		PhaseMax: float64(sc.PhaseMax), XMin: sc.XMin, XMax: sc.XMax, TaskWidth: sc.TaskWidth,
		TestAmplitudes: sc.TestAmplitudes, TrainAmplitudes: sc.TrainAmplitudes,
	})
	if err != nil {
		return nil, &ConfigError{Field: "task.sinusoid", Problem: err.Error()}
	}
	if cfg.Eval.Instances < test.Len() {
		return nil, &ConfigError{Field: "eval.instances", Problem: fmt.Sprintf("%d is too few: must be >= %d, the number of meta-test tasks, so that every task is measured", cfg.Eval.Instances, test.Len())}
	}
	if cfg.Eval.TrainInstances < train.Len() {
		return nil, &ConfigError{Field: "eval.train_instances", Problem: fmt.Sprintf("%d is too few: must be >= %d, the number of meta-training tasks, so that every task is measured", cfg.Eval.TrainInstances, train.Len())}
	}
	in, out := train.Dims()
	sizes := append(append([]int{in}, cfg.Model.Hidden...), out)
	mlp, err := graph.NewMLP(sizes, graph.Activation(cfg.Model.Activation))
	if err != nil {
		return nil, err
	}
	spec := graph.Spec{
		Model: mlp, Tasks: cfg.Meta.Batch, Support: cfg.Task.Support, Query: cfg.Task.Query,
		Loss: graph.MSE, InShape: []int{in}, OutDim: out, Steps: cfg.Inner.Steps, Alpha: cfg.Inner.Alpha,
		FirstOrder: cfg.Order == "first", MetaGradient: true,
	}
	obj, err := graph.NewObjective(spec)
	if err != nil {
		return nil, err
	}
	spec.Tasks, spec.Query, spec.MetaGradient, spec.FirstOrder = cfg.Eval.Batch, cfg.Eval.Query, false, false
	evalObj, err := graph.NewObjective(spec)
	if err != nil {
		return nil, err
	}
	return &Setup{
		Config: cfg, Train: train, Test: test, Model: mlp, Objective: obj,
		Evaluator: metalearn.NewEvaluator(evalObj, cfg.Task.Support, cfg.Eval.Query, in, out),
		Metric:    metalearn.MSE,
		Score: func(w []float64, b *metalearn.Batch, out []float64) error {
			return evalObj.Losses(w, b, nil, out, nil)
		},
	}, nil
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
// the given iteration.
func (s *Setup) evaluate(w []float64, iteration int) (train, test Stats, err error) {
	cfg := s.Config
	tr, err := s.Evaluator.EvaluateScore(w, s.Train, cfg.Eval.TrainInstances, evalRNG(cfg.Seed, iteration, "train"), s.Metric, s.Score)
	if err != nil {
		return Stats{}, Stats{}, fmt.Errorf("evaluating on the meta-training tasks: %w", err)
	}
	te, err := s.Evaluator.EvaluateScore(w, s.Test, cfg.Eval.Instances, evalRNG(cfg.Seed, iteration, "test"), s.Metric, s.Score)
	if err != nil {
		return Stats{}, Stats{}, fmt.Errorf("evaluating on the meta-test tasks: %w", err)
	}
	return newStats(tr, s.Train), newStats(te, s.Test), nil
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
