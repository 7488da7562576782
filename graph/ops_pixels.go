package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Pixel selections on task-batched images (T, N*H*W, C), for the standalone
// layers (layers.go) and the CNN's blocks other than the fused conv ->
// batch norm -> max-pool one:
//
//	poolArg(z)      the first-maximum positions of z's 2x2 windows (pooled shape)
//	pick(z)         z at the pixels (oy + s*i, ox + s*j)      (T, N*Ho*Wo, C)
//	spread(g)       g put back at those pixels, zero elsewhere (T, N*H*W, C)
//
// With gatherPool (ops_pool.go), poolArg makes the max-pool; pick makes a
// strided or unpadded convolution of the padded stride-1 one, and the four
// picks of a 2x2 window the average pool. pick and spread are linear and
// each other's adjoints; the positions carry no derivative.

// pickGeom selects the pixels (OY + S*i, OX + S*j), i < Ho, j < Wo, of
// H x W images.
type pickGeom struct{ H, W, Ho, Wo, S, OY, OX int }

func (p pickGeom) String() string {
	return fmt.Sprintf("%dx%d->%dx%d/%d+%d,%d", p.H, p.W, p.Ho, p.Wo, p.S, p.OY, p.OX)
}

// check reports whether every picked pixel is in the image.
func (p pickGeom) check() error {
	if p.Ho < 1 || p.Wo < 1 || p.S < 1 || p.OY < 0 || p.OX < 0 || p.OY+p.S*(p.Ho-1) >= p.H || p.OX+p.S*(p.Wo-1) >= p.W {
		return fmt.Errorf("pixel selection %s leaves the %dx%d image", p, p.H, p.W)
	}
	return nil
}

// picked returns the picked shape for images x (T, N*H*W, C).
func (p pickGeom) picked(x tensor.Shape) (tensor.Shape, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if len(x) != 3 || x[1]%(p.H*p.W) != 0 {
		return nil, fmt.Errorf("needs (T, N*%d*%d, C) images, got %v", p.H, p.W, x)
	}
	return tensor.Shape{x[0], x[1] / (p.H * p.W) * p.Ho * p.Wo, x[2]}, nil
}

// eachPixel calls f(o, i, c) for every picked pixel of images of shape xs
// (T, N*H*W, C): o the offset of its c values in the picked tensor, i in
// the images; the tasks run on several goroutines.
func (p pickGeom) eachPixel(xs tensor.Shape, f func(o, i, c int)) {
	c := xs[2]
	n := xs[1] / (p.H * p.W)
	parallelTasks(xs[0], xs[1]*c, func(t int) {
		o := t * n * p.Ho * p.Wo * c
		for img := 0; img < n; img++ {
			base := (t*n + img) * p.H * p.W
			for y := 0; y < p.Ho; y++ {
				for x := 0; x < p.Wo; x++ {
					f(o, (base+(p.OY+p.S*y)*p.W+p.OX+p.S*x)*c, c)
					o += c
				}
			}
		}
	})
}

// pickKernel is z at the picked pixels.
type pickKernel struct{ p pickGeom }

// pick returns the pixels of z (T, N*H*W, C) that p selects.
func pick(z *gorgonia.Node, p pickGeom) (*gorgonia.Node, error) { return apply(pickKernel{p}, z) }

func (k pickKernel) name() string { return "pick(" + k.p.String() + ")" }

func (k pickKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, shapeErr("one (T, N*H*W, C) input", in)
	}
	return k.p.picked(in[0])
}

func (k pickKernel) forward(a *args) { call(a, k, forwardPick[float64], forwardPick[float32]) }

func forwardPick[T float](k pickKernel, out []T, in [][]T, s []tensor.Shape) {
	k.p.eachPixel(s[0], func(o, i, c int) { copy(out[o:o+c], in[0][i:i+c]) })
}

func (k pickKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := apply(spreadKernel{k.p, in[0].Shape().Clone()}, g)
	return gorgonia.Nodes{d}, err
}

// spreadKernel puts g at the picked pixels of a zero image tensor: pick's
// adjoint.
type spreadKernel struct {
	p  pickGeom
	to tensor.Shape // the image shape
}

func (k spreadKernel) name() string { return fmt.Sprintf("spread(%s,%v)", k.p, k.to) }

func (k spreadKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	o, err := k.p.picked(k.to)
	if err != nil || len(in) != 1 || !in[0].Eq(o) {
		return nil, shapeErr(fmt.Sprintf("one input of shape %v", o), in)
	}
	return k.to.Clone(), nil
}

func (k spreadKernel) forward(a *args) { call(a, k, forwardSpread[float64], forwardSpread[float32]) }

func forwardSpread[T float](k spreadKernel, out []T, in [][]T, _ []tensor.Shape) {
	per := k.to[1] * k.to[2]
	parallelTasks(k.to[0], per, func(t int) { clear(out[t*per : (t+1)*per]) })
	k.p.eachPixel(k.to, func(o, i, c int) { copy(out[i:i+c], in[0][o:o+c]) })
}

func (k spreadKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := pick(g, k.p)
	return gorgonia.Nodes{d}, err
}

// poolArgKernel finds the first-maximum positions of z's 2x2 windows.
type poolArgKernel struct{ p poolGeom }

// poolArg returns the positions (0..3, dy*2+dx) of the first maximum of every
// 2x2 window of z (T, N*H*W, C), in the pooled shape.
func poolArg(z *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(poolArgKernel{p}, z)
}

func (k poolArgKernel) name() string           { return "poolArg(" + k.p.String() + ")" }
func (k poolArgKernel) differentiable() []bool { return []bool{false} }

func (k poolArgKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, shapeErr("one (T, N*H*W, C) input", in)
	}
	return k.p.outShape(in[0])
}

func (k poolArgKernel) forward(a *args) { call(a, k, forwardPoolArg[float64], forwardPoolArg[float32]) }

func forwardPoolArg[T float](k poolArgKernel, out []T, in [][]T, s []tensor.Shape) {
	z, f := in[0], s[0][2]
	ones := make([]T, f)
	for i := range ones {
		ones[i] = 1
	}
	wc := k.p.W * f
	k.p.eachRow(s[0], func(_, o, p0, wo int) {
		vec.PoolArgRow(out[o:o+wo*f], z[p0:p0+2*wo*f], z[p0+wc:p0+wc+2*wo*f], ones)
	})
}

func (poolArgKernel) grad(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{nil}, nil
}
