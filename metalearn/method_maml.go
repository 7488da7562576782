package metalearn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// MAML minimises the average post-adaptation loss over the empirical
// meta-training distribution: p_i = m_i / sum_j m_j (the task masses), fixed.
// Each of the C instances of an iteration draws its task from p and weighs
// its loss 1/C. It has no settings.
type MAML struct{}

// New implements MethodSettings.
func (MAML) New() Method { return &mamlRun{} }

// mamlRun is a running MAML.
type mamlRun struct {
	cum  []float64 // cumulative masses
	dist []float64 // p, the empirical distribution
	c    int
}

// Init implements Method.
func (m *mamlRun) Init(masses []float64, batch int) ([]float64, error) {
	if err := checkSizes("MAML", masses, batch); err != nil {
		return nil, err
	}
	m.c = batch
	m.cum = make([]float64, len(masses))
	total := 0.0
	for i, v := range masses {
		total += v
		m.cum[i] = total
	}
	p := make([]float64, len(masses))
	for i, v := range masses {
		p[i] = v / total
	}
	m.dist = append([]float64(nil), p...)
	return p, nil
}

// Draw implements Method: task i with probability m_i / sum_j m_j, weight 1/C.
func (m *mamlRun) Draw(rng *rand.Rand, _ []float64) (int, float64) {
	n := len(m.cum)
	u := rng.Float64() * m.cum[n-1]
	return min(sort.SearchFloat64s(m.cum, u), n-1), 1 / float64(m.c)
}

// Update implements Method: p stays the empirical distribution.
func (m *mamlRun) Update([]float64, []int, []float64) {}

// distTolerance is the relative difference from the empirical distribution
// that MAML's Check lets pass (rounding in averaged iterates).
const distTolerance = 1e-9

// Check implements Method: p must be the empirical distribution, the one
// point of MAML's feasible set.
func (m *mamlRun) Check(name string, p []float64) error {
	if err := checkSimplex(name, p); err != nil {
		return err
	}
	for i, v := range p {
		if want := m.dist[i]; math.Abs(v-want) > distTolerance*want {
			return fmt.Errorf("%s[%d] = %v: MAML keeps p at the empirical distribution, which gives %v",
				name, i, v, want)
		}
	}
	return nil
}

// mamlInfo registers MAML: it has no settings.
var mamlInfo = MethodInfo{
	Name: "maml", FixedP: true,
	New: func() MethodSettings { return &MAML{} },
}
