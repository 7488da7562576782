package theory

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/trmaml/trmaml/metalearn"
)

// Phi is the min-max objective phi(w, p) = sum_i p_i F_i(w).
func (f *LinReg) Phi(w, p []float64) float64 {
	v := 0.0
	for i, pi := range p {
		if pi != 0 {
			v += pi * f.MetaLoss(i, w)
		}
	}
	return v
}

// WorstLoss is max_{p in simplex} phi(w, p) = max_i F_i(w), with its task.
func (f *LinReg) WorstLoss(w []float64) (float64, int) {
	worst, arg := math.Inf(-1), -1
	for i := range f.Theta {
		if l := f.MetaLoss(i, w); l > worst {
			worst, arg = l, i
		}
	}
	return worst, arg
}

// MinOverBall returns the minimiser of phi(., p) over the ball ||w|| <= radius
// and the minimum: the linear solve (sum p_i H_i) w = sum p_i H_i theta_i,
// or, if that lies outside the ball, the solution of (A + lambda I) w = b
// with lambda > 0 found by bisection so that ||w|| = radius (the KKT point of
// the constrained convex quadratic).
func (f *LinReg) MinOverBall(p []float64, radius float64) ([]float64, float64, error) {
	d := f.Dim()
	a := mat.NewSymDense(d, nil)
	b := mat.NewVecDense(d, nil)
	for i, pi := range p {
		if pi == 0 {
			continue
		}
		h := f.Hessian(i)
		a.AddSym(a, scaled(pi, h))
		var hb mat.VecDense
		hb.MulVec(h, mat.NewVecDense(d, f.Theta[i]))
		b.AddScaledVec(b, pi, &hb)
	}
	solve := func(lambda float64) (*mat.VecDense, error) {
		s := mat.NewSymDense(d, nil)
		s.CopySym(a)
		for j := 0; j < d; j++ {
			s.SetSym(j, j, s.At(j, j)+lambda)
		}
		var ch mat.Cholesky
		if !ch.Factorize(s) {
			return nil, errors.New("theory: sum_i p_i H_i is not positive definite")
		}
		var w mat.VecDense
		if err := ch.SolveVecTo(&w, b); err != nil {
			return nil, err
		}
		return &w, nil
	}
	w, err := solve(0)
	if err != nil {
		return nil, 0, err
	}
	if mat.Norm(w, 2) > radius {
		lo, hi := 0.0, 1.0
		for {
			if w, err = solve(hi); err != nil {
				return nil, 0, err
			}
			if mat.Norm(w, 2) <= radius {
				break
			}
			lo, hi = hi, 2*hi
		}
		for k := 0; k < 200 && hi-lo > 1e-16*hi; k++ {
			mid := (lo + hi) / 2
			if w, err = solve(mid); err != nil {
				return nil, 0, err
			}
			if mat.Norm(w, 2) > radius {
				lo = mid
			} else {
				hi = mid
			}
		}
		if w, err = solve(hi); err != nil {
			return nil, 0, err
		}
	}
	ws := mat.Col(nil, 0, w)
	return ws, f.Phi(ws, p), nil
}

func scaled(c float64, s *mat.SymDense) *mat.SymDense {
	var out mat.SymDense
	out.ScaleSym(c, s)
	return &out
}

// Gap is the duality gap of (w, p): max_{p'} phi(w, p') - min_{||w'|| <= R}
// phi(w', p), zero exactly at a saddle point.
func (f *LinReg) Gap(w, p []float64, radius float64) (float64, error) {
	worst, _ := f.WorstLoss(w)
	_, best, err := f.MinOverBall(p, radius)
	return worst - best, err
}

// Saddle is the min-max solution of a LinReg family over a ball, with the
// evidence that it is one.
type Saddle struct {
	W, P []float64
	// Value is the min-max value max_i F_i(W).
	Value float64
	// Gap is the duality gap of (W, P), an upper bound on the error of Value.
	Gap float64
	// Slackness is max_i p_i (Value - F_i(W)): complementary slackness, zero
	// when only the worst tasks carry weight.
	Slackness float64
}

