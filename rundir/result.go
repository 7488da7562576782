package rundir

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/metalearn"
)

// Result is result.json: the final solution's statistics on the meta-test
// and meta-training task sets, the final task distribution p (TR-MAML), and
// the cost. Everything but Timing is a deterministic function of the config
// and seed. Metric names what the statistics measure, a metalearn.Metric's
// Name ("mse", "accuracy").
type Result struct {
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	// CVaRLevel is the level a of algorithm "cvar" (absent for the others).
	CVaRLevel  float64   `json:"cvar_level,omitempty"`
	Order      string    `json:"order"`
	Seed       uint64    `json:"seed"`
	Iterations int       `json:"iterations"`
	Output     string    `json:"output_rule"`
	Metric     string    `json:"metric"`
	MetaTest   Stats     `json:"meta_test"`
	MetaTrain  Stats     `json:"meta_train"`
	FinalP     []float64 `json:"final_p,omitempty"`
	// Source, in evaluation.json only, names what was evaluated when it is
	// not model.json: a checkpoint of a run that did not finish.
	Source string `json:"source,omitempty"`
	// Overrides, in evaluation files only, are the config changes
	// ("field.path=value") the solution was evaluated under.
	Overrides []string `json:"overrides,omitempty"`
	// BestValIteration, with output rule best_val, is the iteration of the
	// evaluated model: the best on the meta-validation tasks.
	BestValIteration int `json:"best_val_iteration,omitempty"`
	// StateSHA256, in result.json, is the state hash of the checkpoint
	// the result was computed from (Checkpoint.StateHash, WriteBound).
	StateSHA256 string `json:"state_sha256,omitempty"`
	Timing      Timing `json:"timing"`
}

// Timing is the cost of a run in wall-clock and processor time, the one
// part of result.json that differs between identical runs, and what it was
// measured on: the engine of the build (graph.Engine) and GOMAXPROCS of the
// run's last segment.
type Timing struct {
	MsPerIteration float64 `json:"ms_per_iteration"`
	TrainSeconds   float64 `json:"train_seconds"`
	EvalSeconds    float64 `json:"eval_seconds"`
	Engine         string  `json:"engine,omitempty"`
	Procs          int     `json:"gomaxprocs,omitempty"`
	// EvalInstances is the number of task instances evaluation.json's
	// EvalSeconds measured (both splits), for its instances per second.
	EvalInstances int `json:"eval_instances,omitempty"`
	// CPU is the processor time the run cost; absent where it was not
	// measured (a platform without getrusage, or a checkpoint without it).
	CPU *CPUTime `json:"cpu,omitempty"`
	// Kernels lists the arithmetic kernel sets (graph.Kernels) of a run a
	// resume moved to another set (Checkpoint.Kernels); absent when one
	// set trained it all, as Engine then names.
	Kernels []string `json:"kernels,omitempty"`
}

// CPUTime is the processor time (user plus system, all threads) a run
// spent training and evaluating, across its resumptions. When other runs
// trained in the same process at the same time (trmaml experiment -jobs),
// the process's time over each interval is split equally between them and
// Shared is set: the figures are then estimates, exact only for runs alike
// in cost.
type CPUTime struct {
	TrainSeconds float64 `json:"train_seconds"`
	EvalSeconds  float64 `json:"eval_seconds"`
	Shared       bool    `json:"shared,omitempty"`
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
	// what WeightedMean weighs by.
	Masses []float64 `json:"masses"`
	// CVaR is CVaR_alpha over the tasks at each of the config's
	// eval.cvar_alpha levels (metalearn.TailMean of PerTask); absent
	// without levels.
	CVaR []TailStat `json:"cvar,omitempty"`
}

// CVaRAt is the recorded CVaR at level alpha, if s has that level.
func (s Stats) CVaRAt(alpha float64) (float64, bool) {
	for _, t := range s.CVaR {
		if t.Alpha == alpha {
			return t.Value, true
		}
	}
	return 0, false
}

// TailStat is CVaR_alpha over the tasks: the mean of the worst fraction
// 1-alpha of the per-task values.
type TailStat struct {
	Alpha float64 `json:"alpha"`
	Value float64 `json:"value"`
}

// Model is model.json: the solution chosen by the output rule, and the
// network it parameterises: the registered model (model.kind) and its
// record (models.Built.Record, e.g. the MLP's layer sizes and activation).
// Files written before the field name no kind; their W and P read the
// same.
type Model struct {
	Kind string          `json:"kind,omitempty"`
	Net  json.RawMessage `json:"net,omitempty"`
	W    []float64       `json:"w"`
	P    []float64       `json:"p,omitempty"`
	// StateSHA256 is the state hash of the checkpoint the solution was
	// taken from (Checkpoint.StateHash, WriteBound).
	StateSHA256 string `json:"state_sha256,omitempty"`
	// Iteration, in model_best_val.json and in the model.json of output
	// rule best_val, is the iteration of the evaluation that chose it.
	Iteration int `json:"iteration,omitempty"`
}

// WriteJSON writes v to path as indented JSON with a final newline, the
// layout of result.json, model.json and evaluation.json, atomically: the
// bytes of json.MarshalIndent(v, "", "  "), streamed (indentWriter).
func WriteJSON(path string, v any) error {
	_, err := WriteJSONSum(path, v)
	return err
}

