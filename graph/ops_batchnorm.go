package graph

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Batch normalisation as a family of fused ops, each one or two passes over
// the (T, M, F) activations, with closed-form derivatives. The composition of
// generic ops it replaces made about three times as many passes over the
// first block's activations, the CNN's largest tensors.
//
// For z (T, M, F), every task t and channel f has the mean mu and the
// inverse deviation inv = (var + eps)^(-1/2) of its M values (biased
// variance), and zhat = (z - mu) * inv. The ops are
//
//	bnStats(z)                   = (mu, inv) as (T, 2, F)
//	bnScale(z, st, gamma)        = gamma * zhat
//	bnDot(z, st, g)              = sum over M of g * zhat            (T, F)
//	bnBack(z, st, gamma, g, a, c) = gamma * inv * (g - a/M - zhat*c/M)
//	bnInv(z, st)                 = inv                               (T, F)
//
// where st = bnStats(z) is a cache of a function of z: it carries no
// derivative, and each op's derivative with respect to z is the total one
// (through mu and inv as well). The CNN normalises and max-pools in one
// step with the pooled forms of these ops (ops_bnpool.go), whose
// derivatives are built from this family.
//
// The derivatives close over the family: d bnScale = (bnDot, bnBack),
// d bnDot = (bnScale, bnBack), d bnInv = bnScale, and d bnBack is built from
// bnScale, bnBack, bnDot, bnInv and (T, F) arithmetic. bnBack is the
// backward pass of batch norm: with a = sum g and c = bnDot(z, st, g) it is
// the gradient with respect to z.

// bnStatsKernel computes the mean and inverse deviation of every channel.
type bnStatsKernel struct{ eps float64 }

// bnStats returns (mu, inv) (T, 2, F) of z (T, M, F).
func bnStats(z *gorgonia.Node, eps float64) (*gorgonia.Node, error) {
	return apply(bnStatsKernel{eps}, z)
}

func (k bnStatsKernel) name() string           { return fmt.Sprintf("bnStats(%v)", k.eps) }
func (k bnStatsKernel) differentiable() []bool { return []bool{false} }

func (k bnStatsKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || len(in[0]) != 3 || in[0][1] < 1 {
		return nil, shapeErr("one (T, M, F) input", in)
	}
	return tensor.Shape{in[0][0], 2, in[0][2]}, nil
}

func (k bnStatsKernel) forward(a *args) { call(a, k, forwardBNStats[float64], forwardBNStats[float32]) }

// forwardBNStats sums in float64 in one pass, shifted by the task's first
// row so that a large common offset does not cancel the variance away.
func forwardBNStats[T float](k bnStatsKernel, out []T, in [][]T, s []tensor.Shape) {
	z := in[0]
	m, f := s[0][1], s[0][2]
	parallelTasks(s[0][0], m*f, func(t int) {
		zt := z[t*m*f : (t+1)*m*f]
		shift, sum, sq := zt[:f], make([]float64, f), make([]float64, f)
		vec.Moments(sum, sq, zt, shift)
		setStats(out, t, sum, sq, shift, m, k.eps)
	})
}

// setStats sets the mean and inverse deviation of task t in st (T, 2, F)
// from the sums over m rows of z - shift and of its squares.
func setStats[T float](st []T, t int, sum, sq []float64, shift []T, m int, eps float64) {
	mu, inv := taskStats(st, t, len(shift))
	for i := range sum {
		mean := sum[i] / float64(m)
		v := max(sq[i]/float64(m)-mean*mean, 0)
		mu[i] = T(float64(shift[i]) + mean)
		inv[i] = T(1 / math.Sqrt(v+eps))
	}
}

// taskStats returns the mean and inverse deviation of the f channels of
// task t in the statistics st (T, 2, F): the one place that knows the layout.
func taskStats[T float](st []T, t, f int) (mu, inv []T) {
	return st[2*t*f : (2*t+1)*f], st[(2*t+1)*f : (2*t+2)*f]
}

