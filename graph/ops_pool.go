package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// 2x2 max-pooling with stride 2 on task-batched images stored as (T,
// N*H*W, C), as ops_conv.go stores them: a gather at each window's argmax
// with a scatter as its adjoint; the argmax is piecewise constant in the
// input, so it carries no derivative.

// poolGeom is 2x2 max-pooling with stride 2 of H x W images (floor: an odd
// last row or column is dropped) with C channels, on (T, N*H*W, C) tensors.
type poolGeom struct{ H, W int }

func (p poolGeom) String() string { return fmt.Sprintf("%dx%d", p.H, p.W) }

// outShape checks x (T, N*H*W, C) and returns (T, N*(H/2)*(W/2), C).
func (p poolGeom) outShape(x tensor.Shape) (tensor.Shape, error) {
	if len(x) != 3 || p.H < 2 || p.W < 2 || x[1]%(p.H*p.W) != 0 {
		return nil, fmt.Errorf("needs (T, N*%d*%d, C) images of at least 2x2, got %v", p.H, p.W, x)
	}
	return tensor.Shape{x[0], x[1] / (p.H * p.W) * (p.H / 2) * (p.W / 2), x[2]}, nil
}

// Max-pooling finds the windows' argmaxes once per input and shares them
// with every derivative: a holds, for every output entry, the position 0..3
// (dy*2+dx) of the first maximum of its window (a small integer, exact in
// either float type; the CNN's poolArgBN in ops_bnpool.go finds them), and
//
//	gatherPool(a, v)   picks v at the positions a       (pooled shape)
//	scatterPool(a, g)  adds g back to the positions a   (image shape)
//
// are linear in their second input and each other's adjoints; the
// positions are piecewise constant and carry no derivative.

// eachWindow calls f(t, o, p00, c) for every task t and window of images of
// shape xs (T, N*H*W, C), with o the offset of the window's C outputs and
// p00 that of its top-left pixel, both in the whole tensor; the tasks run
// on several goroutines.
func (p poolGeom) eachWindow(xs tensor.Shape, f func(t, o, p00, c int)) {
	c := xs[2]
	p.eachRow(xs, func(t, o, p0, wo int) {
		for xx := 0; xx < wo; xx++ {
			f(t, o+xx*c, p0+2*xx*c, c)
		}
	})
}

// eachRow calls f(t, o, p0, wo) for every task t and row of windows of
// images of shape xs (T, N*H*W, C), with o the offset of the row's wo*C
// outputs and p0 that of its first window's top-left pixel, both in the
// whole tensor (the windows' top pixels are the 2*wo*C values from p0, their
// bottom ones the same from p0 + W*C); the tasks run on several goroutines.
func (p poolGeom) eachRow(xs tensor.Shape, f func(t, o, p0, wo int)) {
	c := xs[2]
	per := xs[1] * c
	n := xs[1] / (p.H * p.W)
	Ho, Wo := p.H/2, p.W/2
	parallelTasks(xs[0], per, func(t int) {
		o := t * n * Ho * Wo * c
		for img := 0; img < n; img++ {
			base := t*per + img*p.H*p.W*c
			for y := 0; y < Ho; y++ {
				f(t, o, base+2*y*p.W*c, Wo)
				o += Wo * c
			}
		}
	})
}

// gatherPoolKernel picks v (image shape) at the window positions a (pooled
// shape).
type gatherPoolKernel struct{ p poolGeom }

func (k gatherPoolKernel) name() string           { return "gatherPool(" + k.p.String() + ")" }
func (k gatherPoolKernel) differentiable() []bool { return []bool{false, true} }

func (k gatherPoolKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, shapeErr("two inputs", in)
	}
	if o, err := k.p.outShape(in[1]); err != nil || !o.Eq(in[0]) {
		return nil, shapeErr("positions of the pooled shape of the values", in)
	}
	return in[0].Clone(), nil
}

func (k gatherPoolKernel) forward(a *args) {
	call(a, k, forwardGatherPool[float64], forwardGatherPool[float32])
}

func forwardGatherPool[T float](k gatherPoolKernel, out []T, in [][]T, s []tensor.Shape) {
	pos, v := in[0], in[1]
	k.p.eachWindow(s[1], func(t, o, p00, c int) {
		off := [4]int{p00, p00 + c, p00 + k.p.W*c, p00 + (k.p.W+1)*c}
		vec.Gather(out[o:o+c], pos[o:o+c], v[off[0]:], v[off[1]:], v[off[2]:], v[off[3]:])
	})
}

func (k gatherPoolKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := apply(scatterPoolKernel{k.p, in[1].Shape().Clone()}, in[0], g)
	return gorgonia.Nodes{nil, d}, err
}

// scatterPoolKernel adds g (pooled shape) to the window positions a, zero
// elsewhere: the image-shaped adjoint of gatherPool.
type scatterPoolKernel struct {
	p  poolGeom
	to tensor.Shape // the image shape
}

func (k scatterPoolKernel) name() string {
	return fmt.Sprintf("scatterPool(%s,%v)", k.p, k.to)
}
func (k scatterPoolKernel) differentiable() []bool { return []bool{false, true} }

func (k scatterPoolKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	o, err := k.p.outShape(k.to)
	if err != nil || len(in) != 2 || !in[0].Eq(o) || !in[1].Eq(o) {
		return nil, shapeErr(fmt.Sprintf("positions and values of shape %v", o), in)
	}
	return k.to.Clone(), nil
}

func (k scatterPoolKernel) forward(a *args) {
	call(a, k, forwardScatterPool[float64], forwardScatterPool[float32])
}

func forwardScatterPool[T float](k scatterPoolKernel, out []T, in [][]T, s []tensor.Shape) {
	pos, g := in[0], in[1]
	if k.p.H%2 != 0 || k.p.W%2 != 0 { // the dropped last row or column gets no window
		per := k.to[1] * k.to[2]
		parallelTasks(k.to[0], per, func(t int) { clear(out[t*per : (t+1)*per]) })
	}
	k.p.eachWindow(k.to, func(t, o, p00, c int) {
		off := [4]int{p00, p00 + c, p00 + k.p.W*c, p00 + (k.p.W+1)*c}
		// Every window's four entries are written, zeros but the value at
		// its position: no separate clearing pass and no branch.
		vec.Scatter(out[off[0]:], out[off[1]:], out[off[2]:], out[off[3]:], pos[o:o+c], g[o:o+c])
	})
}

func (k scatterPoolKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := apply(gatherPoolKernel{k.p}, in[0], g)
	return gorgonia.Nodes{nil, d}, err
}
