package metalearn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DRMAMLPlus is DR-MAML+ (Lv, Wang, Liang, Xie, NeurIPS 2024): DR-MAML's loop
// with VaR_alpha of the B candidate losses estimated from their Gaussian
// kernel density (Scott's bandwidth) and the meta-loss
// VaR + 1/(1-alpha) mean_B((loss_i - VaR)_+), whose gradient weighs every
// instance above VaR by 1/((1-alpha) B) and the others by 0 (VaR is held
// fixed, as the authors' code detaches it). When the density cannot be
// formed (all losses equal) the tail is DR-MAML's empirical one, with the
// same weights, and Fallbacks counts the iterations.
type DRMAMLPlus struct {
	// Alpha is the confidence level in (0, 1).
	Alpha float64 `yaml:"alpha"`
	// Candidates is B, as DRMAML's.
	Candidates int `yaml:"candidates"`
}

// New implements MethodSettings.
func (s DRMAMLPlus) New() Method { return &drmamlPlusRun{set: s} }

// drmamlPlusRun is a running DR-MAML+.
type drmamlPlusRun struct {
	set       DRMAMLPlus
	maml      mamlRun
	order     []int
	fallbacks int
	warn      func(msg string)
}

func (m *drmamlPlusRun) setWarn(f func(msg string)) { m.warn = f }

// Init implements Method: batch is B, the candidates.
func (m *drmamlPlusRun) Init(masses []float64, batch int) ([]float64, error) {
	if !(m.set.Alpha > 0 && m.set.Alpha < 1) {
		return nil, fmt.Errorf("metalearn: DR-MAML+: Alpha must be in (0, 1), got %v", m.set.Alpha)
	}
	m.order = make([]int, batch)
	return m.maml.Init(masses, batch)
}

// Draw implements Method: MAML's draw; the weight is Weigh's.
func (m *drmamlPlusRun) Draw(rng *rand.Rand, p []float64) (int, float64) { return m.maml.Draw(rng, p) }

// Weigh implements Weigher.
func (m *drmamlPlusRun) Weigh(_ []float64, _ []int, losses, weights []float64) {
	w := 1 / ((1 - m.set.Alpha) * float64(len(losses)))
	v, ok := KDEQuantile(losses, m.set.Alpha)
	if !ok {
		if m.fallbacks++; m.fallbacks == 1 && m.warn != nil {
			m.warn(fmt.Sprintf("DR-MAML+: no kernel density of %d candidate losses (all equal): the empirical tail of DR-MAML is used when this happens (said once)", len(losses)))
		}
		selectTail(losses, tailSize(len(losses), m.set.Alpha), w, m.order, weights)
		return
	}
	for i, l := range losses {
		weights[i] = 0
		if l > v {
			weights[i] = w
		}
	}
}

// Fallbacks is the number of iterations whose losses had no density (all
// equal) and took DR-MAML's empirical tail instead.
func (m *drmamlPlusRun) Fallbacks() int { return m.fallbacks }

// Update implements Method: p stays fixed.
func (m *drmamlPlusRun) Update([]float64, []int, []float64) {}

// Check implements Method: MAML's.
func (m *drmamlPlusRun) Check(name string, p []float64) error { return m.maml.Check(name, p) }

// CandidateBatch implements CandidateMethod, as DRMAML's.
func (s DRMAMLPlus) CandidateBatch(batch int) (int, error) {
	return candidateBatch(s.Candidates, s.Alpha, batch)
}

// KDEQuantile is the alpha-quantile of the Gaussian kernel density estimate
// of x with Scott's bandwidth h = s n^(-1/5) (s the sample standard
// deviation), the root of CDF(v) = mean_i Phi((v - x_i)/h) = alpha on
// [min x, max x] (by bisection to the last bit), as DR-MAML+ estimates
// VaR_alpha. When the root is not in that interval it falls back, as the
// authors' code does, to the first of 1000 evenly spaced points of
// [min, max] where the normalised cumulative sum of the density reaches
// alpha. ok is false, and v meaningless, when the density cannot be formed:
// fewer than 2 values, all equal, or one not finite.
func KDEQuantile(x []float64, alpha float64) (v float64, ok bool) {
	n := len(x)
	if n < 2 {
		return 0, false
	}
	lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
	for _, xi := range x {
		if math.IsNaN(xi) || math.IsInf(xi, 0) {
			return 0, false
		}
		lo, hi = math.Min(lo, xi), math.Max(hi, xi)
		mean += xi / float64(n)
	}
	ss := 0.0
	for _, xi := range x {
		ss += (xi - mean) * (xi - mean)
	}
	h := math.Sqrt(ss/float64(n-1)) * math.Pow(float64(n), -0.2)
	if !(h > 0) || lo == hi {
		return 0, false
	}
	cdf := func(v float64) float64 {
		s := 0.0
		for _, xi := range x {
			s += 0.5 * math.Erfc(-(v-xi)/(h*math.Sqrt2))
		}
		return s / float64(n)
	}
	if flo, fhi := cdf(lo)-alpha, cdf(hi)-alpha; flo*fhi <= 0 {
		if flo == 0 {
			return lo, true
		}
		if fhi == 0 {
			return hi, true
		}
		a, b := lo, hi
		for {
			mid := a + (b-a)/2
			if mid <= a || mid >= b {
				return mid, true
			}
			if cdf(mid) < alpha {
				a = mid
			} else {
				b = mid
			}
		}
	}
	const points = 1000
	grid, pdf := make([]float64, points), make([]float64, points)
	total := 0.0
	for k := range grid {
		grid[k] = lo + (hi-lo)*float64(k)/(points-1)
		for _, xi := range x {
			z := (grid[k] - xi) / h
			pdf[k] += math.Exp(-z * z / 2)
		}
		total += pdf[k]
	}
	cum := 0.0
	for k, d := range pdf {
		cum += d
		if cum/total >= alpha {
			return grid[k], true
		}
	}
	return grid[points-1], true
}

// drmamlPlusInfo registers DR-MAML+. Its alpha is swept.
var drmamlPlusInfo = MethodInfo{
	Name: "drmaml_plus", FixedP: true, Swept: "alpha",
	New: func() MethodSettings { return &DRMAMLPlus{Alpha: 0.7} },
	Check: func(s MethodSettings) []SettingError {
		d := s.(*DRMAMLPlus)
		return checkTail(d.Alpha, d.Candidates)
	},
	SweptValue: func(s MethodSettings) float64 { return s.(*DRMAMLPlus).Alpha },
}