// channelScale returns s = gamma * inv of task t.
func channelScale[T float](st, gamma []T, t, f int) []T {
	_, inv := taskStats(st, t, f)
	s := make([]T, f)
	for i := range s {
		s[i] = gamma[t*f+i] * inv[i]
	}
	return s
}

// bnAffine returns, for task t, the scale s = gamma * inv and offset
// o = beta - mu * s (beta nil: 0) with which gamma * zhat + beta = z*s + o.
func bnAffine[T float](st, gamma, beta []T, t, f int) (s, o []T) {
	mu, _ := taskStats(st, t, f)
	s, o = channelScale(st, gamma, t, f), make([]T, f)
	for i := range o {
		if beta != nil {
			o[i] = beta[t*f+i]
		}
		o[i] -= mu[i] * s[i]
	}
	return s, o
}

func (bnStatsKernel) grad(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{nil}, nil
}

// bnShapes checks that in[0] is (T, M, F), in[1] the stats (T, 2, F), the
// inputs at small (T, F) and those at large (T, M, F).
func bnShapes(in []tensor.Shape, n int, small, large []int) error {
	want := fmt.Sprintf("%d inputs: (T, M, F) activations, their (T, 2, F) statistics, (T, F) at %v, (T, M, F) at %v", n, small, large)
	if len(in) != n || len(in[0]) != 3 {
		return shapeErr(want, in)
	}
	t, f := in[0][0], in[0][2]
	ok := in[1].Eq(tensor.Shape{t, 2, f})
	for _, i := range small {
		ok = ok && in[i].Eq(tensor.Shape{t, f})
	}
	for _, i := range large {
		ok = ok && in[i].Eq(in[0])
	}
	if !ok {
		return shapeErr(want, in)
	}
	return nil
}

// bnScaleKernel is gamma * zhat.
type bnScaleKernel struct{}

// bnScale returns gamma * zhat for z (T, M, F) with statistics st.
func bnScale(z, st, gamma *gorgonia.Node) (*gorgonia.Node, error) {
	return apply(bnScaleKernel{}, z, st, gamma)
}

func (bnScaleKernel) name() string           { return "bnScale" }
func (bnScaleKernel) differentiable() []bool { return []bool{true, false, true} }

