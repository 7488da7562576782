package metalearn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DROMAML is Group DRO (Sagawa, Koh, Hashimoto, Liang, ICLR 2020) over the
// meta-training tasks, as its authors' loss does it: the C instances of an
// iteration are drawn uniformly; before the meta-gradient, the task weights
// q (held in p) move by exponentiated-gradient ascent on the iteration's
// losses, q_i <- q_i exp(eta_q (lbar_i + A/sqrt(m_i))) / Z, where lbar_i is
// the mean loss of task i's instances in the batch (0 for a task not drawn)
// and A/sqrt(m_i) the group adjustment (m_i the task's mass); the
// meta-gradient then weighs each instance of task i by q_i / c_i, c_i the
// number of task i's instances in the batch. Entropic TR-MAML moves p by the
// same exponentiated gradient but after the step, and with Algorithm 1's
// unbiased estimate (n/C) p_i instead of this plug-in, which weighs the
// drawn tasks' average by their q alone.
type DROMAML struct {
	// EtaQ is the step size eta_q > 0 of the ascent on q. (0 would keep q
	// uniform, MAML on the uniform distribution: refused.)
	EtaQ float64 `yaml:"eta_q"`
	// Adjustment is Group DRO's A >= 0 of the adjustment A/sqrt(m_i) added
	// to each task's loss (0: none).
	Adjustment float64 `yaml:"adjustment"`
}

// New implements MethodSettings.
func (s DROMAML) New() Method { return &dromamlRun{set: s} }

// dromamlRun is a running DRO-MAML.
type dromamlRun struct {
	set    DROMAML
	n      int
	adjust []float64 // A/sqrt(m_i)
	sum    []float64 // per-task loss sums of the batch
	count  []int     // per-task instances of the batch
}

// Init implements Method.
func (m *dromamlRun) Init(masses []float64, batch int) ([]float64, error) {
	if err := checkSizes("DRO-MAML", masses, batch); err != nil {
		return nil, err
	}
	if errs := m.set.check(); len(errs) > 0 {
		return nil, fmt.Errorf("metalearn: DRO-MAML: %v", errs[0])
	}
	m.n = len(masses)
	m.adjust = make([]float64, m.n)
	for i, v := range masses {
		m.adjust[i] = m.set.Adjustment / math.Sqrt(v)
	}
	m.sum, m.count = make([]float64, m.n), make([]int, m.n)
	p := make([]float64, m.n)
	for i := range p {
		p[i] = 1 / float64(m.n)
	}
	return p, nil
}

// Draw implements Method: a task uniformly; the weight is Weigh's.
func (m *dromamlRun) Draw(rng *rand.Rand, p []float64) (int, float64) {
	i := rng.IntN(m.n)
	return i, p[i]
}

// Weigh implements Weigher: moves q (p) by the iteration's losses, then
// weighs each instance of task i by q_i / c_i.
func (m *dromamlRun) Weigh(p []float64, tasks []int, losses, weights []float64) {
	clear(m.sum)
	clear(m.count)
	for k, i := range tasks {
		m.sum[i] += losses[k]
		m.count[i]++
	}
	// q_i exp(eta a_i) / Z, computed with exp(eta (a_i - max a)) so that no
	// factor overflows; Z absorbs the shift.
	top := math.Inf(-1)
	for i := range p {
		top = math.Max(top, m.adjusted(i))
	}
	z := 0.0
	for i := range p {
		p[i] *= math.Exp(m.set.EtaQ * (m.adjusted(i) - top))
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	for k, i := range tasks {
		weights[k] = p[i] / float64(m.count[i])
	}
}

// adjusted is task i's batch mean loss plus its adjustment.
func (m *dromamlRun) adjusted(i int) float64 {
	if m.count[i] == 0 {
		return m.adjust[i]
	}
	return m.sum[i]/float64(m.count[i]) + m.adjust[i]
}

// Update implements Method: q moved in Weigh.
func (m *dromamlRun) Update([]float64, []int, []float64) {}

// Check implements Method: q must lie on the simplex.
func (m *dromamlRun) Check(name string, p []float64) error { return checkSimplex(name, p) }

func (m DROMAML) check() []SettingError {
	var errs []SettingError
	switch {
	case math.IsNaN(m.EtaQ) || math.IsInf(m.EtaQ, 0):
		errs = append(errs, SettingError{"eta_q", m.EtaQ, "must be a finite number > 0"})
	case !(m.EtaQ > 0):
		errs = append(errs, SettingError{"eta_q", m.EtaQ, "must be > 0 (0 would keep q uniform: MAML on the uniform distribution)"})
	}
	if !(m.Adjustment >= 0) || math.IsInf(m.Adjustment, 0) {
		errs = append(errs, SettingError{"adjustment", m.Adjustment, "must be a finite number >= 0 (0: no group adjustment)"})
	}
	return errs
}

// dromamlInfo registers DRO-MAML with Group DRO's default step size.
var dromamlInfo = MethodInfo{
	Name: "dromaml",
	New:  func() MethodSettings { return &DROMAML{EtaQ: 0.01} },
	Step: "eta_q", StepValue: func(s MethodSettings) float64 { return s.(*DROMAML).EtaQ },
	Check: func(s MethodSettings) []SettingError { return s.(*DROMAML).check() },
}
