// Package results loads finished run directories (written by trmaml train)
// and computes every statistic the reports show: curves and final
// statistics averaged over seeds with Student-t 95% confidence intervals,
// histograms of per-task values, the TR-MAML task weights p, the paper's
// results tables (Table 1 for regression, Table 2 for classification), every
// task's final value (per_task.csv) and the CVaR trade-off table. Each
// run names its metric (metalearn.Metric), which decides what "worst" and
// "best" mean and how values are shown. Plots and tables only read what
// this package computes.
package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	_ "github.com/trmaml/trmaml/tasks" // the task families of the runs' configs
)

// Metric is one per-evaluation column of metrics.csv.
type Metric int

// The columns of metrics.csv after iteration, in file order.
const (
	Elapsed    Metric = iota // elapsed_seconds: training plus evaluation wall-clock time so far
	BatchMean                // batch_mean: mean sampled meta-batch loss since the last evaluation
	BatchWorst               // batch_worst: largest sampled task-instance loss since the last evaluation
	TrainMean                // train_mean: mean loss over the meta-training tasks
	TrainWorst               // train_worst: largest meta-training task loss
	TrainStd                 // train_std: std of the meta-training task losses
	TestMean                 // test_mean: mean loss over the meta-test tasks
	TestWorst                // test_worst: largest meta-test task loss
	TestStd                  // test_std: std of the meta-test task losses
	numMetrics
)

var metricColumns = [numMetrics]string{
	"elapsed_seconds", "batch_mean", "batch_worst", "train_mean", "train_worst", "train_std",
	"test_mean", "test_worst", "test_std",
}

// String returns the metric's metrics.csv column name.
func (m Metric) String() string {
	if m < 0 || m >= numMetrics {
		return "Metric(" + strconv.Itoa(int(m)) + ")"
	}
	return metricColumns[m]
}

// Run is one finished run directory.
type Run struct {
	// Dir is the directory the run was loaded from.
	Dir string
	// Config is the run's resolved config.yaml.
	Config configs.Config
	// Iterations are the iterations of the evaluations, one per metrics.csv
	// row, increasing.
	Iterations []int
	// P holds p.csv: the task weights at each evaluation.
	P PHistory
	// Result is result.json.
	Result run.Result
	// Score is the metric of the run's statistics, named by result.json
	// (MSE for files from before the field).
	Score metalearn.Metric

	metrics [numMetrics][]float64
}

// PHistory is p.csv: the TR-MAML task distribution at each evaluation (for
// MAML it stays uniform).
type PHistory struct {
	// Tasks are the meta-training task names, one per column.
	Tasks []string
	// Iterations are the evaluation iterations, one per row.
	Iterations []int
	// Weights[r][i] is task i's weight at Iterations[r].
	Weights [][]float64
}

// Metric returns metric m at each of r.Iterations; NaN where the file has
// no value (the batch columns of the iteration-0 row).
func (r *Run) Metric(m Metric) []float64 { return r.metrics[m] }

// FinalP returns the run's final task weights: result.json's final_p (the
// TR-MAML solution's p) or, when it has none (MAML), the last row of p.csv.
func (r *Run) FinalP() []float64 {
	if len(r.Result.FinalP) > 0 {
		return r.Result.FinalP
	}
	return r.P.Weights[len(r.P.Weights)-1]
}

// Load reads the run directory dir: config.yaml, metrics.csv, p.csv and
// result.json. Errors name the file and, where it applies, the line.
func Load(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	var err error
	if r.Config, err = configs.Load(filepath.Join(dir, run.ConfigFile)); err != nil {
		return nil, err
	}
	if err := r.loadMetrics(filepath.Join(dir, run.MetricsFile)); err != nil {
		return nil, err
	}
	if err := r.loadP(filepath.Join(dir, run.PFile)); err != nil {
		return nil, err
	}
	if err := r.loadResult(filepath.Join(dir, run.ResultFile)); err != nil {
		return nil, err
	}
	if err := r.loadScore(filepath.Join(dir, run.ResultFile)); err != nil {
		return nil, err
	}
	return r, nil
}

