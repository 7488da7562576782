package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Batch norm fused with the 2x2 max-pool that follows it in every CNN block,
// so that the normalised activations y = gamma*zhat + beta are never stored
// and their gradient is never spread over the full image shape. With z
// (T, M, F) the activations (M = N*H*W pixels per task), st = bnStats(z),
// s = gamma*inv and A the window positions (pooled shape):
//
//	poolArgBN(z, st, gamma)            = the first-maximum positions of y
//	gatherBN(A, z, st, b, gamma, beta) = y at A, the max-pool of y
//	maxPoolBN(z, st, b, gamma, beta)   = gatherBN at A = poolArgBN(z, st, gamma), one pass
//	maxPoolBNReLU(z, st, b, gamma, beta) = relu(maxPoolBN(z, st, b, gamma, beta)), the same pass
//	bnDotMax, bnBackMax                = bnDotPool, bnBackPool at that A, found in their pass
//	gatherBNScale(A, z, st, gamma)     = gamma * zhat at A
//	bnDotPool(A, z, st, g)             = sum over the pooled rows of g * zhat at A   (T, F)
//	bnBackPool(A, z, st, gamma, g, a, c) = bnBack(z, st, gamma, scatterPool(A, g), a, c)
//
// The positions of y are those of s*z (beta and mu shift a channel's window
// by a constant), so poolArgBN reads z once. gatherBN's derivative is
// (bnBackPool, bnDotPool, sumMid), the pooled forms of bn's (bnBack, bnDot,
// sumMid): sums over the pixels of a scattered gradient are sums over its
// pooled entries, and bnBackPool writes the full-size result in one pass.
// The derivatives of bnDotPool and bnBackPool are built from this family,
// ops_batchnorm.go's and gatherPool, so the family is closed under
// differentiation (TestOpsNestedFiniteDifferences). The forward ops are
// here, the backward ones (bnDot*, bnBack*) in ops_bnpool_back.go.

// bnPoolShapes checks the positions (pooled shape of z) and z, st and the
// (T, F) inputs at small, the pooled (T, ., F) ones at pooled.
func bnPoolShapes(p poolGeom, in []tensor.Shape, n int, small, pooled []int) error {
	want := fmt.Sprintf("%d inputs: positions, (T, M, F) activations of %s images, (T, 2, F) statistics, (T, F) at %v, pooled at %v", n, p, small, pooled)
	if len(in) != n || len(in[1]) != 3 {
		return shapeErr(want, in)
	}
	o, err := p.outShape(in[1])
	if err != nil || !in[0].Eq(o) {
		return shapeErr(want, in)
	}
	t, f := in[1][0], in[1][2]
	ok := in[2].Eq(tensor.Shape{t, 2, f})
	for _, i := range small {
		ok = ok && in[i].Eq(tensor.Shape{t, f})
	}
	for _, i := range pooled {
		ok = ok && in[i].Eq(o)
	}
	if !ok {
		return shapeErr(want, in)
	}
	return nil
}

// windowRows returns the four rows (dy*2+dx order) of the window at p00 of
// images with W columns and c channels.
func windowRows[T float](x []T, p00, w, c int) (x00, x01, x10, x11 []T) {
	return x[p00 : p00+c], x[p00+c : p00+2*c], x[p00+w*c : p00+(w+1)*c], x[p00+(w+1)*c : p00+(w+2)*c]
}

// poolArgBNKernel finds the window positions of the batch-normalised z.
type poolArgBNKernel struct{ p poolGeom }

// poolArgBN returns the first-maximum positions of gamma * zhat in every
// window (those of y = gamma * zhat + beta for any beta; the conv bias b
// cancels in zhat).
func poolArgBN(z, st, gamma *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(poolArgBNKernel{p}, z, st, gamma)
}

func (k poolArgBNKernel) name() string           { return "poolArgBN(" + k.p.String() + ")" }
func (k poolArgBNKernel) differentiable() []bool { return []bool{false, false, false} }

func (k poolArgBNKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 3 {
		return nil, shapeErr("activations, statistics and scale", in)
	}
	o, err := k.p.outShape(in[0])
	if err != nil {
		return nil, err
	}
	// The checks of the gather, with the positions' shape in front.
	if err := bnPoolShapes(k.p, append([]tensor.Shape{o}, in...), 4, []int{3}, nil); err != nil {
		return nil, err
	}
	return o, nil
}

func (k poolArgBNKernel) forward(a *args) {
	call(a, k, forwardPoolArgBN[float64], forwardPoolArgBN[float32])
}

