package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Convolution and pooling on task-batched images stored as (T, N*H*W, C)
// (equivalently (T, N, H*W*C): N images of H x W pixels with C channels,
// row-major (h, w, c)). A 3x3 convolution with padding 1 is im2col followed by
// a batched product with the (9*C, F) kernel matrix; im2col and col2im are
// each other's adjoints. Max-pooling is a gather at each window's argmax with
// a scatter as its adjoint; the argmax is piecewise constant in the input, so
// it carries no derivative.

// imageGeom is the size of the images of a task-batched tensor.
type imageGeom struct{ H, W, C int }

// images returns the number of images per task in a tensor of shape s whose
// per-task size is a multiple of H*W*C.
func (g imageGeom) images(s tensor.Shape) (int, error) {
	if len(s) != 3 || g.H < 1 || g.W < 1 || g.C < 1 {
		return 0, fmt.Errorf("needs a (T, ., .) input and positive image sizes, got %v for %dx%dx%d images", s, g.H, g.W, g.C)
	}
	per := s[1] * s[2]
	if per%(g.H*g.W*g.C) != 0 {
		return 0, fmt.Errorf("input %v does not hold whole %dx%dx%d images", s, g.H, g.W, g.C)
	}
	return per / (g.H * g.W * g.C), nil
}

// im2colKernel lays out the 3x3 neighbourhood (zero padded) of every pixel as
// a row: x (T, ., .) holding N images -> (T, N*H*W, 9*C) with columns in
// (kh, kw, c) order, the order of the rows of the (3, 3, C, F) kernel.
type im2colKernel struct{ g imageGeom }

// im2col returns the 3x3 patches of the images in x, one row per pixel.
func im2col(x *gorgonia.Node, g imageGeom) (*gorgonia.Node, error) {
	return apply(im2colKernel{g}, x)
}

func (k im2colKernel) name() string { return fmt.Sprintf("im2col(%dx%dx%d)", k.g.H, k.g.W, k.g.C) }

func (k im2colKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, shapeErr("one input", in)
	}
	n, err := k.g.images(in[0])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{in[0][0], n * k.g.H * k.g.W, 9 * k.g.C}, nil
}

func (k im2colKernel) forward(a *args) { call(a, k, forwardIm2col[float64], forwardIm2col[float32]) }

func forwardIm2col[T float](k im2colKernel, out []T, in [][]T, s []tensor.Shape) {
	H, W, C := k.g.H, k.g.W, k.g.C
	per := s[0][1] * s[0][2]
	n := per / (H * W * C)
	parallelTasks(s[0][0], 9*per, func(t int) {
		x := in[0][t*per : (t+1)*per]
		o := out[t*9*per : (t+1)*9*per]
		for i := 0; i < n; i++ {
			img := x[i*H*W*C : (i+1)*H*W*C]
			for y := 0; y < H; y++ {
				for xx := 0; xx < W; xx++ {
					row := o[((i*H+y)*W+xx)*9*C:]
					for kh := 0; kh < 3; kh++ {
						yy := y + kh - 1
						for kw := 0; kw < 3; kw++ {
							dst := row[(kh*3+kw)*C : (kh*3+kw+1)*C]
							xs := xx + kw - 1
							if yy < 0 || yy >= H || xs < 0 || xs >= W {
								clear(dst)
								continue
							}
							copy(dst, img[(yy*W+xs)*C:])
						}
					}
				}
			}
		}
	})
}

func (k im2colKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := col2im(g, k.g, in[0].Shape())
	return gorgonia.Nodes{d}, err
}

// col2imKernel is the adjoint of im2col: it adds every patch entry back to
// the pixel it came from, (T, N*H*W, 9*C) -> the image tensor shape to.
type col2imKernel struct {
	g  imageGeom
	to tensor.Shape
}

// col2im returns the adjoint of im2col applied to cols, in the shape to of
// im2col's input.
func col2im(cols *gorgonia.Node, g imageGeom, to tensor.Shape) (*gorgonia.Node, error) {
	return apply(col2imKernel{g, to.Clone()}, cols)
}

func (k col2imKernel) name() string {
	return fmt.Sprintf("col2im(%dx%dx%d,%v)", k.g.H, k.g.W, k.g.C, k.to)
}

func (k col2imKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	want, err := im2colKernel{k.g}.shape([]tensor.Shape{k.to})
	if err != nil {
		return nil, err
	}
	if len(in) != 1 || !in[0].Eq(want) {
		return nil, shapeErr(fmt.Sprintf("one %v input", want), in)
	}
	return k.to.Clone(), nil
}

func (k col2imKernel) forward(a *args) { call(a, k, forwardCol2im[float64], forwardCol2im[float32]) }

func forwardCol2im[T float](k col2imKernel, out []T, in [][]T, s []tensor.Shape) {
	H, W, C := k.g.H, k.g.W, k.g.C
	per := k.to[1] * k.to[2]
	n := per / (H * W * C)
	parallelTasks(k.to[0], 9*per, func(t int) {
		o := out[t*per : (t+1)*per]
		cols := in[0][t*9*per : (t+1)*9*per]
		clear(o)
		for i := 0; i < n; i++ {
			img := o[i*H*W*C : (i+1)*H*W*C]
			for y := 0; y < H; y++ {
				for xx := 0; xx < W; xx++ {
					row := cols[((i*H+y)*W+xx)*9*C:]
					for kh := 0; kh < 3; kh++ {
						yy := y + kh - 1
						if yy < 0 || yy >= H {
							continue
						}
						for kw := 0; kw < 3; kw++ {
							xs := xx + kw - 1
							if xs < 0 || xs >= W {
								continue
							}
							src := row[(kh*3+kw)*C : (kh*3+kw+1)*C]
							dst := img[(yy*W+xs)*C : (yy*W+xs+1)*C]
							for c, v := range src {
								dst[c] += v
							}
						}
					}
				}
			}
		}
	})
}