// WriteJSONSum writes v as WriteJSON does and returns the hex SHA-256 of
// the bytes written, which a checkpoint binds (model_best_val.json).
func WriteJSONSum(path string, v any) (string, error) {
	h := sha256.New()
	err := atomicfile.WriteFunc(path, func(file io.Writer) error {
		h.Reset()
		f := io.MultiWriter(file, h)
		out := bufio.NewWriter(f)
		in := bufio.NewWriter(&indentWriter{w: out})
		if err := streamJSON(in, reflect.ValueOf(v)); err != nil {
			return err
		}
		if err := in.Flush(); err != nil {
			return err
		}
		out.WriteByte('\n')
		return out.Flush()
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// ReadResult reads the result.json (or evaluation.json) at path, refusing
// per-task values that do not match the tasks, a final p that is not a
// distribution, and negative or non-finite statistics. Errors name the file
// and, for JSON errors, the line.
func ReadResult(path string) (Result, error) {
	var res Result
	raw, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return Result{}, fmt.Errorf("%s:%d: %w", path, lineAt(raw, se.Offset), err)
		case errors.As(err, &te):
			return Result{}, fmt.Errorf("%s:%d: %w", path, lineAt(raw, te.Offset), err)
		}
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	sets := []struct {
		name  string
		stats Stats
	}{{"meta_test", res.MetaTest}, {"meta_train", res.MetaTrain}}
	for _, s := range sets {
		if len(s.stats.PerTask) == 0 || len(s.stats.PerTask) != len(s.stats.Tasks) {
			return Result{}, fmt.Errorf("%s: %s has %d per_task values for %d tasks", path, s.name, len(s.stats.PerTask), len(s.stats.Tasks))
		}
	}
	if len(res.FinalP) > 0 && len(res.FinalP) != len(res.MetaTrain.Tasks) {
		return Result{}, fmt.Errorf("%s: final_p has %d weights for %d meta-training tasks", path, len(res.FinalP), len(res.MetaTrain.Tasks))
	}
	if len(res.FinalP) > 0 {
		if err := CheckDistribution(res.FinalP); err != nil {
			return Result{}, fmt.Errorf("%s: final_p: %w", path, err)
		}
	}
	metric, err := metalearn.MetricNamed(res.Metric)
	if err != nil {
		return Result{}, fmt.Errorf("%s: metric: %w", path, err)
	}
	for _, s := range sets {
		if err := checkStats(s.stats); err != nil {
			return Result{}, fmt.Errorf("%s: %s.%w", path, s.name, err)
		}
		if err := recompute(s.stats, metric); err != nil {
			return Result{}, fmt.Errorf("%s: %s.%w", path, s.name, err)
		}
	}
	return res, nil
}

// recompute refuses statistics that are not those of their per-task values
// (an edited mean, or an edited per-task value under an unchanged mean): it
// computes them again as the evaluation does (metalearn.NewTaskStats).
func recompute(s Stats, m metalearn.Metric) error {
	if len(s.Masses) != len(s.PerTask) {
		return fmt.Errorf("masses: %d for %d tasks", len(s.Masses), len(s.PerTask))
	}
	for i, v := range s.Masses {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("masses[%d] = %v: must be a finite number >= 0", i, v)
		}
	}
	want := metalearn.NewTaskStats(s.PerTask, nil, s.Masses, m)
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"mean", s.Mean, want.Mean}, {"weighted_mean", s.WeightedMean, want.WeightedMean}, {"worst", s.Worst, want.Worst}, {"std", s.Std, want.Std}} {
		if math.Abs(f.got-f.want) > 1e-12*max(1, math.Abs(f.want)) {
			return fmt.Errorf("%s = %v, but the per_task values give %v: the file was edited or damaged", f.name, f.got, f.want)
		}
	}
	// A tie may name another task with the same value.
	if i := slices.Index(s.Tasks, s.WorstTask); i < 0 || s.PerTask[i] != want.Worst {
		return fmt.Errorf("worst_task = %q, but the per_task values give %q: the file was edited or damaged", s.WorstTask, s.Tasks[want.WorstTask])
	}
	return nil
}

// checkStats refuses negative or non-finite statistics: every one is a
// mean squared error or an accuracy, or a spread of them.
func checkStats(s Stats) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"mean", s.Mean}, {"weighted_mean", s.WeightedMean}, {"worst", s.Worst}, {"std", s.Std}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s = %v: must be a finite number >= 0", f.name, f.v)
		}
	}
	for i, v := range s.PerTask {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("per_task[%d] = %v: must be a finite number >= 0", i, v)
		}
	}
	return nil
}

// CheckDistribution refuses task weights that are not a distribution.
func CheckDistribution(p []float64) error {
	sum := 0.0
	for i, v := range p {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("weight %d = %v: must be a finite number >= 0", i+1, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("weights sum to %v, want 1", sum)
	}
	return nil
}

// ReadModel reads the model.json at path; errors name the file.
func ReadModel(path string) (Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Model{}, err
	}
	var m Model
	if err := json.Unmarshal(raw, &m); err != nil {
		return Model{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}