func (bnScaleKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if err := bnShapes(in, 3, []int{2}, nil); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

func (k bnScaleKernel) forward(a *args) { call(a, k, forwardBNScale[float64], forwardBNScale[float32]) }

// forwardBNScale writes z * s + o with s = gamma * inv and o = -mu * s.
func forwardBNScale[T float](_ bnScaleKernel, out []T, in [][]T, s []tensor.Shape) {
	z, st, gamma := in[0], in[1], in[2]
	m, f := s[0][1], s[0][2]
	parallelTasks(s[0][0], m*f, func(t int) {
		sc, off := bnAffine(st, gamma, nil, t, f)
		vec.Affine(out[t*m*f:(t+1)*m*f], z[t*m*f:(t+1)*m*f], sc, off)
	})
}

// grad: gamma gets bnDot(z, st, g), z the batch-norm backward pass.
func (bnScaleKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	b := &chain{}
	dGamma := b.do(bnDot(in[0], in[1], g))
	sumG := b.do(sumMid(g))
	dz := b.do(bnBack(in[0], in[1], in[2], g, sumG, dGamma))
	return gorgonia.Nodes{dz, nil, dGamma}, b.err
}

// bnDotKernel is the sum over M of g * zhat.
type bnDotKernel struct{}

// bnDot returns the sum over M of g * zhat, (T, F).
func bnDot(z, st, g *gorgonia.Node) (*gorgonia.Node, error) {
	return apply(bnDotKernel{}, z, st, g)
}

func (bnDotKernel) name() string           { return "bnDot" }
func (bnDotKernel) differentiable() []bool { return []bool{true, false, true} }

func (bnDotKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if err := bnShapes(in, 3, nil, []int{2}); err != nil {
		return nil, err
	}
	return tensor.Shape{in[0][0], in[0][2]}, nil
}

func (k bnDotKernel) forward(a *args) { call(a, k, forwardBNDot[float64], forwardBNDot[float32]) }

func forwardBNDot[T float](_ bnDotKernel, out []T, in [][]T, s []tensor.Shape) {
	z, st, g := in[0], in[1], in[2]
	m, f := s[0][1], s[0][2]
	parallelTasks(s[0][0], m*f, func(t int) {
		mu, inv := taskStats(st, t, f)
		acc := make([]float64, f)
		lo, hi := t*m*f, (t+1)*m*f
		vec.DotCentered(acc, g[lo:hi], z[lo:hi], mu)
		for i, v := range acc {
			out[t*f+i] = T(v) * inv[i]
		}
	})
}

// grad: d/dg is gamma-free scaling by zhat; d/dz is the backward pass with
// a = sum g and c = the output.
func (bnDotKernel) grad(in gorgonia.Nodes, out, h *gorgonia.Node) (gorgonia.Nodes, error) {
	dg, err := bnScale(in[0], in[1], h)
	if err != nil {
		return nil, err
	}
	sumG, err := sumMid(in[2])
	if err != nil {
		return nil, err
	}
	dz, err := bnBack(in[0], in[1], h, in[2], sumG, out)
	return gorgonia.Nodes{dz, nil, dg}, err
}

// bnBackKernel is gamma * inv * (g - a/M - zhat*c/M).
type bnBackKernel struct{}

// bnBack returns gamma * inv * (g - a/M - zhat*c/M) for z and g (T, M, F)
// and gamma, a, c (T, F).
func bnBack(z, st, gamma, g, a, c *gorgonia.Node) (*gorgonia.Node, error) {
	return apply(bnBackKernel{}, z, st, gamma, g, a, c)
}

func (bnBackKernel) name() string           { return "bnBack" }
func (bnBackKernel) differentiable() []bool { return []bool{true, false, true, true, true, true} }

func (bnBackKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if err := bnShapes(in, 6, []int{2, 4, 5}, []int{3}); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

func (k bnBackKernel) forward(a *args) { call(a, k, forwardBNBack[float64], forwardBNBack[float32]) }

// forwardBNBack writes g * u + z * v + w per channel, with u = gamma*inv,
// v = -u*inv*c/M and w = -u*(a/M) - mu*v.
func forwardBNBack[T float](_ bnBackKernel, out []T, in [][]T, s []tensor.Shape) {
	z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5]
	m, f := s[0][1], s[0][2]
	parallelTasks(s[0][0], m*f, func(t int) {
		u, v, w := bnBackCoefficients(st, gamma, a, c, t, f, m)
		lo, hi := t*m*f, (t+1)*m*f
		vec.Affine2(out[lo:hi], g[lo:hi], z[lo:hi], u, v, w)
	})
}

// bnBackCoefficients returns, for task t, the per-channel u = gamma*inv,
// v = -u*inv*c/M and w = -u*(a/M) - mu*v with which gamma*inv*(g - a/M -
// zhat*c/M) = g*u + z*v + w.
func bnBackCoefficients[T float](st, gamma, a, c []T, t, f, m int) (u, v, w []T) {
	mu, inv := taskStats(st, t, f)
	u, v, w = make([]T, f), make([]T, f), make([]T, f)
	for i := range u {
		u[i] = gamma[t*f+i] * inv[i]
		v[i] = -u[i] * inv[i] * c[t*f+i] / T(m)
		w[i] = -u[i]*a[t*f+i]/T(m) - mu[i]*v[i]
	}
	return u, v, w
}

// grad, for the adjoint H of B = gamma*inv*(g - a/M - zhat*c/M), with
// u = gamma*inv, sH = sum H, dH = bnDot(z, st, H) and
// P = sum H*(g - a/M - zhat*c/M):
//
//	dg = H*u, da = -u*sH/M, dc = -u*dH/M, dgamma = inv*P,
//	dz = bnScale(z, st, -u*inv*P/M) + bnBack(z, st, -u*c/M, H, sH, dH).
func (bnBackKernel) grad(in gorgonia.Nodes, _, h *gorgonia.Node) (gorgonia.Nodes, error) {
	z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5]
	d, err := bnBackGrad(z, st, gamma, g, a, c, h, h)
	return gorgonia.Nodes{d.z, nil, d.gamma, d.g, d.a, d.c}, err
}

