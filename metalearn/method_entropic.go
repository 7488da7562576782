package metalearn

import "math"

// EntropicTRMAML solves TR-MAML's min-max with the ascent on p done in the
// KL geometry of the simplex: exponentiated gradient, p_i <- p_i
// exp(eta_p g_i) / Z, with Algorithm 1's estimate g_p = (n/C) sum_k f_k
// e_{i_k}. This is the stochastic mirror descent of Nemirovski et al. (2009)
// with the entropy as mirror map, whose error grows with log n instead of
// the Euclidean method's n. The update is computed in the log domain
// (log p + eta_p g_p, shifted by its maximum before exponentiating), so a
// large step cannot overflow; a weight below the smallest float64 becomes 0
// and stays 0.
type EntropicTRMAML struct {
	// PLR is eta_p > 0, with the n/C factor inside g_p. Its scale differs
	// from TRMAML's: eta_p g_i changes log p_i, not p_i.
	PLR float64 `yaml:"p_lr"`
}

// New implements MethodSettings.
func (s EntropicTRMAML) New() Method { return &entropicRun{set: s} }

// entropicRun is a running entropic TR-MAML.
type entropicRun struct {
	set EntropicTRMAML
	ascent
	logp []float64
}

// Init implements Method.
func (m *entropicRun) Init(masses []float64, batch int) ([]float64, error) {
	p, err := m.ascent.init("entropic TR-MAML", m.set.PLR, masses, batch)
	m.logp = make([]float64, len(masses))
	return p, err
}

// Update implements Method.
func (m *entropicRun) Update(p []float64, tasks []int, losses []float64) {
	for i, v := range p {
		m.logp[i] = math.Log(v)
	}
	m.addStep(m.logp, tasks, losses)
	top := math.Inf(-1)
	for _, v := range m.logp {
		top = math.Max(top, v)
	}
	sum := 0.0
	for i, v := range m.logp {
		switch {
		case math.IsInf(top, 1):
			// A step beyond the float range: the limit puts all the
			// weight on the entries that overflowed.
			p[i] = 0
			if math.IsInf(v, 1) {
				p[i] = 1
			}
		default:
			p[i] = math.Exp(v - top)
		}
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
}

// entropicInfo registers entropic TR-MAML. A file that leaves p_lr out gets
// ten times Algorithm 1's step size for the config (MethodDefaults.PLR), as
// the paper configs use: it moves log p_i where TR-MAML moves p_i.
var entropicInfo = MethodInfo{
	Name: "trmaml_entropic",
	Step: "p_lr", StepValue: func(s MethodSettings) float64 { return s.(*EntropicTRMAML).PLR },
	New: func() MethodSettings { return &EntropicTRMAML{PLR: 1e-3} },
	Defaults: func(s MethodSettings, d MethodDefaults) error {
		if d.Stated("p_lr") {
			return nil
		}
		v, err := d.PLR()
		s.(*EntropicTRMAML).PLR = 10 * v
		return err
	},
	Check: func(s MethodSettings) []SettingError { return checkPLR(s.(*EntropicTRMAML).PLR) },
}
