package metalearn

import "math"

// TRMAML is Algorithm 1's ascent on the task distribution: after each update
// of w, p <- Proj_simplex(p + eta_p g_p) with the unbiased estimate
// g_p = (n/C) sum_k f_k e_{i_k}, starting from the uniform p. With the
// descent on w it solves min_w max_{p in simplex} sum_i p_i F_i(w), the
// worst task's loss.
type TRMAML struct {
	// PLR is eta_p >= 0, with the n/C factor inside g_p as in Algorithm 1;
	// 0 keeps p uniform.
	PLR float64 `yaml:"p_lr"`

	ascent
	scratch []float64
}

// Init implements Method.
func (m *TRMAML) Init(masses []float64, batch int) ([]float64, error) {
	p, err := m.ascent.init("TR-MAML", m.PLR, masses, batch)
	m.scratch = make([]float64, len(masses))
	return p, err
}

// Update implements Method.
func (m *TRMAML) Update(p []float64, tasks []int, losses []float64) {
	if m.PLR == 0 {
		return
	}
	m.addStep(p, tasks, losses)
	ProjectSimplex(p, p, m.scratch)
}

// trmamlInfo registers TR-MAML. Its p_lr's good value depends on the
// instance size, so a file that leaves it out gets the task family's (the
// paper's appendix values); it is resolved even for other algorithms,
// because experiment grids turn a config into TR-MAML runs and the other
// ascent methods default relative to it.
var trmamlInfo = MethodInfo{
	Name: "trmaml", Display: "TR-MAML",
	New: func() Method { return &TRMAML{PLR: 1e-4} },
	Defaults: func(m Method, d MethodDefaults) error {
		if d.Stated("p_lr") {
			return nil
		}
		v, err := d.PLR()
		m.(*TRMAML).PLR = v
		return err
	},
	Check: func(m Method) []SettingError { return checkPLR(m.(*TRMAML).PLR) },
}

// checkPLR refuses a step size of p that is negative or not finite.
func checkPLR(v float64) []SettingError {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return []SettingError{{"p_lr", v, "must be a finite number >= 0"}}
	case v < 0:
		return []SettingError{{"p_lr", v, "must be >= 0"}}
	}
	return nil
}
