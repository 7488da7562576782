package resultstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/rundir"
)

// Spec is the content of a synthetic run directory.
type Spec struct {
	// Config is written to config.yaml.
	Config configs.Config
	// Iterations are the evaluation iterations, one row of metrics.csv and
	// p.csv each.
	Iterations []int
	// Metrics[r] are the metrics.csv columns after iteration, in file order
	// (results.Elapsed ... results.TestStd); NaN is written as empty.
	Metrics [][9]float64
	// P[r] is the p.csv row of Iterations[r], one weight per
	// Result.MetaTrain.Tasks.
	P [][]float64
	// Result is written to result.json.
	Result rundir.Result
	// Tasks, when set, is written to tasks.csv: Tasks[r] are the values of
	// Result's meta-training tasks, then of its meta-test tasks, at
	// Iterations[r] (WithTasks fills it).
	Tasks [][]float64
}

// WithTasks returns s with tasks.csv rows: every task's final value
// (Result's per-task values) times (n - r) at row r of n, so that each
// task improves over training to its final value at the last row.
func (s Spec) WithTasks() Spec {
	n := len(s.Iterations)
	s.Tasks = make([][]float64, n)
	for r := range s.Tasks {
		for _, v := range append(append([]float64{}, s.Result.MetaTrain.PerTask...), s.Result.MetaTest.PerTask...) {
			s.Tasks[r] = append(s.Tasks[r], v*float64(n-r))
		}
	}
	return s
}

// TrainTasks and TestTasks are the task sets of New: two easy and two hard
// (amplitude >= 4.95) meta-training tasks and five meta-test tasks.
var (
	TrainTasks = []string{"amplitude [0.10,0.11)", "amplitude [0.11,0.12)", "amplitude [4.95,4.96)", "amplitude [4.96,4.97)"}
	TestTasks  = []string{"amplitude [0.10,0.11)", "amplitude [1.00,1.01)", "amplitude [2.00,2.01)", "amplitude [3.00,3.01)", "amplitude [4.95,4.96)"}
)

// New returns a valid run of the given config fields with three
// evaluations (iterations 0, 100, 200). Every loss is level times a fixed
// pattern, so runs of different levels differ predictably: the final
// meta-test per-task losses are level * (1, 2, 3, 4, 5), their mean 3*level,
// worst 5*level; metric column c of row r is level*(r+1)*(c+1) but elapsed
// seconds are 10*r*level and the batch columns of row 0 are empty. p is
// uniform for MAML; for TR-MAML it moves to the two hard tasks, ending at
// (0.1, 0.1, 0.4, 0.4). The meta-training per-task losses are
// level * (0.5, 0.5, 2, 3) with masses (5, 5, 3, 3): mean 1.5*level,
// weighted mean 1.25*level. The statistics are those of the per-task
// values, as result.json's reader requires.
func New(name, algorithm, order string, seed uint64, k int, level float64) Spec {
	cfg := configs.Defaults()
	cfg.Name, cfg.Algorithm, cfg.Order, cfg.Seed = name, algorithm, order, seed
	cfg.Task.Support, cfg.Task.Query = k, k
	cfg.Meta.Iterations, cfg.Eval.Every = 200, 100
	s := Spec{Config: cfg, Iterations: []int{0, 100, 200}}
	for r := range s.Iterations {
		var row [9]float64
		for c := range row {
			row[c] = level * float64((r+1)*(c+1))
		}
		row[0] = 10 * float64(r) * level
		if r == 0 {
			row[1], row[2] = math.NaN(), math.NaN()
		}
		s.Metrics = append(s.Metrics, row)
		p := []float64{0.25, 0.25, 0.25, 0.25}
		if algorithm == "trmaml" {
			shift := 0.075 * float64(r)
			p = []float64{0.25 - shift, 0.25 - shift, 0.25 + shift, 0.25 + shift}
		}
		s.P = append(s.P, p)
	}
	test := make([]float64, len(TestTasks))
	for i := range test {
		test[i] = level * float64(i+1)
	}
	train := []float64{level * 0.5, level * 0.5, level * 2, level * 3}
	s.Result = rundir.Result{
		Name: name, Algorithm: algorithm, Order: order, Seed: seed, Iterations: 200, Output: "last", Metric: "mse",
		MetaTest: rundir.Stats{
			Mean: 3 * level, WeightedMean: 3 * level, Worst: 5 * level, WorstTask: TestTasks[4],
			Std: level * math.Sqrt(2), Instances: 50, PerTask: test, Tasks: TestTasks, Masses: ones(len(TestTasks)),
		},
		MetaTrain: rundir.Stats{
			Mean: 1.5 * level, WeightedMean: 1.25 * level, Worst: 3 * level, WorstTask: TrainTasks[3],
			Std: level * math.Sqrt(1.125), Instances: 40, PerTask: train, Tasks: TrainTasks, Masses: []float64{5, 5, 3, 3},
		},
		Timing: rundir.Timing{MsPerIteration: level, TrainSeconds: 0.2 * level, EvalSeconds: 1},
	}
	if algorithm == "trmaml" {
		s.Result.FinalP = s.P[len(s.P)-1]
	}
	return s
}

func ones(n int) []float64 {
	m := make([]float64, n)
	for i := range m {
		m[i] = 1
	}
	return m
}

// Write writes the run directory dir (created if needed).
func (s Spec) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	yml, err := s.Config.Marshal()
	if err != nil {
		return err
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	var metrics, p strings.Builder
	metrics.WriteString("iteration,elapsed_seconds,batch_mean,batch_worst,train_mean,train_worst,train_std,test_mean,test_worst,test_std\n")
	p.WriteString("iteration")
	for _, t := range s.Result.MetaTrain.Tasks {
		p.WriteString(`,"` + t + `"`)
	}
	p.WriteString("\n")
	for r, it := range s.Iterations {
		metrics.WriteString(strconv.Itoa(it))
		for _, v := range s.Metrics[r] {
			metrics.WriteString("," + num(v))
		}
		metrics.WriteString("\n")
		p.WriteString(strconv.Itoa(it))
		for _, v := range s.P[r] {
			p.WriteString("," + num(v))
		}
		p.WriteString("\n")
	}
	res, err := json.MarshalIndent(s.Result, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{
		rundir.ConfigFile: yml, rundir.MetricsFile: []byte(metrics.String()), rundir.PFile: []byte(p.String()), rundir.ResultFile: res,
	}
	if s.Tasks != nil {
		var tasks bytes.Buffer
		tasks.WriteString(rundir.TasksHeader(s.Result.MetaTrain.Tasks, s.Result.MetaTest.Tasks))
		for r, it := range s.Iterations {
			n := len(s.Result.MetaTrain.Tasks)
			rundir.AppendTasksRow(&tasks, it, s.Tasks[r][:n], s.Tasks[r][n:])
		}
		files[rundir.TasksFile] = tasks.Bytes()
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("resultstest: %w", err)
		}
	}
	return rundir.Seal(dir, true)
}

// Reseal seals dir as it now is, after a test edited its files: as a writer
// with a bug would have written and sealed them, so that the test reaches
// the checks beyond the manifest.
func Reseal(t testing.TB, dir string) {
	t.Helper()
	os.Remove(filepath.Join(dir, rundir.ManifestFile))
	if err := rundir.Seal(dir, true); err != nil {
		t.Fatal(err)
	}
}
