package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TaskHistory is tasks.csv: every task's value of the run's metric at each
// evaluation (what metrics.csv's mean, worst and std summarise), so that a
// figure can draw any task's, or any group of tasks', curve over training.
type TaskHistory struct {
	// Train and Test are the meta-training and meta-test task names, in
	// the order of their columns.
	Train, Test []string
	// Iterations are the evaluation iterations, one per row.
	Iterations []int
	// TrainValues[r][i] is meta-training task i's value at Iterations[r];
	// TestValues likewise.
	TrainValues, TestValues [][]float64
}

// Column-name prefixes of tasks.csv: which set a task column is of.
const (
	trainPrefix = "train:"
	testPrefix  = "test:"
)

// TasksHeader is tasks.csv's header line: iteration, one column per
// meta-training task ("train:NAME"), then one per meta-test task
// ("test:NAME"), names quoted as CSV needs.
func TasksHeader(train, test []string) string {
	var b strings.Builder
	b.WriteString("iteration")
	for _, t := range train {
		b.WriteString("," + csvQuote(trainPrefix+t))
	}
	for _, t := range test {
		b.WriteString("," + csvQuote(testPrefix+t))
	}
	b.WriteString("\n")
	return b.String()
}

// TasksFields is the number of fields of a tasks.csv row.
func TasksFields(train, test int) int { return 1 + train + test }

// AppendTasksRow appends tasks.csv's line of the per-task values at
// iteration (train's tasks, then test's) to buf.
func AppendTasksRow(buf *bytes.Buffer, iteration int, train, test []float64) {
	buf.WriteString(strconv.Itoa(iteration))
	for _, vs := range [][]float64{train, test} {
		for _, v := range vs {
			buf.WriteString("," + fmtF(v))
		}
	}
	buf.WriteString("\n")
}

// ReadTasks reads the tasks.csv at path, refusing (with the file and line)
// a header that is not iteration, train:... then test:... columns,
// iterations out of order and values that are not finite numbers.
func ReadTasks(path string) (TaskHistory, error) {
	var h TaskHistory
	header := func(rec []string) error {
		if len(rec) < 2 || rec[0] != "iteration" {
			return errors.New(`header must be "iteration" followed by "train:NAME" and "test:NAME" columns`)
		}
		for _, c := range rec[1:] {
			switch {
			case strings.HasPrefix(c, trainPrefix) && len(h.Test) == 0:
				h.Train = append(h.Train, strings.TrimPrefix(c, trainPrefix))
			case strings.HasPrefix(c, testPrefix):
				h.Test = append(h.Test, strings.TrimPrefix(c, testPrefix))
			default:
				return fmt.Errorf("column %q: want train:NAME (before the test columns) or test:NAME", c)
			}
		}
		return nil
	}
	row := func(_ int, rec []string) error {
		it, err := parseIteration(rec[0], h.Iterations)
		if err != nil {
			return err
		}
		v := make([]float64, len(rec)-1)
		for i, field := range rec[1:] {
			if v[i], err = strconv.ParseFloat(field, 64); err != nil || math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
				return fmt.Errorf("field %d: %q is not a finite number", i+2, field)
			}
		}
		h.Iterations = append(h.Iterations, it)
		h.TrainValues = append(h.TrainValues, v[:len(h.Train)])
		h.TestValues = append(h.TestValues, v[len(h.Train):])
		return nil
	}
	if err := readCSV(path, header, row); err != nil {
		return TaskHistory{}, err
	}
	return h, nil
}
