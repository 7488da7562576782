package graph

import (
	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The backward ops of batch norm fused with max-pooling (ops_bnpool.go):
// bnDotPool and bnBackPool, the pooled forms of bnDot and bnBack at given
// window positions, and bnDotMax and bnBackMax, the same at the positions
// they find in their own pass (maxPoolBN's gradient).

// bnDotMaxKernel is bnDotPool(poolArgBN(z, st, gamma), z, st, g), the
// positions found in the same pass; inputs z, st, gamma, g.
type bnDotMaxKernel struct{ p poolGeom }

func (k bnDotMaxKernel) name() string { return "bnDotMax(" + k.p.String() + ")" }

// differentiable: gamma too, with a zero derivative (the positions depend
// on it only through its sign), as the conv bias in gatherBN.
func (k bnDotMaxKernel) differentiable() []bool { return []bool{true, false, true, true} }

func (k bnDotMaxKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 4 {
		return nil, shapeErr("activations, statistics, scale and pooled gradient", in)
	}
	o, err := k.p.outShape(in[0])
	if err != nil {
		return nil, err
	}
	if err := bnPoolShapes(k.p, append([]tensor.Shape{o}, in...), 5, []int{3}, []int{4}); err != nil {
		return nil, err
	}
	return tensor.Shape{in[0][0], in[0][2]}, nil
}

func (k bnDotMaxKernel) forward(a *args) {
	call(a, k, forwardBNDotMax[float64], forwardBNDotMax[float32])
}

func forwardBNDotMax[T float](k bnDotMaxKernel, out []T, in [][]T, s []tensor.Shape) {
	z, st, gamma, g := in[0], in[1], in[2], in[3]
	tasks, f := s[0][0], s[0][2]
	acc, scales := make([][]float64, tasks), make([][]T, tasks)
	for t := range acc {
		acc[t], scales[t] = make([]float64, f), channelScale(st, gamma, t, f)
	}
	wc := k.p.W * f
	k.p.eachRow(s[0], func(t, o, p0, wo int) {
		mu, _ := taskStats(st, t, f)
		n := wo * f
		vec.GatherDotMaxRow(acc[t], z[p0:p0+2*n], z[p0+wc:p0+wc+2*n], g[o:o+n], scales[t], mu)
	})
	for t := range acc {
		_, inv := taskStats(st, t, f)
		for i, v := range acc[t] {
			out[t*f+i] = T(v) * inv[i]
		}
	}
}

// grad: bnDotPool's at the positions poolArgBN(z, st, gamma).
func (k bnDotMaxKernel) grad(in gorgonia.Nodes, out, h *gorgonia.Node) (gorgonia.Nodes, error) {
	z, st, gamma, g := in[0], in[1], in[2], in[3]
	pos, err := poolArgBN(z, st, gamma, k.p)
	if err != nil {
		return nil, err
	}
	d, err := bnDotPoolKernel{k.p}.grad(gorgonia.Nodes{pos, z, st, g}, out, h)
	if err != nil {
		return nil, err
	}
	dGamma, err := scale(h, 0)
	return gorgonia.Nodes{d[1], nil, dGamma, d[3]}, err
}

// bnBackMaxKernel is bnBackPool(poolArgBN(z, st, gamma), z, st, gamma, g,
// a, c), the positions found in the same pass; inputs z, st, gamma, g, a, c.
type bnBackMaxKernel struct{ p poolGeom }

func (k bnBackMaxKernel) name() string { return "bnBackMax(" + k.p.String() + ")" }
func (k bnBackMaxKernel) differentiable() []bool {
	return []bool{true, false, true, true, true, true}
}

func (k bnBackMaxKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 6 {
		return nil, shapeErr("activations, statistics, scale, pooled gradient and two (T, F) sums", in)
	}
	o, err := k.p.outShape(in[0])
	if err != nil {
		return nil, err
	}
	if err := bnPoolShapes(k.p, append([]tensor.Shape{o}, in...), 7, []int{3, 5, 6}, []int{4}); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

func (k bnBackMaxKernel) forward(a *args) {
	call(a, k, forwardBNBackMax[float64], forwardBNBackMax[float32])
}

// forwardBNBackMax is forwardBNBackPool with the positions found in its
// pass (when the windows cover the images; else found first).
func forwardBNBackMax[T float](k bnBackMaxKernel, out []T, in [][]T, s []tensor.Shape) {
	z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5]
	m, f := s[0][1], s[0][2]
	o, _ := k.p.outShape(s[0])
	if k.p.H%2 != 0 || k.p.W%2 != 0 {
		pos := make([]T, o.TotalSize())
		forwardPoolArgBN(poolArgBNKernel(k), pos, [][]T{z, st, gamma}, s[:3])
		forwardBNBackPoolTwoPass(bnBackPoolKernel(k), out, [][]T{pos, z, st, gamma, g, a, c}, append([]tensor.Shape{o}, s...))
		return
	}
	coef := make([][3][]T, s[0][0])
	for t := range coef {
		coef[t][0], coef[t][1], coef[t][2] = bnBackCoefficients(st, gamma, a, c, t, f, m)
	}
	wc := k.p.W * f
	k.p.eachRow(s[0], func(t, o, p0, wo int) {
		n := 2 * wo * f
		vec.BackPoolMaxRow(out[p0:p0+n], out[p0+wc:p0+wc+n], z[p0:p0+n], z[p0+wc:p0+wc+n],
			g[o:o+wo*f], coef[t][0], coef[t][1], coef[t][2])
	})
}

// grad: bnBackPool's at the positions poolArgBN(z, st, gamma).
func (k bnBackMaxKernel) grad(in gorgonia.Nodes, out, h *gorgonia.Node) (gorgonia.Nodes, error) {
	z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5]
	pos, err := poolArgBN(z, st, gamma, k.p)
	if err != nil {
		return nil, err
	}
	d, err := bnBackPoolKernel{k.p}.grad(gorgonia.Nodes{pos, z, st, gamma, g, a, c}, out, h)
	if err != nil {
		return nil, err
	}
	return d[1:], nil
}

