package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// validationHeader is the first line of rundir.ValidationFile.
const validationHeader = "iteration,mean,worst,cvar\n"

// validation keeps the meta-validation rows and the best iterate of a
// session.
type validation struct {
	set       metalearn.TaskSet
	rows      bytes.Buffer
	best      float64 // the selected statistic of the best iterate
	bestIt    int     // its iteration, -1 before the first
	bestW     []float64
	bestSum   string // SHA-256 of model_best_val.json, which checkpoints bind
	selectKey string // eval.select
}

// newValidation is nil when the family has no meta-validation tasks.
func newValidation(s *Setup) *validation {
	if s.EvalValidation == nil {
		return nil
	}
	v := &validation{set: s.EvalValidation, bestIt: -1, selectKey: s.Config.Eval.Select}
	v.rows.WriteString(validationHeader)
	return v
}

// statistic is the value of st that eval.select names.
func (v *validation) statistic(st rundir.Stats) float64 {
	switch v.selectKey {
	case "mean":
		return st.Mean
	case "cvar":
		if len(st.CVaR) > 0 {
			return st.CVaR[0].Value
		}
	}
	return st.Worst
}

// record evaluates w on the meta-validation tasks, appends the row to
// validation.csv, and writes model_best_val.json when w is the best so far.
func (v *validation) record(ctx context.Context, ss *session, w []float64, it int) error {
	s := ss.s
	raw, err := s.Evaluator.EvaluateScore(w, v.set, s.Config.Eval.Instances, evalRNG(s.Config.Seed, it, "validation"), s.Metric, s.scorer(ctx))
	if err != nil {
		return fmt.Errorf("evaluating on the meta-validation tasks: %w", err)
	}
	st := newStats(raw, v.set, s.Config.Eval.CVaRAlpha, s.Metric)
	cvar := math.NaN() // without eval.cvar_alpha levels
	if len(st.CVaR) > 0 {
		cvar = st.CVaR[0].Value
	}
	fmt.Fprintf(&v.rows, "%d,%s,%s,%s\n", it, fmtFloat(st.Mean), fmtFloat(st.Worst), fmtFloat(cvar))
	if err := atomicfile.Write(filepath.Join(ss.dir, rundir.ValidationFile), v.rows.Bytes()); err != nil {
		return err
	}
	value := v.statistic(st)
	better := value < v.best
	if s.Metric.HigherIsBetter {
		better = value > v.best
	}
	if v.bestIt >= 0 && !better {
		return nil
	}
	v.best, v.bestIt, v.bestW = value, it, append([]float64(nil), w...)
	model := s.record
	model.W, model.Iteration = v.bestW, it
	v.bestSum, err = rundir.WriteJSONSum(filepath.Join(ss.dir, rundir.BestValModelFile), model)
	return err
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// restore reads the rows of dir up to iteration upTo (the checkpoint's;
// later ones are redone) and the best model, which an interrupted
// evaluation may have written after the checkpoint: then it is written
// again, the same, when training reaches that iteration, and until then
// checkpoints bind bestSum, the hash the checkpoint bound.
func (v *validation) restore(dir string, upTo int, higherIsBetter bool, bestSum string) error {
	v.bestSum = bestSum
	path := filepath.Join(dir, rundir.ValidationFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) == 0 || lines[0]+"\n" != validationHeader {
		return fmt.Errorf("%s: the first line must be %q", path, strings.TrimSpace(validationHeader))
	}
	for n, line := range lines[1:] {
		f := strings.Split(line, ",")
		if len(f) != 4 {
			return fmt.Errorf("%s:%d: want 4 fields", path, n+2)
		}
		it, err := strconv.Atoi(f[0])
		if err != nil {
			return fmt.Errorf("%s:%d: iteration %q", path, n+2, f[0])
		}
		if it > upTo {
			break
		}
		var vals [3]float64
		for i := range vals {
			if vals[i], err = strconv.ParseFloat(f[i+1], 64); err != nil {
				return fmt.Errorf("%s:%d: %q is not a number", path, n+2, f[i+1])
			}
		}
		v.rows.WriteString(line + "\n")
		value := map[string]float64{"mean": vals[0], "worst": vals[1], "cvar": vals[2]}[v.selectKey]
		if better := (higherIsBetter && value > v.best) || (!higherIsBetter && value < v.best); v.bestIt < 0 || better {
			v.best, v.bestIt = value, it
		}
	}
	if v.bestIt < 0 {
		return nil
	}
	m, err := rundir.ReadModel(filepath.Join(dir, rundir.BestValModelFile))
	if err != nil {
		return fmt.Errorf("%s: %w", rundir.BestValModelFile, err)
	}
	if m.Iteration == v.bestIt {
		v.bestW = m.W
	}
	return nil
}

// bind sets ck's hashes of the validation rows and the best model.
func (v *validation) bind(ck *rundir.Checkpoint) {
	if v != nil && v.bestIt >= 0 {
		ck.BindValidation(v.rows.Bytes(), v.bestSum)
	}
}