// Saddle computes the saddle point of min_{||w|| <= radius} max_{p in
// simplex} phi(w, p) by an independent route: projected gradient ascent on
// the concave dual g(p) = min_w phi(w, p) (Danskin: grad g = (F_i(w*(p)))_i),
// with backtracking steps, then Newton's method on the KKT system of the
// active tasks (sum_S p_i H_i (w - theta_i) = 0, F_i(w) = v on S, sum p = 1)
// to machine precision. It fails unless the duality gap ends below 1e-12
// and the saddle's w lies strictly inside the ball.
func (f *LinReg) Saddle(radius float64) (Saddle, error) {
	n := f.Len()
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	scratch := make([]float64, n)
	grad := make([]float64, n)
	next := make([]float64, n)
	w, g, err := f.MinOverBall(p, radius)
	if err != nil {
		return Saddle{}, err
	}
	step := 1.0
	for it := 0; it < 20000; it++ {
		for i := range grad {
			grad[i] = f.MetaLoss(i, w)
		}
		if worst := floats.Max(grad); worst-g < 1e-9 {
			break
		}
		for {
			for i := range next {
				next[i] = p[i] + step*grad[i]
			}
			metalearn.ProjectSimplex(next, next, scratch)
			wn, gn, err := f.MinOverBall(next, radius)
			if err != nil {
				return Saddle{}, err
			}
			// Sufficient ascent for a concave g with step 1/L: the
			// quadratic minorant at p.
			d2, lin := 0.0, 0.0
			for i := range p {
				lin += grad[i] * (next[i] - p[i])
				d2 += (next[i] - p[i]) * (next[i] - p[i])
			}
			if gn >= g+lin-d2/(2*step) || step < 1e-12 {
				copy(p, next)
				w, g = wn, gn
				step *= 1.5
				break
			}
			step /= 2
		}
	}
	s, err := f.polish(w, p, radius)
	if err != nil {
		return Saddle{}, err
	}
	if s.Gap > 1e-12*math.Max(1, math.Abs(s.Value)) {
		return s, fmt.Errorf("theory: saddle point not certified: duality gap %g", s.Gap)
	}
	if floats.Norm(s.W, 2) >= radius {
		return s, fmt.Errorf("theory: the saddle point lies on the ball of radius %v; take a larger one", radius)
	}
	return s, nil
}

// polish runs Newton's method on the KKT system of the tasks that carry
// weight at the dual solution (w, p), then certifies the result.
func (f *LinReg) polish(w, p []float64, radius float64) (Saddle, error) {
	d := f.Dim()
	var active []int
	for i, pi := range p {
		if pi > 1e-7 {
			active = append(active, i)
		}
	}
	m := len(active)
	v, _ := f.WorstLoss(w)
	x := append(append(append([]float64(nil), w...), make([]float64, m)...), v)
	for k, i := range active {
		x[d+k] = p[i]
	}
	size := d + m + 1
	for it := 0; it < 50; it++ {
		jac := mat.NewDense(size, size, nil)
		res := mat.NewVecDense(size, nil)
		wv := x[:d]
		for k, i := range active {
			pi := x[d+k]
			h := f.Hessian(i)
			var hr mat.VecDense
			hr.MulVec(h, diff(wv, f.Theta[i]))
			for r := 0; r < d; r++ {
				res.SetVec(r, res.AtVec(r)+pi*hr.AtVec(r))
				for c := 0; c < d; c++ {
					jac.Set(r, c, jac.At(r, c)+pi*h.At(r, c))
				}
				jac.Set(r, d+k, hr.AtVec(r))
				jac.Set(d+k, r, hr.AtVec(r))
			}
			res.SetVec(d+k, f.MetaLoss(i, wv)-x[d+m])
			jac.Set(d+k, d+m, -1)
			jac.Set(d+m, d+k, 1)
			res.SetVec(d+m, res.AtVec(d+m)+pi)
		}
		res.SetVec(d+m, res.AtVec(d+m)-1)
		if mat.Norm(res, math.Inf(1)) < 1e-15 {
			break
		}
		var dx mat.VecDense
		if err := dx.SolveVec(jac, res); err != nil {
			return Saddle{}, fmt.Errorf("theory: KKT Newton step: %w", err)
		}
		for j := range x {
			x[j] -= dx.AtVec(j)
		}
	}
	s := Saddle{W: x[:d:d], P: make([]float64, f.Len())}
	for k, i := range active {
		if x[d+k] < 0 {
			return Saddle{}, fmt.Errorf("theory: KKT solution gives task %d a negative weight %v", i, x[d+k])
		}
		s.P[i] = x[d+k]
	}
	s.Value, _ = f.WorstLoss(s.W)
	var err error
	if s.Gap, err = f.Gap(s.W, s.P, radius); err != nil {
		return Saddle{}, err
	}
	for i, pi := range s.P {
		s.Slackness = math.Max(s.Slackness, pi*(s.Value-f.MetaLoss(i, s.W)))
	}
	return s, nil
}
