package rundir

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trmaml/trmaml/metalearn"
)

// Column is one per-evaluation column of metrics.csv.
type Column int

// The columns of metrics.csv after iteration, in file order.
const (
	Elapsed    Column = iota // elapsed_seconds: training plus evaluation wall-clock time so far
	BatchMean                // batch_mean: mean sampled meta-batch loss since the last evaluation
	BatchWorst               // batch_worst: largest sampled task-instance loss since the last evaluation
	TrainMean                // train_mean: mean loss over the meta-training tasks
	TrainWorst               // train_worst: largest meta-training task loss
	TrainStd                 // train_std: std of the meta-training task losses
	TestMean                 // test_mean: mean loss over the meta-test tasks
	TestWorst                // test_worst: largest meta-test task loss
	TestStd                  // test_std: std of the meta-test task losses
	NumColumns
)

// MetricsHeader is the header line of metrics.csv as runs wrote it before
// its column names said what they hold; such files are still read (and
// resumed under it). Column.String names the columns so.
const MetricsHeader = "iteration,elapsed_seconds,batch_mean,batch_worst,train_mean,train_worst,train_std,test_mean,test_worst,test_std\n"

// MetricsHeaderFor is the header line of the metrics.csv of a run scored
// in the metric named metric ("mse", "accuracy") with CVaR_alpha over the
// tasks at the levels cvar (eval.cvar_alpha): each column says what it
// holds and in which unit. The meta-batch columns are the training loss
// (mean squared error, or cross-entropy for classification), whatever the
// metric; the train and test columns are the metric, accuracy as a
// fraction of 1; each level adds the pair train_cvarALPHA_METRIC,
// test_cvarALPHA_METRIC after them (CVaRColumn).
func MetricsHeaderFor(metric string, cvar ...float64) string {
	m := metricUnit(metric)
	h := "iteration,elapsed_seconds,batch_mean_loss,batch_worst_loss," +
		"train_mean_" + m + ",train_worst_" + m + ",train_std_" + m + "," +
		"test_mean_" + m + ",test_worst_" + m + ",test_std_" + m
	for _, a := range cvar {
		h += "," + CVaRColumn("train", a, metric) + "," + CVaRColumn("test", a, metric)
	}
	return h + "\n"
}

// CVaRColumn is the metrics.csv column of CVaR_alpha over the tasks of set
// ("train" or "test") of a run scored in metric, e.g. test_cvar0.7_mse.
func CVaRColumn(set string, alpha float64, metric string) string {
	return set + "_cvar" + strconv.FormatFloat(alpha, 'g', -1, 64) + "_" + metricUnit(metric)
}

// metricUnit is how column names write the metric with its unit.
func metricUnit(metric string) string {
	if metric == "accuracy" {
		return "accuracy_fraction"
	}
	return metric
}

// MetricsHeaderIn returns the header line of the metrics.csv at path if it
// is one ReadMetrics reads (the one resume keeps writing under), with the
// CVaR levels of its columns.
func MetricsHeaderIn(path string) (string, []float64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	cvar, err := parseMetricsHeader(strings.Split(line, ","))
	if err != nil {
		return "", nil, fmt.Errorf("%s:1: %w", path, err)
	}
	return line + "\n", cvar, nil
}

// parseMetricsHeader returns the CVaR levels of a metrics.csv header's
// fields, or an error if it is not one: MetricsHeader, or MetricsHeaderFor
// of a metric with any levels.
func parseMetricsHeader(rec []string) ([]float64, error) {
	if slices.Equal(rec, strings.Split(strings.TrimSpace(MetricsHeader), ",")) {
		return nil, nil
	}
	for _, m := range metalearn.Metrics {
		base := strings.Split(strings.TrimSpace(MetricsHeaderFor(m.Name)), ",")
		if len(rec) < len(base) || !slices.Equal(rec[:len(base)], base) || (len(rec)-len(base))%2 != 0 {
			continue
		}
		var levels []float64
		for i := len(base); i < len(rec); i += 2 {
			a, _ := strings.CutPrefix(rec[i], "train_cvar")
			a, _ = strings.CutSuffix(a, "_"+metricUnit(m.Name))
			alpha, err := strconv.ParseFloat(a, 64)
			if err != nil || !(alpha > 0 && alpha < 1) || rec[i] != CVaRColumn("train", alpha, m.Name) {
				return nil, fmt.Errorf("column %d: %q, want train_cvarALPHA_%s with ALPHA in (0, 1)", i+1, rec[i], metricUnit(m.Name))
			}
			if want := CVaRColumn("test", alpha, m.Name); rec[i+1] != want {
				return nil, fmt.Errorf("column %d: %q, want %q after %q", i+2, rec[i+1], want, rec[i])
			}
			if slices.Contains(levels, alpha) {
				return nil, fmt.Errorf("column %d: %q: level %v repeated", i+1, rec[i], alpha)
			}
			levels = append(levels, alpha)
		}
		return levels, nil
	}
	return nil, fmt.Errorf("header %q is not a metrics.csv header, want %q", strings.Join(rec, ","), strings.TrimSpace(MetricsHeaderFor("mse")))
}

