package theory

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/trmaml/trmaml/metalearn"
)

// LinReg is a family of n linear-regression tasks in d dimensions with exact
// population losses. Task i draws x with covariance Sigma_i and
// y = x'theta_i + noise of variance Noise_i, so the squared loss of w is
// f_i(w) = 1/2 (w - theta_i)' Sigma_i (w - theta_i) + Noise_i/2, the same on
// support and query data. One inner step of size Alpha gives the MAML
// objective F_i(w) = f_i(w - Alpha grad f_i(w)), a convex quadratic with
// Hessian H_i = (I - Alpha Sigma_i) Sigma_i (I - Alpha Sigma_i). Tasks differ
// in difficulty through Sigma_i, theta_i and the noise floor.
//
// LinReg is a metalearn.TaskSet whose instances are the tasks themselves
// (the sampled row's first support input is the task index); Objective is
// its metalearn.Objective.
type LinReg struct {
	Sigma []*mat.SymDense
	Theta [][]float64
	Noise []float64
	Alpha float64
}

// DefaultFamily is the family of the Theorem 1 study: n = 3 tasks in d = 2
// dimensions with optima 120 degrees apart on a circle of radius 1/2,
// anisotropic covariances diag(s, 0.7 s) of scales s = 1, 1.5 and 0.7, and
// noise floors 0.3, 0.1 and 0.2; Alpha = 1/4, below 1/L = 1/1.5. All three
// tasks carry weight at the saddle point, which lies inside the unit ball
// (DefaultRadius). The family is small so that the loose worst-case
// constants of the theorem's step sizes (bounds over the whole ball) still
// reach the 1/sqrt(T) regime within T = 100 to 100,000.
func DefaultFamily() *LinReg {
	scales := []float64{1, 1.5, 0.7}
	f := &LinReg{Alpha: 0.25, Noise: []float64{0.3, 0.1, 0.2}}
	for i, s := range scales {
		a := 2 * math.Pi * float64(i) / float64(len(scales))
		f.Sigma = append(f.Sigma, mat.NewSymDense(2, []float64{s, 0, 0, 0.7 * s}))
		f.Theta = append(f.Theta, []float64{0.5 * math.Cos(a), 0.5 * math.Sin(a)})
	}
	return f
}

// DefaultRadius is the radius R of the ball W of the Theorem 1 study.
const DefaultRadius = 1.0

// Dim is d, the number of parameters.
func (f *LinReg) Dim() int { return len(f.Theta[0]) }

// Len implements metalearn.TaskSet.
func (f *LinReg) Len() int { return len(f.Theta) }

// Name implements metalearn.TaskSet.
func (f *LinReg) Name(i int) string { return fmt.Sprintf("task %d", i) }

// Mass implements metalearn.TaskSet: every task counts once.
func (f *LinReg) Mass(int) float64 { return 1 }

// Dims implements metalearn.TaskSet.
func (f *LinReg) Dims() (int, int) { return 1, 1 }

// Sample implements metalearn.TaskSet: an instance is the task's population.
func (f *LinReg) Sample(i int, _ *rand.Rand, b *metalearn.Batch, t int) {
	sx, _, _, _ := b.Row(t)
	sx[0] = float64(i)
}

// Hessian returns H_i, the Hessian of F_i.
func (f *LinReg) Hessian(i int) *mat.SymDense {
	d := f.Dim()
	var a, h mat.Dense
	a.Scale(-f.Alpha, f.Sigma[i])
	for j := 0; j < d; j++ {
		a.Set(j, j, 1+a.At(j, j))
	}
	h.Mul(&a, f.Sigma[i])
	h.Mul(&h, &a)
	s := mat.NewSymDense(d, nil)
	for r := 0; r < d; r++ {
		for c := r; c < d; c++ {
			s.SetSym(r, c, (h.At(r, c)+h.At(c, r))/2)
		}
	}
	return s
}

// MetaLoss returns F_i(w) from the closed form 1/2 (w-theta_i)' H_i
// (w-theta_i) + Noise_i/2, independent of the inner step that Objective runs.
func (f *LinReg) MetaLoss(i int, w []float64) float64 {
	d := diff(w, f.Theta[i])
	return 0.5*mat.Inner(d, f.Hessian(i), d) + f.Noise[i]/2
}

func diff(a, b []float64) *mat.VecDense {
	v := mat.NewVecDense(len(a), nil)
	for j := range a {
		v.SetVec(j, a[j]-b[j])
	}
	return v
}

// Objective is the exact one-step MAML objective of a LinReg family for a
// batch of tasks instances: it runs the inner gradient step and
// differentiates through it, grad F_i(w) = (I - Alpha Sigma_i) grad f_i(w').
type Objective struct {
	Family *LinReg
	Batch  int
}

// NumParams implements metalearn.Objective.
func (o *Objective) NumParams() int { return o.Family.Dim() }

// Tasks implements metalearn.Objective.
func (o *Objective) Tasks() int { return o.Batch }

// Losses implements metalearn.Objective.
func (o *Objective) Losses(w []float64, b *metalearn.Batch, weights, losses, grad []float64) error {
	f := o.Family
	d := f.Dim()
	if grad != nil {
		clear(grad)
	}
	wv := mat.NewVecDense(d, append([]float64(nil), w...))
	for t := 0; t < b.Tasks; t++ {
		i := int(b.SupportX[t*b.Support])
		theta := mat.NewVecDense(d, f.Theta[i])
		// Inner step: w' = w - alpha Sigma (w - theta).
		var r, g, adapted mat.VecDense
		r.SubVec(wv, theta)
		g.MulVec(f.Sigma[i], &r)
		adapted.AddScaledVec(wv, -f.Alpha, &g)
		// Query loss at w' and its gradient through the step.
		r.SubVec(&adapted, theta)
		g.MulVec(f.Sigma[i], &r)
		losses[t] = 0.5*mat.Dot(&r, &g) + f.Noise[i]/2
		if grad != nil {
			var h mat.VecDense
			h.MulVec(f.Sigma[i], &g)
			for j := 0; j < d; j++ {
				grad[j] += weights[t] * (g.AtVec(j) - f.Alpha*h.AtVec(j))
			}
		}
	}
	return nil
}