// bnBackGrads are the derivatives of bnBack (or bnBackPool) with respect to
// its differentiable inputs.
type bnBackGrads struct{ z, gamma, g, a, c *gorgonia.Node }

// bnBackGrad builds the derivatives above for the adjoint h (image shape),
// with hg the adjoint at g's entries: h itself for bnBack, its gather at the
// window positions for bnBackPool, where g is pooled.
func bnBackGrad(z, st, gamma, g, a, c, h, hg *gorgonia.Node) (bnBackGrads, error) {
	m := 1 / float64(z.Shape()[1])
	b := &chain{}
	inv := b.do(bnInv(z, st))
	u := b.do(mul(gamma, inv))
	sH := b.do(sumMid(h))
	dH := b.do(bnDot(z, st, h))
	var d bnBackGrads
	d.g = b.do(mulMid(hg, u))
	d.a = b.do(scale(b.do(mul(u, sH)), -m))
	d.c = b.do(scale(b.do(mul(u, dH)), -m))
	p := b.do(sumMidProd(hg, g))
	p = b.do(axpy(p, b.do(mul(a, sH)), -m))
	p = b.do(axpy(p, b.do(mul(c, dH)), -m))
	d.gamma = b.do(mul(inv, p))
	dz1 := b.do(bnScale(z, st, b.do(scale(b.do(mul(u, d.gamma)), -m))))
	dz2 := b.do(bnBack(z, st, b.do(scale(b.do(mul(u, c)), -m)), h, sH, dH))
	if b.err != nil {
		return d, b.err
	}
	var err error
	d.z, err = sumTerms(gorgonia.Nodes{dz1, dz2})
	return d, err
}

// bnInvKernel is the inverse deviation inv of every channel, (T, F).
type bnInvKernel struct{}

// bnInv returns inv (T, F), differentiable with respect to z.
func bnInv(z, st *gorgonia.Node) (*gorgonia.Node, error) { return apply(bnInvKernel{}, z, st) }

func (bnInvKernel) name() string           { return "bnInv" }
func (bnInvKernel) differentiable() []bool { return []bool{true, false} }

func (bnInvKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if err := bnShapes(in, 2, nil, nil); err != nil {
		return nil, err
	}
	return tensor.Shape{in[0][0], in[0][2]}, nil
}

func (k bnInvKernel) forward(a *args) { call(a, k, forwardBNInv[float64], forwardBNInv[float32]) }

func forwardBNInv[T float](_ bnInvKernel, out []T, in [][]T, s []tensor.Shape) {
	f := s[0][2]
	for t := 0; t < s[0][0]; t++ {
		_, inv := taskStats(in[1], t, f)
		copy(out[t*f:(t+1)*f], inv)
	}
}

// grad: d inv / dz = -inv^2 * zhat / M, so dz = bnScale(z, st, -h*inv^2/M).
func (bnInvKernel) grad(in gorgonia.Nodes, out, h *gorgonia.Node) (gorgonia.Nodes, error) {
	b := &chain{}
	k := b.do(scale(b.do(mul(h, b.do(mul(out, out)))), -1/float64(in[0].Shape()[1])))
	dz := b.do(bnScale(in[0], in[1], k))
	return gorgonia.Nodes{dz, nil}, b.err
}

// chain builds a sequence of nodes and keeps the first error, for
// derivatives that take many small steps.
type chain struct{ err error }

// do returns n, or nil once an error has occurred (recording the first);
// apply refuses the nil inputs of later steps.
func (c *chain) do(n *gorgonia.Node, err error) *gorgonia.Node {
	if c.err == nil && err != nil {
		c.err = err
	}
	if c.err != nil {
		return nil
	}
	return n
}
