package theory

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trmaml/trmaml/metalearn"
)

// Constants are the quantities of Theorem 1's step sizes for a family on the
// ball of radius R: B (a bound on every task loss f_i over the ball), L (a
// Lipschitz constant of every f_i there), H (a bound on -lambda_min of their
// Hessians: 0 for these convex losses) and G_p^2 = n (n + C + 1) B^2 / C,
// Lemma 1's bound on the second moment of g_p.
type Constants struct {
	R, B, L, H, Gp float64
	N, C           int
}

// TheoremConstants computes Constants for a batch of C tasks: over
// ||w|| <= R, ||grad f_i(w)|| = ||Sigma_i (w - theta_i)|| <= ||Sigma_i||
// (R + ||theta_i||) and f_i(w) <= ||Sigma_i|| (R + ||theta_i||)^2 / 2 +
// Noise_i / 2.
func (f *LinReg) TheoremConstants(radius float64, batch int) Constants {
	c := Constants{R: radius, N: f.Len(), C: batch}
	for i, s := range f.Sigma {
		norm := mat.Norm(s, 2)
		reach := radius + floats.Norm(f.Theta[i], 2)
		c.L = math.Max(c.L, norm*reach)
		c.B = math.Max(c.B, norm*reach*reach/2+f.Noise[i]/2)
	}
	n, C := float64(c.N), float64(c.C)
	c.Gp = math.Sqrt(n*(n+C+1)/C) * c.B
	return c
}

// StepW is Theorem 1's eta_w = 2R / ((1 + alpha H) L sqrt(n T)).
func (c Constants) StepW(alpha float64, T int) float64 {
	return 2 * c.R / ((1 + alpha*c.H) * c.L * math.Sqrt(float64(c.N)*float64(T)))
}

// StepP is Theorem 1's eta_p = 2 / (G_p sqrt(T)) for the Euclidean ascent.
func (c Constants) StepP(T int) float64 { return 2 / (c.Gp * math.Sqrt(float64(T))) }

// StepPEntropic is the step of stochastic mirror ascent with the entropy on
// the simplex (Nemirovski et al. 2009): sqrt(2 ln n) / (G sqrt(T)), with
// G^2 >= E ||g_p||_inf^2; G_p bounds it since ||.||_inf <= ||.||_2.
func (c Constants) StepPEntropic(T int) float64 {
	return math.Sqrt(2*math.Log(float64(c.N))) / (c.Gp * math.Sqrt(float64(T)))
}

// Bound is Theorem 1's bound on the expected duality gap after T iterations.
func (c Constants) Bound(alpha float64, T int) float64 {
	return (3*math.Sqrt(float64(c.N))*c.R*(1+alpha*c.H)*c.L + 3*c.Gp) / math.Sqrt(float64(T))
}

// Geometry is the ascent on p: Algorithm 1's Euclidean projection or the
// entropic (exponentiated-gradient) variant.
type Geometry string

const (
	Euclidean Geometry = "euclidean"
	Entropic  Geometry = "entropic"
)

// Run is Algorithm 1 on the family for T iterations from w = 0 with the
// theorem's step sizes, plain SGD on w projected onto the ball, C tasks per
// iteration and output rule T1, through metalearn.Trainer and the method of
// the geometry. It returns the duality gap of the averaged iterates.
func (f *LinReg) Run(g Geometry, radius float64, batch, T int, seed uint64) (float64, error) {
	c := f.TheoremConstants(radius, batch)
	var method metalearn.Method
	switch g {
	case Euclidean:
		method = metalearn.TRMAML{PLR: c.StepP(T)}.New()
	case Entropic:
		method = metalearn.EntropicTRMAML{PLR: c.StepPEntropic(T)}.New()
	default:
		return 0, fmt.Errorf("theory: unknown geometry %q", g)
	}
	s := metalearn.Settings{Method: method, Iterations: T, Batch: batch, Support: 1, Query: 1, BallRadius: radius,
		Output: metalearn.OutputAveraged, Optimizer: &metalearn.SGD{LR: c.StepW(f.Alpha, T)}, Seed: seed}
	obj := &Objective{Family: f, Batch: batch}
	tr, err := metalearn.NewTrainer(obj, f, make([]float64, f.Dim()), s)
	if err != nil {
		return 0, err
	}
	for i := 0; i < T; i++ {
		if _, err := tr.Step(); err != nil {
			return 0, err
		}
	}
	w, p := tr.Solution()
	return f.Gap(w, p, radius)
}

// Curve is the measured duality gap of one geometry against T.
type Curve struct {
	Geometry Geometry
	T        []int
	// Gaps[k][s] is the gap after T[k] iterations with the s-th seed.
	Gaps [][]float64
	// Mean[k] is the mean over seeds, the estimate of the expected gap, and
	// Half[k] the half-width of its 95% confidence interval (Student t).
	Mean, Half []float64
	// Slope and Intercept fit log Mean = Intercept + Slope log T by least
	// squares; Theorem 1 bounds the expected gap by a constant times
	// T^(-1/2).
	Slope, Intercept float64
}

// LocalSlope is the log-log slope of the mean gap between T[k-1] and T[k].
func (c Curve) LocalSlope(k int) float64 {
	return math.Log(c.Mean[k]/c.Mean[k-1]) / math.Log(float64(c.T[k])/float64(c.T[k-1]))
}

// Measure runs the geometry for every T and seed and fits the slope.
func (f *LinReg) Measure(g Geometry, radius float64, batch int, Ts []int, seeds []uint64) (Curve, error) {
	c := Curve{Geometry: g, T: Ts}
	var x, y []float64
	for _, T := range Ts {
		gaps := make([]float64, len(seeds))
		for s, seed := range seeds {
			gap, err := f.Run(g, radius, batch, T, seed)
			if err != nil {
				return Curve{}, err
			}
			gaps[s] = gap
		}
		mean, std := stat.MeanStdDev(gaps, nil)
		half := 0.0
		if k := len(gaps); k > 1 {
			half = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(0.975) * std / math.Sqrt(float64(k))
		}
		c.Gaps = append(c.Gaps, gaps)
		c.Mean = append(c.Mean, mean)
		c.Half = append(c.Half, half)
		x = append(x, math.Log(float64(T)))
		y = append(y, math.Log(mean))
	}
	c.Intercept, c.Slope = stat.LinearRegression(x, y, nil, false)
	return c, nil
}

// LogGrid returns about perDecade values of T per decade from lo to hi,
// geometrically spaced and rounded.
func LogGrid(lo, hi, perDecade int) []int {
	var out []int
	steps := int(math.Round(math.Log10(float64(hi)/float64(lo)) * float64(perDecade)))
	for k := 0; k <= steps; k++ {
		T := int(math.Round(float64(lo) * math.Pow(10, float64(k)/float64(perDecade))))
		if len(out) == 0 || T > out[len(out)-1] {
			out = append(out, T)
		}
	}
	return out
}
