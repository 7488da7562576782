package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PHistory is p.csv: the task distribution p at each evaluation (for MAML
// it stays uniform).
type PHistory struct {
	// Tasks are the meta-training task names, one per column.
	Tasks []string
	// Iterations are the evaluation iterations, one per row.
	Iterations []int
	// Weights[r][i] is task i's weight at Iterations[r].
	Weights [][]float64
}

// PHeader is p.csv's header line: iteration, then one column per
// meta-training task.
func PHeader(tasks []string) string {
	var b strings.Builder
	b.WriteString("iteration")
	for _, t := range tasks {
		b.WriteString("," + csvQuote(t))
	}
	b.WriteString("\n")
	return b.String()
}

// AppendPRow appends p.csv's line of the distribution p at iteration to buf.
func AppendPRow(buf *bytes.Buffer, iteration int, p []float64) {
	buf.WriteString(strconv.Itoa(iteration))
	for _, v := range p {
		buf.WriteString("," + fmtF(v))
	}
	buf.WriteString("\n")
}

// ReadP reads the p.csv at path, refusing (with the file and line) a wrong
// header, iterations out of order and rows that are not distributions.
func ReadP(path string) (PHistory, error) {
	var p PHistory
	header := func(rec []string) error {
		if len(rec) < 2 || rec[0] != "iteration" {
			return errors.New(`header must be "iteration" followed by one column per meta-training task`)
		}
		p.Tasks = rec[1:]
		return nil
	}
	row := func(_ int, rec []string) error {
		it, err := parseIteration(rec[0], p.Iterations)
		if err != nil {
			return err
		}
		w := make([]float64, len(rec)-1)
		for i, field := range rec[1:] {
			if w[i], err = strconv.ParseFloat(field, 64); err != nil {
				return fmt.Errorf("column %q: %q is not a number", p.Tasks[i], field)
			}
		}
		if err := CheckDistribution(w); err != nil {
			return err
		}
		p.Iterations = append(p.Iterations, it)
		p.Weights = append(p.Weights, w)
		return nil
	}
	if err := readCSV(path, header, row); err != nil {
		return PHistory{}, err
	}
	return p, nil
}
