package run

import (
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// TestWithLevels: a resumed run's metrics.csv keeps its CVaR columns when
// eval.cvar_alpha no longer holds their level: the row gets it from the
// per-task values; levels already computed are kept as they are.
func TestWithLevels(t *testing.T) {
	t.Parallel()
	st := rundir.Stats{PerTask: []float64{1, 4, 2, 3}, CVaR: []rundir.TailStat{{Alpha: 0.5, Value: 3.5}}}
	got := withLevels(st, []float64{0.5, 0.75}, metalearn.MSE)
	want := []rundir.TailStat{{Alpha: 0.5, Value: 3.5}, {Alpha: 0.75, Value: 4}}
	if len(got.CVaR) != 2 || got.CVaR[0] != want[0] || got.CVaR[1] != want[1] {
		t.Errorf("CVaR %v, want %v", got.CVaR, want)
	}
	if len(st.CVaR) != 1 {
		t.Errorf("withLevels changed its argument's CVaR to %v", st.CVaR)
	}
}
