package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/internal/shell"

	"github.com/trmaml/trmaml/configs"
	_ "github.com/trmaml/trmaml/models/builtin" // the built-in models, which configs name
	"github.com/trmaml/trmaml/results/display"
	"github.com/trmaml/trmaml/rundir"
	_ "github.com/trmaml/trmaml/tasks" // the task families of the runs' configs
)

// Column is one per-evaluation column of metrics.csv (not to be confused
// with metalearn.Metric, the kind of score: MSE or accuracy).
type Column = rundir.Column

// The columns of metrics.csv after iteration, in file order.
const (
	Elapsed    = rundir.Elapsed    // elapsed_seconds: training plus evaluation wall-clock time so far
	BatchMean  = rundir.BatchMean  // batch_mean: mean sampled meta-batch loss since the last evaluation
	BatchWorst = rundir.BatchWorst // batch_worst: largest sampled task-instance loss since the last evaluation
	TrainMean  = rundir.TrainMean  // train_mean: mean loss over the meta-training tasks
	TrainWorst = rundir.TrainWorst // train_worst: largest meta-training task loss
	TrainStd   = rundir.TrainStd   // train_std: std of the meta-training task losses
	TestMean   = rundir.TestMean   // test_mean: mean loss over the meta-test tasks
	TestWorst  = rundir.TestWorst  // test_worst: largest meta-test task loss
	TestStd    = rundir.TestStd    // test_std: std of the meta-test task losses
)

// Run is one run directory: finished (Load) or not (LoadUnfinished).
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
	// Tasks holds tasks.csv, every task's value at each evaluation; nil for
	// a run without one (started before the file existed).
	Tasks *rundir.TaskHistory
	// Result is result.json.
	Result rundir.Result
	// Score is the metric of the run's statistics, named by result.json.
	Score display.Score
	// Unfinished is set for a run loaded by LoadUnfinished: running or
	// interrupted, its Result holds its last evaluation.
	Unfinished bool

	metrics [rundir.NumColumns][]float64
}

// PHistory is p.csv: the TR-MAML task distribution at each evaluation (for
// MAML it stays uniform).
type PHistory = rundir.PHistory

// Column returns column c of metrics.csv at each of r.Iterations; NaN
// where the file has no value (the batch columns of the iteration-0 row).
func (r *Run) Column(c Column) []float64 { return r.metrics[c] }

// FinalP returns the run's final task weights: result.json's final_p (the
// TR-MAML solution's p) or, when it has none (MAML), the last row of p.csv.
func (r *Run) FinalP() []float64 {
	if len(r.Result.FinalP) > 0 {
		return r.Result.FinalP
	}
	return r.P.Weights[len(r.P.Weights)-1]
}

// Load reads the finished run directory dir, verified against its
// manifest (rundir.Verify): config.yaml, metrics.csv, p.csv, tasks.csv
// where the run has it, and result.json. Errors name the file and, where it applies, the line.
func Load(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	sealed, err := rundir.Verify(dir)
	if err != nil {
		return nil, err
	}
	if !sealed.Finished {
		return nil, fmt.Errorf("%s: no sealed %s: the run is unfinished (trmaml resume -run %s finishes it)", dir, rundir.ResultFile, shell.Quote(dir))
	}
	r.Config = sealed.Config
	if err := r.loadMetrics(filepath.Join(dir, rundir.MetricsFile)); err != nil {
		return nil, err
	}
	if err := r.loadP(filepath.Join(dir, rundir.PFile)); err != nil {
		return nil, err
	}
	if err := r.loadTasks(dir, sealed); err != nil {
		return nil, err
	}
	if err := r.loadResult(filepath.Join(dir, rundir.ResultFile)); err != nil {
		return nil, err
	}
	if err := r.loadScore(filepath.Join(dir, rundir.ResultFile)); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Run) loadMetrics(path string) error {
	m, err := rundir.ReadMetrics(path)
	if err != nil {
		return err
	}
	r.Iterations, r.metrics = m.Iterations, m.Values
	return nil
}

