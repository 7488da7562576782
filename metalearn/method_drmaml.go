package metalearn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// DRMAML minimises CVaR_alpha of the post-adaptation task loss with DR-MAML's
// two-stage heuristic (Wang, Lv, Feng, Xie, Huang, NeurIPS 2023): every
// iteration adapts a candidate batch of B instances drawn as MAML draws them,
// and back-propagates only the tail, the ceil(B(1-alpha)) instances with the
// largest losses (those at or above the empirical alpha-quantile), each
// weighted 1/tail. p stays MAML's empirical distribution.
type DRMAML struct {
	// Alpha is the confidence level in (0, 1): the tail is the worst
	// fraction 1-alpha of the candidates.
	Alpha float64 `yaml:"alpha"`
	// Candidates is B, the instances adapted per iteration; 0 means the
	// fewest whose tail is the config's meta-batch, so that DR-MAML
	// back-propagates as many instances as MAML does (CandidateBatch).
	Candidates int `yaml:"candidates"`
}

// New implements MethodSettings.
func (s DRMAML) New() Method { return &drmamlRun{set: s} }

// drmamlRun is a running DR-MAML.
type drmamlRun struct {
	set   DRMAML
	maml  mamlRun
	tail  int
	order []int
}

// Init implements Method: batch is B, the candidates.
func (m *drmamlRun) Init(masses []float64, batch int) ([]float64, error) {
	if !(m.set.Alpha > 0 && m.set.Alpha < 1) {
		return nil, fmt.Errorf("metalearn: DR-MAML: Alpha must be in (0, 1), got %v", m.set.Alpha)
	}
	p, err := m.maml.Init(masses, batch)
	m.tail = tailSize(batch, m.set.Alpha)
	m.order = make([]int, batch)
	return p, err
}

// Draw implements Method: MAML's draw; the weight is Weigh's.
func (m *drmamlRun) Draw(rng *rand.Rand, p []float64) (int, float64) { return m.maml.Draw(rng, p) }

// Weigh implements Weigher: 1/tail on the tail, 0 elsewhere.
func (m *drmamlRun) Weigh(_ []float64, _ []int, losses, weights []float64) {
	selectTail(losses, m.tail, 1/float64(m.tail), m.order, weights)
}

// Update implements Method: p stays fixed.
func (m *drmamlRun) Update([]float64, []int, []float64) {}

// Check implements Method: MAML's.
func (m *drmamlRun) Check(name string, p []float64) error { return m.maml.Check(name, p) }

// CandidateBatch implements CandidateMethod.
func (s DRMAML) CandidateBatch(batch int) (int, error) {
	return candidateBatch(s.Candidates, s.Alpha, batch)
}

// tailSize is ceil(b(1-alpha)), the number of the b candidates at or above
// their alpha-quantile, at least 1; the product is rounded down by a hair
// first so that 1-0.7 = 0.30000000000000004 keeps 30 of 100.
func tailSize(b int, alpha float64) int {
	return max(1, int(math.Ceil(float64(b)*(1-alpha)*(1-1e-12))))
}

// MaxCandidates bounds the candidate batch B of a tail method, as configs
// bounds meta.batch: an alpha close to 1 (B about meta.batch / (1-alpha))
// or a mistyped candidates is refused by name instead of exhausting memory.
const MaxCandidates = 10_000

// candidateBatch is B for a tail method: candidates if set (refused below
// the meta-batch, which it must keep at least), else the fewest B whose
// tail is the meta-batch; at most MaxCandidates.
func candidateBatch(candidates int, alpha float64, batch int) (int, error) {
	if candidates > 0 {
		if candidates < batch {
			return 0, SettingError{"candidates", candidates, fmt.Sprintf("the candidate batch must be >= meta.batch = %d, the tail it keeps (0: meta.batch / (1-alpha))", batch)}
		}
		if candidates > MaxCandidates {
			return 0, SettingError{"candidates", candidates, fmt.Sprintf("must be <= %d", MaxCandidates)}
		}
		return candidates, nil
	}
	if !(alpha > 0 && alpha < 1) {
		return batch, nil // refused by Check
	}
	tooMany := func(b float64) error {
		return SettingError{"alpha", alpha, fmt.Sprintf("needs a candidate batch of meta.batch / (1-alpha) = %.0f instances, more than %d: a smaller alpha or meta.batch, or a candidates <= %d", b, MaxCandidates, MaxCandidates)}
	}
	if approx := float64(batch) / (1 - alpha); approx > MaxCandidates+1 {
		return 0, tooMany(approx) // before the search below, which takes B steps
	}
	b := batch
	for tailSize(b, alpha) < batch {
		b++
	}
	if b > MaxCandidates {
		return 0, tooMany(float64(b))
	}
	return b, nil
}

// selectTail sets weights to w on the k largest losses and 0 elsewhere; of
// equal losses the first are taken. order is scratch of len(losses).
func selectTail(losses []float64, k int, w float64, order []int, weights []float64) {
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case losses[a] > losses[b]:
			return -1
		case losses[a] < losses[b]:
			return 1
		}
		return 0
	})
	clear(weights)
	for _, i := range order[:k] {
		weights[i] = w
	}
}

// drmamlInfo registers DR-MAML. Its alpha is swept (the trade-off path).
var drmamlInfo = MethodInfo{
	Name: "drmaml", FixedP: true, Swept: "alpha",
	New:        func() MethodSettings { return &DRMAML{Alpha: 0.7} },
	Check:      func(s MethodSettings) []SettingError { d := s.(*DRMAML); return checkTail(d.Alpha, d.Candidates) },
	SweptValue: func(s MethodSettings) float64 { return s.(*DRMAML).Alpha },
}

// checkTail checks the settings of a tail method.
func checkTail(alpha float64, candidates int) []SettingError {
	var errs []SettingError
	switch {
	case math.IsNaN(alpha) || math.IsInf(alpha, 0):
		errs = append(errs, SettingError{"alpha", alpha, "must be a finite number in (0, 1)"})
	case !(alpha > 0 && alpha < 1):
		errs = append(errs, SettingError{"alpha", alpha, "must be in (0, 1)"})
	}
	if candidates < 0 {
		errs = append(errs, SettingError{"candidates", candidates, "must be >= 0 (0: meta.batch / (1-alpha))"})
	}
	return errs
}