// String returns the column's name in metrics.csv.
func (c Column) String() string {
	if c < 0 || c >= NumColumns {
		return "Column(" + strconv.Itoa(int(c)) + ")"
	}
	return strings.Split(strings.TrimSpace(MetricsHeader), ",")[c+1]
}

// MetricsRow is one row of metrics.csv: an evaluation's statistics.
type MetricsRow struct {
	Iteration int
	// Elapsed is the training plus evaluation time so far.
	Elapsed time.Duration
	// BatchMean and BatchWorst summarise the meta-batches since the last
	// evaluation; NaN (written empty) where there was none, at iteration 0.
	BatchMean, BatchWorst float64
	Train, Test           Stats
	// CVaRAlpha are the CVaR levels of the file's columns (its header's):
	// the row writes Train's and Test's CVaR entry at each, and refuses
	// to write a level they do not hold.
	CVaRAlpha []float64
}

// Append appends the row's line to buf.
func (r MetricsRow) Append(buf *bytes.Buffer) error {
	var cvar strings.Builder
	for _, a := range r.CVaRAlpha {
		tr, ok1 := r.Train.CVaRAt(a)
		te, ok2 := r.Test.CVaRAt(a)
		if !ok1 || !ok2 {
			return fmt.Errorf("metrics.csv has CVaR_%v columns but the evaluation at iteration %d has no CVaR_%v", a, r.Iteration, a)
		}
		cvar.WriteString("," + fmtF(tr) + "," + fmtF(te))
	}
	fmt.Fprintf(buf, "%d,%.3f,%s,%s,%s,%s,%s,%s,%s,%s%s\n", r.Iteration, r.Elapsed.Seconds(), fmtBatch(r.BatchMean), fmtBatch(r.BatchWorst),
		fmtF(r.Train.Mean), fmtF(r.Train.Worst), fmtF(r.Train.Std),
		fmtF(r.Test.Mean), fmtF(r.Test.Worst), fmtF(r.Test.Std), cvar.String())
	return nil
}

func fmtBatch(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return fmtF(v)
}

// MetricsTable is metrics.csv as read: its rows (MetricsRow as written)
// by column. (metalearn.Metrics, a different thing, lists the kinds of
// score, MSE and accuracy.)
type MetricsTable struct {
	// Iterations are the iterations of the evaluations, one per row,
	// increasing.
	Iterations []int
	// Values[c][r] is column c of row r; NaN where the file has no value
	// (the batch columns of the iteration-0 row).
	Values [NumColumns][]float64
	// CVaR are the CVaR columns, one pair per level of the header.
	CVaR []CVaRColumns
}

// CVaRColumns are metrics.csv's columns of CVaR_alpha over the
// meta-training and meta-test tasks, one value per row.
type CVaRColumns struct {
	Alpha       float64
	Train, Test []float64
}