func forwardPoolArgBN[T float](k poolArgBNKernel, out []T, in [][]T, s []tensor.Shape) {
	z, st, gamma := in[0], in[1], in[2]
	f := s[0][2]
	scales := make([][]T, s[0][0])
	for t := range scales {
		scales[t] = channelScale(st, gamma, t, f)
	}
	wc := k.p.W * f
	k.p.eachRow(s[0], func(t, o, p0, wo int) {
		vec.PoolArgRow(out[o:o+wo*f], z[p0:p0+2*wo*f], z[p0+wc:p0+wc+2*wo*f], scales[t])
	})
}

func (poolArgBNKernel) grad(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{nil, nil, nil}, nil
}

// gatherBNKernel is gamma * zhat (+ beta, with shift) at the positions A;
// with shift, input 3 is the cancelled conv bias b (as in bn).
type gatherBNKernel struct {
	p     poolGeom
	shift bool
}

// gatherBN returns y = gamma * zhat + beta at the positions A, with a zero
// gradient for the conv bias b that z implicitly carries: with A =
// poolArgBN(z, st, gamma), the max-pool of the batch norm.
func gatherBN(a, z, st, b, gamma, beta *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(gatherBNKernel{p, true}, a, z, st, b, gamma, beta)
}

// gatherBNScale returns gamma * zhat at the positions A.
func gatherBNScale(a, z, st, gamma *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(gatherBNKernel{p, false}, a, z, st, gamma)
}

func (k gatherBNKernel) name() string {
	if k.shift {
		return "gatherBN(" + k.p.String() + ")"
	}
	return "gatherBNScale(" + k.p.String() + ")"
}

func (k gatherBNKernel) differentiable() []bool {
	if k.shift {
		return []bool{false, true, false, true, true, true}
	}
	return []bool{false, true, false, true}
}

