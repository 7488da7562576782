package tfevents

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/display"
	"github.com/trmaml/trmaml/rundir"
)

// Tags names the scalars a run's metrics.csv columns become, by column:
// grouped as TensorBoard groups tags (by the part before the slash), each
// saying what it holds and in which unit (UNIT is the run's metric with
// its unit, "MSE" or "accuracy (%)").
var Tags = [rundir.NumColumns]string{
	rundir.Elapsed:    "time/elapsed (s)",
	rundir.BatchMean:  "meta-batch/mean loss",
	rundir.BatchWorst: "meta-batch/worst instance loss",
	rundir.TrainMean:  "meta-train/mean UNIT",
	rundir.TrainWorst: "meta-train/worst task UNIT",
	rundir.TrainStd:   "meta-train/std UNIT",
	rundir.TestMean:   "meta-test/mean UNIT",
	rundir.TestWorst:  "meta-test/worst task UNIT",
	rundir.TestStd:    "meta-test/std UNIT",
}

// ExportRun writes the run directory dir's metrics.csv (with its CVaR
// columns, tags "meta-test/CVaR_ALPHA UNIT") and p.csv (the task weights,
// tags "p/TASK") as an event file in out, replacing the one an
// earlier export of the run wrote, and returns its path; an out holding
// another run's event file is refused. The run is verified against
// its manifest first; a running or unfinished run exports what it has.
// Each evaluation is one event at its iteration, timed from config.yaml's
// modification time (the run's start) plus its elapsed seconds; accuracies
// are in percent, as the reports show them.
func ExportRun(dir, out string) (string, error) {
	sealed, err := rundir.Verify(dir)
	if err != nil {
		return "", err
	}
	m := results.ScoreOf(sealed.Config)
	if res, err := rundir.ReadResult(filepath.Join(dir, rundir.ResultFile)); err == nil {
		if named, err := metalearn.MetricNamed(res.Metric); err == nil {
			m = display.Of(named)
		}
	}
	table, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		return "", err
	}
	p, err := rundir.ReadP(filepath.Join(dir, rundir.PFile))
	if err != nil {
		return "", err
	}
	st, err := os.Stat(filepath.Join(dir, rundir.ConfigFile))
	if err != nil {
		return "", err
	}
	start := float64(st.ModTime().UnixNano()) / 1e9
	unit := m.Label
	if m.Unit != "" {
		unit += " (" + m.Unit + ")"
	}
	// The name carries the run's start and its sealed config, so that an
	// export replaces its own file only: TensorBoard shows the files of one
	// folder as one run, so another run's file there is refused.
	name := fmt.Sprintf("events.out.tfevents.%d.trmaml-%s", int64(start), rundir.HashBytes([]byte(sealed.Manifest.Config))[:12])
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	// The name an earlier trmaml gave this run's export, replaced too.
	legacy := fmt.Sprintf("events.out.tfevents.%d.trmaml", int64(start))
	for _, e := range entries {
		if strings.Contains(e.Name(), "tfevents") && e.Name() != name && e.Name() != legacy {
			return "", fmt.Errorf("%s holds %s, the event file of another run (or another program): TensorBoard would show the two as one run; give this run its own -out, e.g. %s",
				out, e.Name(), filepath.Join(out, filepath.Base(dir)))
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(out, name)
	err = atomicfile.WriteFunc(path, func(w io.Writer) error {
		ew, err := NewWriter(w, start)
		if err != nil {
			return err
		}
		for r, it := range table.Iterations {
			var values []Scalar
			for c := range rundir.NumColumns {
				v := table.Values[c][r]
				if c >= rundir.TrainMean {
					v = m.Show(v)
				}
				values = append(values, Scalar{strings.Replace(Tags[c], "UNIT", unit, 1), v})
			}
			for _, cv := range table.CVaR {
				values = append(values, Scalar{fmt.Sprintf("meta-train/CVaR_%g %s", cv.Alpha, unit), m.Show(cv.Train[r])},
					Scalar{fmt.Sprintf("meta-test/CVaR_%g %s", cv.Alpha, unit), m.Show(cv.Test[r])})
			}
			if r < len(p.Iterations) && p.Iterations[r] == it {
				for k, task := range p.Tasks {
					values = append(values, Scalar{"p/" + task, p.Weights[r][k]})
				}
			}
			if err := ew.Scalars(start+table.Values[rundir.Elapsed][r], int64(it), values); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if err := os.Remove(filepath.Join(out, legacy)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return path, nil
}