// bnDotPoolKernel is the sum over the pooled rows of g * zhat at A.
type bnDotPoolKernel struct{ p poolGeom }

// bnDotPool returns the sum over the pooled rows of g * zhat at the
// positions A, (T, F): bnDot(z, st, scatterPool(A, g)).
func bnDotPool(a, z, st, g *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(bnDotPoolKernel{p}, a, z, st, g)
}

func (k bnDotPoolKernel) name() string           { return "bnDotPool(" + k.p.String() + ")" }
func (k bnDotPoolKernel) differentiable() []bool { return []bool{false, true, false, true} }

func (k bnDotPoolKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if err := bnPoolShapes(k.p, in, 4, nil, []int{3}); err != nil {
		return nil, err
	}
	return tensor.Shape{in[1][0], in[1][2]}, nil
}

func (k bnDotPoolKernel) forward(a *args) {
	call(a, k, forwardBNDotPool[float64], forwardBNDotPool[float32])
}

// forwardBNDotPool adds g * (z - mu) at the positions to its task's float64
// sums, a row of windows at a time (the rows of a task run in order on one
// goroutine).
func forwardBNDotPool[T float](k bnDotPoolKernel, out []T, in [][]T, s []tensor.Shape) {
	pos, z, st, g := in[0], in[1], in[2], in[3]
	tasks, f := s[1][0], s[1][2]
	acc := make([][]float64, tasks)
	for t := range acc {
		acc[t] = make([]float64, f)
	}
	wc := k.p.W * f
	k.p.eachRow(s[1], func(t, o, p0, wo int) {
		mu, _ := taskStats(st, t, f)
		n := wo * f
		vec.GatherDotRow(acc[t], pos[o:o+n], z[p0:p0+2*n], z[p0+wc:p0+wc+2*n], g[o:o+n], mu)
	})
	for t := range acc {
		_, inv := taskStats(st, t, f)
		for i, v := range acc[t] {
			out[t*f+i] = T(v) * inv[i]
		}
	}
}

// grad: d/dg is gamma-free scaling by zhat at A; d/dz the pooled backward
// pass with a = sum g and c = the output (as bnDot's).
func (k bnDotPoolKernel) grad(in gorgonia.Nodes, out, h *gorgonia.Node) (gorgonia.Nodes, error) {
	pos, z, st, g := in[0], in[1], in[2], in[3]
	b := &chain{}
	dg := b.do(gatherBNScale(pos, z, st, h, k.p))
	sumG := b.do(sumMid(g))
	dz := b.do(bnBackPool(pos, z, st, h, g, sumG, out, k.p))
	return gorgonia.Nodes{nil, dz, nil, dg}, b.err
}

