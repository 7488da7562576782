package metalearn

import (
	"fmt"
	"math"
)

// CVaR minimises the conditional value at risk of the task losses at level
// a in (0, 1]: the average loss of the worst fraction a of the tasks,
// max { sum_i p_i F_i(w) : p in the simplex, p_i <= 1/(a n) }. Its ascent on
// p is TR-MAML's with the projection onto that capped simplex. Level 1 pins p
// to the uniform distribution (the tasks' average loss, whatever their
// masses); level 1/n or below is TR-MAML's whole simplex (the worst task);
// levels between trade average for worst-case performance.
type CVaR struct {
	// Level is a in (0, 1].
	Level float64 `yaml:"level"`
	// PLR is eta_p > 0, in TRMAML's convention.
	PLR float64 `yaml:"p_lr"`
}

// New implements MethodSettings.
func (s CVaR) New() Method { return &cvarRun{set: s} }

// cvarRun is a running CVaR.
type cvarRun struct {
	set CVaR
	ascent
	upper   float64 // 1/(a n)
	scratch []float64
}

// Init implements Method.
func (m *cvarRun) Init(masses []float64, batch int) ([]float64, error) {
	if !(m.set.Level > 0 && m.set.Level <= 1) {
		return nil, fmt.Errorf("metalearn: CVaR: Level must be in (0, 1], got %v", m.set.Level)
	}
	p, err := m.ascent.init("CVaR", m.set.PLR, masses, batch)
	m.upper = 1 / (m.set.Level * float64(len(masses)))
	m.scratch = make([]float64, len(masses))
	return p, err
}

// Update implements Method.
func (m *cvarRun) Update(p []float64, tasks []int, losses []float64) {
	m.addStep(p, tasks, losses)
	ProjectCappedSimplex(p, p, m.upper, m.scratch)
}

// capTolerance is the relative excess over the cap 1/(a n) that Check lets
// pass: the projection clips at the cap exactly, and averaging iterates
// (output rule T1) rounds by far less.
const capTolerance = 1e-9

// Check implements Method: p must lie on the capped simplex of the level.
func (m *cvarRun) Check(name string, p []float64) error {
	if err := checkSimplex(name, p); err != nil {
		return err
	}
	for i, v := range p {
		if v > m.upper*(1+capTolerance) {
			return fmt.Errorf("%s[%d] = %v: above the cap 1/(a n) = %v of CVaR at level a = %v with n = %d tasks",
				name, i, v, m.upper, m.set.Level, len(p))
		}
	}
	return nil
}

// cvarInfo registers CVaR. Its level is swept (a curve of levels in the
// trade-off figure, one run name per level); a file that leaves p_lr out
// gets Algorithm 1's step size for the config (MethodDefaults.PLR), so
// level 1/n reproduces TR-MAML.
var cvarInfo = MethodInfo{
	Name: "cvar", Swept: "level",
	Step: "p_lr", StepValue: func(s MethodSettings) float64 { return s.(*CVaR).PLR },
	New: func() MethodSettings { return &CVaR{Level: 0.1, PLR: 1e-4} },
	Defaults: func(s MethodSettings, d MethodDefaults) error {
		if d.Stated("p_lr") {
			return nil
		}
		v, err := d.PLR()
		s.(*CVaR).PLR = v
		return err
	},
	Check: func(s MethodSettings) []SettingError {
		c := s.(*CVaR)
		errs := checkPLR(c.PLR)
		switch {
		case math.IsNaN(c.Level) || math.IsInf(c.Level, 0):
			errs = append([]SettingError{{"level", c.Level, "must be a finite number in (0, 1]"}}, errs...)
		case !(c.Level > 0 && c.Level <= 1):
			errs = append([]SettingError{{"level", c.Level, "must be in (0, 1]"}}, errs...)
		}
		return errs
	},
	SweptValue: func(s MethodSettings) float64 { return s.(*CVaR).Level },
}