// readCSV reads a CSV file with a header, checking that every row has the
// header's number of fields. It calls row for each data row with the
// row's line number.
func readCSV(path string, header func([]string) error, row func(line int, rec []string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	rec, err := cr.Read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty file, want a header line", path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := header(rec); err != nil {
		return fmt.Errorf("%s:1: %w", path, err)
	}
	rows := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if err := row(line, rec); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		rows++
	}
	if rows == 0 {
		return fmt.Errorf("%s: no evaluation rows after the header", path)
	}
	return nil
}

// parseIteration parses an iteration field, which must exceed prev.
func parseIteration(s string, prev []int) (int, error) {
	it, err := strconv.Atoi(s)
	if err != nil || it < 0 {
		return 0, fmt.Errorf("iteration %q is not a non-negative integer", s)
	}
	if n := len(prev); n > 0 && it <= prev[n-1] {
		return 0, fmt.Errorf("iteration %d does not follow %d", it, prev[n-1])
	}
	return it, nil
}

func (r *Run) loadMetrics(path string) error {
	want := append([]string{"iteration"}, metricColumns[:]...)
	header := func(rec []string) error {
		if !slices.Equal(rec, want) {
			return fmt.Errorf("header %q, want %q", rec, want)
		}
		return nil
	}
	row := func(_ int, rec []string) error {
		it, err := parseIteration(rec[0], r.Iterations)
		if err != nil {
			return err
		}
		r.Iterations = append(r.Iterations, it)
		for m := range numMetrics {
			field := rec[m+1]
			v := math.NaN()
			switch {
			case field == "" && (m == BatchMean || m == BatchWorst):
				// no meta-batch before the first evaluation
			case field == "":
				return fmt.Errorf("column %s is empty", m)
			default:
				if v, err = strconv.ParseFloat(field, 64); err != nil {
					return fmt.Errorf("column %s: %q is not a number", m, field)
				}
				if !(v >= 0) || math.IsInf(v, 0) {
					return fmt.Errorf("column %s: %v: must be a finite number >= 0 (a time or a loss)", m, v)
				}
			}
			r.metrics[m] = append(r.metrics[m], v)
		}
		return nil
	}
	return readCSV(path, header, row)
}

func (r *Run) loadP(path string) error {
	header := func(rec []string) error {
		if len(rec) < 2 || rec[0] != "iteration" {
			return errors.New(`header must be "iteration" followed by one column per meta-training task`)
		}
		r.P.Tasks = rec[1:]
		return nil
	}
	row := func(_ int, rec []string) error {
		it, err := parseIteration(rec[0], r.P.Iterations)
		if err != nil {
			return err
		}
		w := make([]float64, len(rec)-1)
		for i, field := range rec[1:] {
			if w[i], err = strconv.ParseFloat(field, 64); err != nil {
				return fmt.Errorf("column %q: %q is not a number", r.P.Tasks[i], field)
			}
		}
		if err := checkDistribution(w); err != nil {
			return err
		}
		r.P.Iterations = append(r.P.Iterations, it)
		r.P.Weights = append(r.P.Weights, w)
		return nil
	}
	if err := readCSV(path, header, row); err != nil {
		return err
	}
	if !slices.Equal(r.P.Iterations, r.Iterations) {
		return fmt.Errorf("%s: iterations %v differ from those of %s, %v", path, r.P.Iterations, run.MetricsFile, r.Iterations)
	}
	return nil
}

