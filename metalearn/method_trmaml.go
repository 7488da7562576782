package metalearn

// TRMAML is Algorithm 1's ascent on the task distribution: after each update
// of w, p <- Proj_simplex(p + eta_p g_p) with the unbiased estimate
// g_p = (n/C) sum_k f_k e_{i_k}, starting from the uniform p. With the
// descent on w it solves min_w max_{p in simplex} sum_i p_i F_i(w), the
// worst task's loss.
type TRMAML struct {
	// PLR is eta_p >= 0, with the n/C factor inside g_p as in Algorithm 1;
	// 0 keeps p uniform.
	PLR float64

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