func (k col2imKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := im2col(g, k.g)
	return gorgonia.Nodes{d}, err
}

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

// poolTask runs the gather (out[o] = v[argmax]) or, with scatter, the
// scatter-add (out[argmax] += v[o], out zeroed first) of one task's images x
// with c channels, where argmax is the first maximum of x in output o's
// window, windows scanned (dy, dx) row-major.
func poolTask[T float](p poolGeom, x, v, out []T, c int, scatter bool) {
	Ho, Wo := p.H/2, p.W/2
	n := len(x) / (p.H * p.W * c)
	if scatter {
		clear(out)
	}
	o := 0
	for img := 0; img < n; img++ {
		base := img * p.H * p.W * c
		for y := 0; y < Ho; y++ {
			for xx := 0; xx < Wo; xx++ {
				p00 := base + ((2*y)*p.W+2*xx)*c
				p01, p10 := p00+c, p00+p.W*c
				p11 := p10 + c
				for ch := 0; ch < c; ch++ {
					best := p00 + ch
					if x[p01+ch] > x[best] {
						best = p01 + ch
					}
					if x[p10+ch] > x[best] {
						best = p10 + ch
					}
					if x[p11+ch] > x[best] {
						best = p11 + ch
					}
					if scatter {
						out[best] += v[o]
					} else {
						out[o] = v[best]
					}
					o++
				}
			}
		}
	}
}

// maxPoolKernel is 2x2 max-pooling with stride 2.
type maxPoolKernel struct{ p poolGeom }

// maxPool returns the 2x2 max-pool of x (T, N*H*W, C).
func maxPool(x *gorgonia.Node, p poolGeom) (*gorgonia.Node, error) {
	return apply(maxPoolKernel{p}, x)
}

func (k maxPoolKernel) name() string { return "maxPool(" + k.p.String() + ")" }

func (k maxPoolKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, shapeErr("one input", in)
	}
	return k.p.outShape(in[0])
}

func (k maxPoolKernel) forward(a *args) { call(a, k, forwardMaxPool[float64], forwardMaxPool[float32]) }

func forwardMaxPool[T float](k maxPoolKernel, out []T, in [][]T, s []tensor.Shape) {
	poolTasks(k.p, in[0], in[0], out, s[0], false)
}

func (k maxPoolKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := apply(scatterMaxKernel{k.p}, in[0], g)
	return gorgonia.Nodes{d}, err
}

// poolTasks runs poolTask on every task of x (shape xs).
func poolTasks[T float](p poolGeom, x, v, out []T, xs tensor.Shape, scatter bool) {
	per := xs[1] * xs[2]
	perOut := per / (p.H * p.W) * (p.H / 2) * (p.W / 2)
	parallelTasks(xs[0], per, func(t int) {
		xt := x[t*per : (t+1)*per]
		if scatter {
			poolTask(p, xt, v[t*perOut:(t+1)*perOut], out[t*per:(t+1)*per], xs[2], true)
		} else {
			poolTask(p, xt, v[t*per:(t+1)*per], out[t*perOut:(t+1)*perOut], xs[2], false)
		}
	})
}

// scatterMaxKernel adds every entry of v (the pooled shape) to the argmax of
// its window of x, zero elsewhere: the derivative of max-pooling at x applied
// to v. Linear in v, piecewise constant in x.
type scatterMaxKernel struct{ p poolGeom }

func (k scatterMaxKernel) name() string           { return "scatterMax(" + k.p.String() + ")" }
func (k scatterMaxKernel) differentiable() []bool { return []bool{false, true} }

func (k scatterMaxKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, shapeErr("two inputs", in)
	}
	if o, err := k.p.outShape(in[0]); err != nil || !o.Eq(in[1]) {
		return nil, shapeErr("images x and values of x's pooled shape", in)
	}
	return in[0].Clone(), nil
}

func (k scatterMaxKernel) forward(a *args) {
	call(a, k, forwardScatterMax[float64], forwardScatterMax[float32])
}

func forwardScatterMax[T float](k scatterMaxKernel, out []T, in [][]T, s []tensor.Shape) {
	poolTasks(k.p, in[0], in[1], out, s[0], true)
}

func (k scatterMaxKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := apply(gatherMaxKernel{k.p}, in[0], g)
	return gorgonia.Nodes{nil, d}, err
}

// gatherMaxKernel picks from v (the shape of x) the entry at the argmax of
// every window of x: the adjoint of scatterMax. Linear in v, piecewise
// constant in x.
type gatherMaxKernel struct{ p poolGeom }

func (k gatherMaxKernel) name() string           { return "gatherMax(" + k.p.String() + ")" }
func (k gatherMaxKernel) differentiable() []bool { return []bool{false, true} }

func (k gatherMaxKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || !in[0].Eq(in[1]) {
		return nil, shapeErr("two inputs of one shape", in)
	}
	return k.p.outShape(in[0])
}

func (k gatherMaxKernel) forward(a *args) {
	call(a, k, forwardGatherMax[float64], forwardGatherMax[float32])
}

func forwardGatherMax[T float](k gatherMaxKernel, out []T, in [][]T, s []tensor.Shape) {
	poolTasks(k.p, in[0], in[1], out, s[0], false)
}

func (k gatherMaxKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := apply(scatterMaxKernel{k.p}, in[0], g)
	return gorgonia.Nodes{nil, d}, err
}