func (r *Run) loadResult(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &r.Result); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("%s:%d: %w", path, lineAt(raw, se.Offset), err)
		case errors.As(err, &te):
			return fmt.Errorf("%s:%d: %w", path, lineAt(raw, te.Offset), err)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	res := &r.Result
	for _, s := range []struct {
		name  string
		stats run.Stats
	}{{"meta_test", res.MetaTest}, {"meta_train", res.MetaTrain}} {
		if len(s.stats.PerTask) == 0 || len(s.stats.PerTask) != len(s.stats.Tasks) {
			return fmt.Errorf("%s: %s has %d per_task values for %d tasks", path, s.name, len(s.stats.PerTask), len(s.stats.Tasks))
		}
	}
	if !slices.Equal(res.MetaTrain.Tasks, r.P.Tasks) {
		return fmt.Errorf("%s: meta_train tasks differ from the columns of %s", path, run.PFile)
	}
	if len(res.FinalP) > 0 && len(res.FinalP) != len(r.P.Tasks) {
		return fmt.Errorf("%s: final_p has %d weights for %d meta-training tasks", path, len(res.FinalP), len(r.P.Tasks))
	}
	if len(res.FinalP) > 0 {
		if err := checkDistribution(res.FinalP); err != nil {
			return fmt.Errorf("%s: final_p: %w", path, err)
		}
	}
	for _, s := range []struct {
		name  string
		stats run.Stats
	}{{"meta_test", res.MetaTest}, {"meta_train", res.MetaTrain}} {
		if err := checkStats(s.stats); err != nil {
			return fmt.Errorf("%s: %s.%w", path, s.name, err)
		}
	}
	return r.matchConfig(path)
}

// matchConfig refuses a result.json that contradicts the run's config.yaml
// (another run's file copied in) or its metrics (a result of an earlier,
// shorter run).
func (r *Run) matchConfig(path string) error {
	c, res := r.Config, r.Result
	for _, f := range []struct {
		field     string
		got, want any
	}{
		{"name", res.Name, c.Name},
		{"algorithm", res.Algorithm, c.Algorithm},
		{"order", res.Order, c.Order},
		{"seed", res.Seed, c.Seed},
		{"iterations", res.Iterations, c.Meta.Iterations},
		{"output_rule", res.Output, c.Meta.Output},
	} {
		if f.got != f.want {
			return fmt.Errorf("%s: %s: %v, but %s says %v (is it another run's file?)", path, f.field, f.got, run.ConfigFile, f.want)
		}
	}
	if last := r.Iterations[len(r.Iterations)-1]; last != c.Meta.Iterations {
		return fmt.Errorf("%s: the last evaluation is at iteration %d, but %s says the run has %d", filepath.Join(r.Dir, run.MetricsFile), last, run.ConfigFile, c.Meta.Iterations)
	}
	return nil
}

// checkStats refuses negative or non-finite statistics: every one is a
// mean squared error or an accuracy, or a spread of them.
func checkStats(s run.Stats) error {
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

// checkDistribution refuses task weights that are not a distribution.
func checkDistribution(p []float64) error {
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

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// Discover lists the run directories under paths: a path holding
// result.json is a run directory; any other directory is searched
// recursively. Directories that hold metrics.csv but no result.json
// (unfinished or failed runs) are returned in unfinished, not in dirs.
func Discover(paths []string) (dirs, unfinished []string, err error) {
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if exists(filepath.Join(path, run.ResultFile)) {
				dirs = append(dirs, path)
				return filepath.SkipDir
			}
			if exists(filepath.Join(path, run.MetricsFile)) {
				unfinished = append(unfinished, path)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return dirs, unfinished, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// LoadAll loads every run directory in dirs.
func LoadAll(dirs []string) ([]*Run, error) {
	runs := make([]*Run, len(dirs))
	for i, d := range dirs {
		var err error
		if runs[i], err = Load(d); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// LoadGroups loads the run directories in dirs and groups them by setting
// (GroupRuns): what every table and figure starts from.
func LoadGroups(dirs []string) ([]*Group, error) {
	runs, err := LoadAll(dirs)
	if err != nil {
		return nil, err
	}
	return GroupRuns(runs)
}
