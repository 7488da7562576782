package metalearn

import (
	"fmt"
	"math"
)

// TRMAML is Algorithm 1's ascent on the task distribution: after each update
// of w, p <- Proj_simplex(p + eta_p g_p) with the unbiased estimate
// g_p = (n/C) sum_k f_k e_{i_k}, starting from the uniform p. With the
// descent on w it solves min_w max_{p in simplex} sum_i p_i F_i(w), the
// worst task's loss.
type TRMAML struct {
	// PLR is eta_p > 0, with the n/C factor inside g_p as in Algorithm 1.
	// (0 would keep p uniform, MAML on the uniform distribution: refused.)
	PLR float64 `yaml:"p_lr"`
}

// New implements MethodSettings.
func (s TRMAML) New() Method { return &trmamlRun{set: s} }

// trmamlRun is a running TR-MAML.
type trmamlRun struct {
	set TRMAML
	ascent
	scratch []float64
}

// Init implements Method.
func (m *trmamlRun) Init(masses []float64, batch int) ([]float64, error) {
	p, err := m.ascent.init("TR-MAML", m.set.PLR, masses, batch)
	m.scratch = make([]float64, len(masses))
	return p, err
}

// Update implements Method.
func (m *trmamlRun) Update(p []float64, tasks []int, losses []float64) {
	m.addStep(p, tasks, losses)
	ProjectSimplex(p, p, m.scratch)
}

// trmamlInfo registers TR-MAML. Its p_lr's good value depends on the
// instance size, so a file that leaves it out gets Algorithm 1's step size
// for the config (MethodDefaults.PLR: the task family's, the paper's
// appendix values); it is resolved even for other algorithms, because
// experiment grids turn a config into TR-MAML runs.
var trmamlInfo = MethodInfo{
	Name: "trmaml",
	New:  func() MethodSettings { return &TRMAML{PLR: 1e-4} },
	Step: "p_lr", StepValue: func(s MethodSettings) float64 { return s.(*TRMAML).PLR },
	Defaults: func(s MethodSettings, d MethodDefaults) error {
		if d.Stated("p_lr") {
			return nil
		}
		v, err := d.PLR()
		s.(*TRMAML).PLR = v
		return err
	},
	Check: func(s MethodSettings) []SettingError { return checkPLR(s.(*TRMAML).PLR) },
}

// checkPLR refuses a step size of p that is not a positive finite number.
func checkPLR(v float64) []SettingError {
	if err := checkStep("p_lr", v); err != nil {
		return []SettingError{*err}
	}
	return nil
}

// checkStep refuses a step size of p (key) that is not positive and
// finite: 0 would keep p uniform, which is MAML on the uniform
// distribution, not the method.
func checkStep(key string, v float64) *SettingError {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return &SettingError{key, v, "must be a finite number > 0"}
	case !(v > 0):
		return &SettingError{key, v, "must be > 0 (0 would keep p uniform: MAML on the uniform distribution)"}
	}
	return nil
}

// errStep is checkStep as an error of method.
func errStep(method, key string, v float64) error {
	if e := checkStep(key, v); e != nil {
		return fmt.Errorf("metalearn: %s: %v", method, e)
	}
	return nil
}
