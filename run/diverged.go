package run

import (
	"fmt"
	"path/filepath"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/rundir"
)

// divergedFactor is how many times its first evaluation's (iteration 0)
// the mean meta-test loss of a run's last evaluation must be for
// DivergenceWarning to say that the run probably diverged: a run that
// learns ends below where it started, not three orders of magnitude above.
const divergedFactor = 1000

// DivergenceWarning is a warning about the run in dir, made from cfg,
// whose mean meta-test loss in metrics.csv grew from its first evaluation
// (iteration 0) to its last by divergedFactor or more: the loss stayed
// finite, so the trainer did not stop it, but the run probably diverged.
// It is "" otherwise, and for runs that cannot be judged so: scored in
// other than MSE (results.ScoreOf: metrics.csv then holds no meta-test
// loss), started from a trained model (init.from: its loss at iteration 0
// may be near zero, so that a small rise is a large factor), or without
// two readable evaluations.
func DivergenceWarning(dir string, cfg configs.Config) string {
	if cfg.Init.From != "" || results.ScoreOf(cfg).Metric != metalearn.MSE {
		return ""
	}
	m, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	n := len(m.Iterations)
	if err != nil || n < 2 || m.Iterations[0] != 0 {
		return ""
	}
	first, last := m.Values[rundir.TestMean][0], m.Values[rundir.TestMean][n-1]
	if !(first > 0) || last < divergedFactor*first {
		return ""
	}
	return fmt.Sprintf("the mean meta-test loss grew from %.4g at iteration 0 to %.4g at iteration %d (%.3g times, %d or more): the training probably diverged; %s",
		first, last, m.Iterations[n-1], last/first, divergedFactor, makeSmaller(cfg))
}

// warnDiverged writes the DivergenceWarning of the run in dir, if any, to
// opts.Warnings.
func warnDiverged(opts Options, dir string, cfg configs.Config) {
	if w := DivergenceWarning(dir, cfg); w != "" {
		opts.warn(fmt.Sprintf("warning: %s: %s", dir, w))
	}
}

// makeSmaller is the advice for a run of cfg that diverged.
func makeSmaller(cfg configs.Config) string {
	return fmt.Sprintf("make meta.lr = %g or inner.alpha = %g smaller", cfg.Meta.LR, cfg.Inner.Alpha)
}