func (r *Run) loadP(path string) error {
	var err error
	if r.P, err = rundir.ReadP(path); err != nil {
		return err
	}
	if !slices.Equal(r.P.Iterations, r.Iterations) {
		return fmt.Errorf("%s: iterations %v differ from those of %s, %v", path, r.P.Iterations, rundir.MetricsFile, r.Iterations)
	}
	return nil
}

func (r *Run) loadResult(path string) error {
	var err error
	if r.Result, err = rundir.ReadResult(path); err != nil {
		return err
	}
	if !slices.Equal(r.Result.MetaTrain.Tasks, r.P.Tasks) {
		return fmt.Errorf("%s: meta_train tasks differ from the columns of %s", path, rundir.PFile)
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
			return fmt.Errorf("%s: %s: %v, but %s says %v (is it another run's file?)", path, f.field, f.got, rundir.ConfigFile, f.want)
		}
	}
	if last := r.Iterations[len(r.Iterations)-1]; last != c.Meta.Iterations {
		return fmt.Errorf("%s: the last evaluation is at iteration %d, but %s says the run has %d", filepath.Join(r.Dir, rundir.MetricsFile), last, rundir.ConfigFile, c.Meta.Iterations)
	}
	return nil
}

// Discover lists the run directories under paths: a path holding
// result.json, or whose manifest seals one, is a finished run directory
// (Load refuses it if result.json is then missing: it was deleted); any
// other directory is searched recursively. Directories that hold
// metrics.csv or a manifest but no result.json (unfinished or failed runs)
// are returned in unfinished, not in dirs.
func Discover(paths []string) (dirs, unfinished []string, err error) {
	for _, root := range paths {
		st, err := os.Stat(root)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("%s does not exist (give a run directory or a folder of runs)", root)
		case err != nil:
			return nil, nil, err
		case !st.IsDir():
			return nil, nil, fmt.Errorf("%s is not a directory (give a run directory or a folder of runs)", root)
		}
		walk := root
		if l, err := os.Lstat(root); err == nil && l.Mode()&fs.ModeSymlink != 0 {
			walk += string(filepath.Separator) // WalkDir does not follow a root that is a link
		}
		err = filepath.WalkDir(walk, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if exists(filepath.Join(path, rundir.ResultFile)) || sealsResult(path) {
				dirs = append(dirs, path)
				return filepath.SkipDir
			}
			if exists(filepath.Join(path, rundir.MetricsFile)) || exists(filepath.Join(path, rundir.ManifestFile)) {
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

// sealsResult reports whether the manifest in dir seals a result.json: the
// run finished, whatever is left of its files. An unreadable manifest
// says nothing here (Load names it when the run is loaded).
func sealsResult(dir string) bool {
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ManifestFile))
	if err != nil {
		return false
	}
	var m rundir.Manifest
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m.Sum(rundir.ResultFile)
	return ok
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

// Gather loads and groups the runs found under paths (Discover): the
// finished ones and, with unfinished, the running or interrupted ones that
// have an evaluation (LoadUnfinished), noting on log each unfinished run it
// includes or skips. Finding no run is an error.
func Gather(paths []string, unfinished bool, log io.Writer) ([]*Group, error) {
	dirs, partial, err := Discover(paths)
	if err != nil {
		return nil, err
	}
	runs, err := LoadAll(dirs)
	if err != nil {
		return nil, err
	}
	for _, d := range partial {
		if !unfinished {
			fmt.Fprintf(log, "skipping %s: no result.json (unfinished run)\n", d)
			continue
		}
		r, err := LoadUnfinished(d)
		if err != nil {
			fmt.Fprintf(log, "skipping %s: %v\n", d, err)
			continue
		}
		fmt.Fprintf(log, "including %s, unfinished: to its last evaluation, iteration %d of %d\n", d, r.LastIteration(), r.Config.Meta.Iterations)
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		what := "finished run directories (with result.json)"
		if unfinished {
			what = "run directories with an evaluation"
		}
		return nil, fmt.Errorf("no %s in %s", what, strings.Join(paths, " "))
	}
	return GroupRuns(runs)
}