func (k gatherBNKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	small := []int{3}
	if k.shift {
		small = []int{3, 4, 5}
	}
	if err := bnPoolShapes(k.p, in, len(small)+3, small, nil); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

func (k gatherBNKernel) forward(a *args) {
	call(a, k, forwardGatherBN[float64], forwardGatherBN[float32])
}

// forwardGatherBN maps every pooled entry to z * s + o at its position,
// with s = gamma * inv and o = beta - mu * s.
func forwardGatherBN[T float](k gatherBNKernel, out []T, in [][]T, s []tensor.Shape) {
	pos, z, st, gamma := in[0], in[1], in[2], in[3]
	if k.shift {
		gamma = in[4]
	}
	f, wc := s[1][2], k.p.W*s[1][2]
	affine := make([][2][]T, s[0][0]) // per task: the scale and offset
	for t := range affine {
		var beta []T
		if k.shift {
			beta = in[5]
		}
		affine[t][0], affine[t][1] = bnAffine(st, gamma, beta, t, f)
	}
	// One pass: the window entries at the positions, scaled and shifted.
	k.p.eachRow(s[1], func(t, o, p0, wo int) {
		vec.GatherAffineRow(out[o:o+wo*f], pos[o:o+wo*f], z[p0:p0+2*wo*f], z[p0+wc:p0+wc+2*wo*f], affine[t][0], affine[t][1])
	})
}

// grad: beta gets sum g, gamma bnDotPool(A, z, st, g), z the pooled
// batch-norm backward pass, b zero.
func (k gatherBNKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	pos, z, st, gamma := in[0], in[1], in[2], in[3]
	if k.shift {
		gamma = in[4]
	}
	b := &chain{}
	dGamma := b.do(bnDotPool(pos, z, st, g, k.p))
	sumG := b.do(sumMid(g))
	dz := b.do(bnBackPool(pos, z, st, gamma, g, sumG, dGamma, k.p))
	if !k.shift {
		return gorgonia.Nodes{nil, dz, nil, dGamma}, b.err
	}
	db := b.do(scale(sumG, 0))
	return gorgonia.Nodes{nil, dz, nil, db, dGamma, sumG}, b.err
}

// maxPoolBNKernel is gatherBN at poolArgBN's positions, in one pass over z
// without storing the positions: the forward pass needs only the values,
// and the gradient builds the positions (poolArgBN) for gatherBN's
// derivative. The evaluation, which takes no gradient at the query images,
// reads z twice (statistics, this) instead of three times.
type maxPoolBNKernel struct{ p poolGeom }

// maxPoolBN returns the max-pool of y = gamma * zhat + beta, with a zero
// gradient for the conv bias b that z implicitly carries:
// gatherBN(poolArgBN(z, st, gamma), z, st, b, gamma, beta), value for value.
func maxPoolBN(z, st, b, gamma, beta *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(maxPoolBNKernel{p}, z, st, b, gamma, beta)
}

func (k maxPoolBNKernel) name() string { return "maxPoolBN(" + k.p.String() + ")" }
func (k maxPoolBNKernel) differentiable() []bool {
	return []bool{true, false, true, true, true}
}

func (k maxPoolBNKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 5 {
		return nil, shapeErr("activations, statistics, bias, scale and shift", in)
	}
	o, err := k.p.outShape(in[0])
	if err != nil {
		return nil, err
	}
	// The checks of the gather, with the positions' shape in front.
	if err := bnPoolShapes(k.p, append([]tensor.Shape{o}, in...), 6, []int{3, 4, 5}, nil); err != nil {
		return nil, err
	}
	return o, nil
}

func (k maxPoolBNKernel) forward(a *args) {
	call(a, k, forwardMaxPoolBN[float64], forwardMaxPoolBN[float32])
}

// forwardMaxPoolBN maps, a row of windows at a time, each window's entry
// at the first maximum of s*z to z*s + o (s = gamma * inv, o = beta - mu*s):
// poolArgBN's positions and gatherBN's values.
func forwardMaxPoolBN[T float](k maxPoolBNKernel, out []T, in [][]T, s []tensor.Shape) {
	maxPoolBNRows(k.p, false, out, in, s)
}

// maxPoolBNRows is forwardMaxPoolBN, with relu each row's ReLU after it.
func maxPoolBNRows[T float](p poolGeom, relu bool, out []T, in [][]T, s []tensor.Shape) {
	z, st, gamma, beta := in[0], in[1], in[3], in[4]
	f, wc := s[0][2], p.W*s[0][2]
	affine := make([][2][]T, s[0][0]) // per task: the scale and offset
	for t := range affine {
		affine[t][0], affine[t][1] = bnAffine(st, gamma, beta, t, f)
	}
	p.eachRow(s[0], func(t, o, p0, wo int) {
		n := wo * f
		vec.MaxAffineRow(out[o:o+n], z[p0:p0+2*n], z[p0+wc:p0+wc+2*n], affine[t][0], affine[t][1])
		if relu {
			vec.Relu(out[o:o+n], out[o:o+n])
		}
	})
}

// grad: gatherBN's, with bnDotPool and bnBackPool at the positions of
// the maxima of gamma * zhat, which they find themselves (bnDotMax,
// bnBackMax): the first-order gradient reads z twice, not three times.
func (k maxPoolBNKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	z, st, gamma := in[0], in[1], in[3]
	b := &chain{}
	dGamma := b.do(apply(bnDotMaxKernel{k.p}, z, st, gamma, g))
	sumG := b.do(sumMid(g))
	dz := b.do(apply(bnBackMaxKernel{k.p}, z, st, gamma, g, sumG, dGamma))
	db := b.do(scale(sumG, 0))
	return gorgonia.Nodes{dz, nil, db, dGamma, sumG}, b.err
}

// maxPoolBNReLUKernel is relu(maxPoolBN(z, st, b, gamma, beta)), CNN.block's
// pooled output, in maxPoolBN's pass: the values of the two ops bit for bit
// (the same row kernels), without writing the pooled pre-activations and
// reading them back, or keeping them for the ReLU's derivative: its mask
// reads the output instead, positive exactly where the pre-activation is
// (a NaN stays a NaN, -0 becomes +0).
type maxPoolBNReLUKernel struct{ p poolGeom }

// maxPoolBNReLU returns relu(maxPoolBN(z, st, b, gamma, beta)).
func maxPoolBNReLU(z, st, b, gamma, beta *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(maxPoolBNReLUKernel{p}, z, st, b, gamma, beta)
}

func (k maxPoolBNReLUKernel) name() string           { return "maxPoolBNReLU(" + k.p.String() + ")" }
func (k maxPoolBNReLUKernel) differentiable() []bool { return maxPoolBNKernel(k).differentiable() }

func (k maxPoolBNReLUKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	return maxPoolBNKernel(k).shape(in)
}

func (k maxPoolBNReLUKernel) forward(a *args) {
	call(a, k, forwardMaxPoolBNReLU[float64], forwardMaxPoolBNReLU[float32])
}

func forwardMaxPoolBNReLU[T float](k maxPoolBNReLUKernel, out []T, in [][]T, s []tensor.Shape) {
	maxPoolBNRows(k.p, true, out, in, s)
}

// grad: maxPoolBN's of the gradient masked where the output is positive.
func (k maxPoolBNReLUKernel) grad(in gorgonia.Nodes, out, g *gorgonia.Node) (gorgonia.Nodes, error) {
	gp, err := mask(out, g)
	if err != nil {
		return nil, err
	}
	return maxPoolBNKernel(k).grad(in, nil, gp)
}