// bnBackPoolKernel is gamma * inv * (scatterPool(A, g) - a/M - zhat*c/M).
type bnBackPoolKernel struct{ p poolGeom }

// bnBackPool returns bnBack(z, st, gamma, scatterPool(A, g), a, c) for g of
// the pooled shape: the gradient of batch norm followed by max-pooling.
func bnBackPool(pos, z, st, gamma, g, a, c *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(bnBackPoolKernel{p}, pos, z, st, gamma, g, a, c)
}

func (k bnBackPoolKernel) name() string { return "bnBackPool(" + k.p.String() + ")" }
func (k bnBackPoolKernel) differentiable() []bool {
	return []bool{false, true, false, true, true, true, true}
}

func (k bnBackPoolKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if err := bnPoolShapes(k.p, in, 7, []int{3, 5, 6}, []int{4}); err != nil {
		return nil, err
	}
	return in[1].Clone(), nil
}

func (k bnBackPoolKernel) forward(a *args) {
	call(a, k, forwardBNBackPool[float64], forwardBNBackPool[float32])
}

// forwardBNBackPool writes z * v + w per channel, v = -u*inv*c/M and
// w = -u*(a/M) - mu*v with u = gamma*inv, and adds g * u at the positions,
// in one pass over the rows of windows when the windows cover the images.
func forwardBNBackPool[T float](k bnBackPoolKernel, out []T, in [][]T, s []tensor.Shape) {
	pos, z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	m, f := s[1][1], s[1][2]
	if k.p.H%2 == 0 && k.p.W%2 == 0 { // every pixel in a window: one pass
		coef := make([][3][]T, s[1][0])
		for t := range coef {
			coef[t][0], coef[t][1], coef[t][2] = bnBackCoefficients(st, gamma, a, c, t, f, m)
		}
		wc := k.p.W * f
		k.p.eachRow(s[1], func(t, o, p0, wo int) {
			n := 2 * wo * f
			vec.BackPoolRow(out[p0:p0+n], out[p0+wc:p0+wc+n], z[p0:p0+n], z[p0+wc:p0+wc+n],
				pos[o:o+wo*f], g[o:o+wo*f], coef[t][0], coef[t][1], coef[t][2])
		})
		return
	}
	forwardBNBackPoolTwoPass(k, out, in, s)
}

// forwardBNBackPoolTwoPass is forwardBNBackPool as an affine pass over every
// pixel (those of an odd last row or column too) and a pass over the
// windows.
func forwardBNBackPoolTwoPass[T float](k bnBackPoolKernel, out []T, in [][]T, s []tensor.Shape) {
	pos, z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	m, f := s[1][1], s[1][2]
	us := make([][]T, s[1][0])
	parallelTasks(s[1][0], m*f, func(t int) {
		u, v, w := bnBackCoefficients(st, gamma, a, c, t, f, m)
		us[t] = u
		lo, hi := t*m*f, (t+1)*m*f
		vec.Affine(out[lo:hi], z[lo:hi], v, w)
	})
	k.p.eachWindow(s[1], func(t, o, p00, c int) {
		o00, o01, o10, o11 := windowRows(out, p00, k.p.W, c)
		vec.AddAtScaled(o00, o01, o10, o11, pos[o:o+c], g[o:o+c], us[t])
	})
}

// grad, for the adjoint H (image shape) of B = u*(G - a/M - zhat*c/M) with
// G = scatterPool(A, g), u = gamma*inv, sH = sum H, dH = bnDot(z, st, H),
// Hp = gatherPool(A, H) and P = sum Hp*g - sH*a/M - dH*c/M: bnBack's
// derivative (ops_batchnorm.go) with the sums over G taken at A,
//
//	dg = Hp*u, da = -u*sH/M, dc = -u*dH/M, dgamma = inv*P,
//	dz = bnScale(z, st, -u*inv*P/M) + bnBack(z, st, -u*c/M, H, sH, dH).
func (k bnBackPoolKernel) grad(in gorgonia.Nodes, _, h *gorgonia.Node) (gorgonia.Nodes, error) {
	pos, z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	hp, err := apply(gatherPoolKernel{k.p}, pos, h)
	if err != nil {
		return nil, err
	}
	d, err := bnBackGrad(z, st, gamma, g, a, c, h, hp)
	return gorgonia.Nodes{nil, d.z, nil, d.gamma, d.g, d.a, d.c}, err
}