// ReadMetrics reads the metrics.csv at path, refusing (with the file and
// line) a wrong header, iterations out of order and values that are not
// finite numbers >= 0.
func ReadMetrics(path string) (MetricsTable, error) {
	var m MetricsTable
	header := func(rec []string) error {
		levels, err := parseMetricsHeader(rec)
		for _, a := range levels {
			m.CVaR = append(m.CVaR, CVaRColumns{Alpha: a})
		}
		return err
	}
	row := func(_ int, rec []string) error {
		it, err := parseIteration(rec[0], m.Iterations)
		if err != nil {
			return err
		}
		m.Iterations = append(m.Iterations, it)
		for c := range NumColumns {
			field := rec[c+1]
			v := math.NaN()
			switch {
			case field == "" && (c == BatchMean || c == BatchWorst):
				// no meta-batch before the first evaluation
			case field == "":
				return fmt.Errorf("column %s is empty", c)
			default:
				if v, err = strconv.ParseFloat(field, 64); err != nil {
					return fmt.Errorf("column %s: %q is not a number", c, field)
				}
				if !(v >= 0) || math.IsInf(v, 0) {
					return fmt.Errorf("column %s: %v: must be a finite number >= 0 (a time or a loss)", c, v)
				}
			}
			m.Values[c] = append(m.Values[c], v)
		}
		for k := range m.CVaR {
			for j, col := range []*[]float64{&m.CVaR[k].Train, &m.CVaR[k].Test} {
				i := 1 + int(NumColumns) + 2*k + j
				v, err := strconv.ParseFloat(rec[i], 64)
				if err != nil || !(v >= 0) || math.IsInf(v, 0) {
					return fmt.Errorf("column %d (%s CVaR_%v): %q: must be a finite number >= 0", i+1, []string{"train", "test"}[j], m.CVaR[k].Alpha, rec[i])
				}
				*col = append(*col, v)
			}
		}
		return nil
	}
	if err := readCSV(path, header, row); err != nil {
		return MetricsTable{}, err
	}
	return m, nil
}

// KeepRows copies into buf the header and the rows of the CSV file at path
// (metrics.csv or p.csv, with fields fields per row) up to the row of
// iteration last, which must be there: rows before a checkpoint are
// evaluations of earlier iterates that resume cannot redo, so a damaged one
// is refused, naming the line.
func KeepRows(path, header string, fields, last int, buf *bytes.Buffer) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s cannot be resumed: %w", filepath.Dir(path), err)
	}
	refuse := func(line int, what string) error {
		return fmt.Errorf("%s:%d: %s; the rows up to the checkpoint's iteration %d are evaluations resume cannot redo: restore the file, or train the run again into a new directory",
			path, line, what, last)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	if lines[0] != header {
		return refuse(1, "the header is not the run's")
	}
	buf.WriteString(header)
	prev := -1
	for i, line := range lines[1:] {
		if line == "" {
			break
		}
		rec := strings.Split(strings.TrimSuffix(line, "\n"), ",")
		it, err := strconv.Atoi(rec[0])
		switch {
		case err != nil || !strings.HasSuffix(line, "\n"):
			return refuse(i+2, fmt.Sprintf("%q is not a complete row", strings.TrimSpace(line)))
		case it <= prev || it > last:
			return refuse(i+2, fmt.Sprintf("iteration %d out of order", it))
		case len(rec) != fields:
			return refuse(i+2, fmt.Sprintf("%d fields, want %d", len(rec), fields))
		}
		for _, f := range rec[1:] {
			if v, err := strconv.ParseFloat(f, 64); (err != nil || math.IsNaN(v) || math.IsInf(v, 0)) && !(f == "" && it == 0) {
				return refuse(i+2, fmt.Sprintf("%q is not a finite number", f))
			}
		}
		buf.WriteString(line)
		if prev = it; it == last {
			return nil
		}
	}
	return refuse(len(lines), fmt.Sprintf("no row for iteration %d", last))
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

// fmtF formats a float with the shortest representation that round-trips.
func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func csvQuote(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// LastEvaluation reads the last row of the metrics.csv in dir, as a run
// writes it: the iteration, the elapsed seconds and the meta-test mean and
// worst; ok is false when there is no complete row yet.
func LastEvaluation(dir string) (it int, elapsed float64, test [2]float64, ok bool) {
	raw, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		return 0, 0, test, false
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	f := strings.Split(lines[len(lines)-1], ",")
	if len(lines) < 2 || len(f) < 2+int(TestWorst) {
		return 0, 0, test, false
	}
	it, err1 := strconv.Atoi(f[0])
	elapsed, err2 := strconv.ParseFloat(f[1+Elapsed], 64)
	mean, err3 := strconv.ParseFloat(f[1+TestMean], 64)
	worst, err4 := strconv.ParseFloat(f[1+TestWorst], 64)
	return it, elapsed, [2]float64{mean, worst}, errors.Join(err1, err2, err3, err4) == nil
}
