package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The layers a model outside this package builds its Forward from. Each is
// one op (or a short composition) of this package whose derivative is built
// from ops of this package, so a model made of them is differentiated
// exactly through any number of nested Grad calls, as MAML's meta-gradient
// needs (TestOpsNestedFiniteDifferences checks every op against finite
// differences of its own derivative). gorgonia's own ops may be mixed in:
// Graph.Grad accepts those known to be sound and refuses, with an
// *UnsupportedOpError naming the op, those whose derivatives are wrong when
// nested (SoftMax, Slice, MaxPool2D, BatchNorm, Conv2d with respect to the
// image, ...; see grad.go).
//
// Shapes follow Model.Forward: every tensor carries the task axis first,
// points are (T, N, d), per-task parameters (T, shape...). All inputs of a
// layer have one dtype, float64 or float32.

// MatMul returns the task-batched matrix product op(a[t]) op(b[t]) of
// a (T, m, k) and b (T, k, n) as (T, m, n), where op transposes its matrix
// if transA (transB) is set. A linear layer is MatMul(x, w, false, false)
// for points x (T, N, in) and per-task weights w (T, in, out).
func MatMul(a, b *gorgonia.Node, transA, transB bool) (*gorgonia.Node, error) {
	return bmm(a, b, transA, transB)
}

// AddBias returns h + b for points h (T, N, o) and a per-task bias b (T, o)
// broadcast over the points.
func AddBias(h, b *gorgonia.Node) (*gorgonia.Node, error) { return addBias(h, b) }

// Apply returns the activation of x, elementwise, for any shape.
func (a Activation) Apply(x *gorgonia.Node) (*gorgonia.Node, error) { return a.apply(x) }

// Conv3x3 returns the 3x3 convolution (stride 1, zero padding 1) of images
// x (T, N, h*w*c), N images of h x w pixels with c channels stored
// row-major (h, w, c), with per-task kernels k (T, 9*c, f) whose rows are in
// (kh, kw, c) order. The result, (T, N*h*w, f), holds the f output channels
// of every pixel; it is the (T, M, F) input of BatchNorm and
// BatchNormMaxPool, and Reshape turns it back into (T, N, h*w*f) images.
func Conv3x3(x, k *gorgonia.Node, h, w, c int) (*gorgonia.Node, error) {
	return conv(x, k, imageGeom{H: h, W: w, C: c})
}

// Conv returns the 3x3 convolution of images x (T, N, h*w*c) (or
// (T, N*h*w, c)) with per-task kernels k (T, 9*c, f), rows in (kh, kw, c)
// order, plus the per-task bias b (T, f), with the given stride (>= 1) and
// zero padding (0 or 1) on every side, as PyTorch's Conv2d: the result is
// (T, N*ho*wo, f) with ho = (h + 2*pad - 3)/stride + 1 (wo alike). Strides
// and padding 0 select pixels of the padded stride-1 convolution, which is
// computed whole (stride times stride the work of the strided one).
func Conv(x, k, b *gorgonia.Node, h, w, c, stride, pad int) (*gorgonia.Node, error) {
	if pad < 0 || pad > 1 || stride < 1 {
		return nil, fmt.Errorf("graph: Conv takes padding 0 or 1 and stride >= 1, got padding %d, stride %d", pad, stride)
	}
	z, err := conv(x, k, imageGeom{H: h, W: w, C: c})
	if err != nil {
		return nil, err
	}
	if stride != 1 || pad != 1 {
		p := pickGeom{H: h, W: w, Ho: (h+2*pad-3)/stride + 1, Wo: (w+2*pad-3)/stride + 1, S: stride, OY: 1 - pad, OX: 1 - pad}
		if h+2*pad < 3 || w+2*pad < 3 {
			return nil, fmt.Errorf("graph: Conv of %dx%d images with padding %d leaves nothing", h, w, pad)
		}
		if z, err = pick(z, p); err != nil {
			return nil, err
		}
	}
	return addBias(z, b)
}

// MaxPool2 max-pools every h x w image of z (T, N*h*w, c) with 2x2 windows
// of stride 2 (floor on odd sizes): (T, N*(h/2)*(w/2), c). Its derivative
// goes to each window's first maximum.
func MaxPool2(z *gorgonia.Node, h, w int) (*gorgonia.Node, error) {
	p := poolGeom{h, w}
	a, err := poolArg(z, p)
	if err != nil {
		return nil, err
	}
	return apply(gatherPoolKernel{p}, a, z)
}

// AvgPool2 averages every 2x2 window (stride 2, floor on odd sizes) of the
// h x w images of z (T, N*h*w, c): (T, N*(h/2)*(w/2), c).
func AvgPool2(z *gorgonia.Node, h, w int) (*gorgonia.Node, error) {
	if h < 2 || w < 2 {
		return nil, fmt.Errorf("graph: AvgPool2 needs images of at least 2x2, got %dx%d", h, w)
	}
	var terms gorgonia.Nodes
	for _, o := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
		t, err := pick(z, pickGeom{H: h, W: w, Ho: h / 2, Wo: w / 2, S: 2, OY: o[0], OX: o[1]})
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	s, err := sumTerms(terms)
	if err != nil {
		return nil, err
	}
	return scale(s, 0.25)
}

// Flatten turns the per-pixel values z (T, N*h*w, c) of N images per task
// into one row per image, (T, N, h*w*c) in (h, w, c) order: the input of
// Linear.
func Flatten(z *gorgonia.Node, n int) (*gorgonia.Node, error) {
	s := z.Shape()
	if len(s) != 3 || n < 1 || s[1]%n != 0 {
		return nil, fmt.Errorf("graph: Flatten of %v into %d images per task", s, n)
	}
	return reshape(z, tensor.Shape{s[0], n, s[1] / n * s[2]})
}

// Linear returns x w + b for points x (T, N, in), per-task weights w
// (T, in, out) and biases b (T, out).
func Linear(x, w, b *gorgonia.Node) (*gorgonia.Node, error) {
	h, err := bmm(x, w, false, false)
	if err != nil {
		return nil, err
	}
	return addBias(h, b)
}

// BatchNorm normalises every channel of z (T, M, F) with the mean and the
// biased variance (plus eps) of its M values in its task, then scales by
// gamma (T, F) and shifts by beta (T, F): the statistics of the current set,
// no running averages, as MAML's CNN uses it.
func BatchNorm(z, gamma, beta *gorgonia.Node, eps float64) (*gorgonia.Node, error) {
	st, err := bnStats(z, eps)
	if err != nil {
		return nil, err
	}
	y, err := bnScale(z, st, gamma)
	if err != nil {
		return nil, err
	}
	return addBias(y, beta)
}

// BatchNormMaxPool adds the per-channel bias b (T, F) to z (T, N*h*w, F)
// (the output of Conv3x3 on h x w images), batch-normalises as BatchNorm,
// and max-pools every image with 2x2 windows of stride 2 (floor on odd
// sizes), in one fused pass that never stores the normalised activations:
// the result is (T, N*(h/2)*(w/2), F). The bias cancels in the
// normalisation, so its gradient is exactly zero, as in the reference CNN.
// This is the block of CNN without its ReLU (which commutes with the pool:
// apply ReLU.Apply after it).
func BatchNormMaxPool(z, b, gamma, beta *gorgonia.Node, eps float64, h, w int) (*gorgonia.Node, error) {
	return batchNormMaxPool(z, b, gamma, beta, eps, poolGeom{h, w})
}

// Tile stacks n copies of x along a new leading axis: (s...) -> (n, s...).
// It turns a meta-parameter into per-task copies (n = T); its adjoint sums
// over the copies.
func Tile(x *gorgonia.Node, n int) (*gorgonia.Node, error) { return tile(x, n) }

// Axpy returns x + k*y for x and y of one shape: with k = -alpha the SGD
// step theta - alpha*grad, with k = 1 a residual connection, with k = -1 a
// difference.
func Axpy(x, y *gorgonia.Node, k float64) (*gorgonia.Node, error) { return axpy(x, y, k) }

// Scale returns k*x.
func Scale(x *gorgonia.Node, k float64) (*gorgonia.Node, error) { return scale(x, k) }

// Mul returns the elementwise product of a and b, of one shape.
func Mul(a, b *gorgonia.Node) (*gorgonia.Node, error) { return mul(a, b) }

// Exp returns e^x elementwise.
func Exp(x *gorgonia.Node) (*gorgonia.Node, error) { return expNode(x) }

// Log returns the natural logarithm of x elementwise.
func Log(x *gorgonia.Node) (*gorgonia.Node, error) { return logNode(x) }

// SumLast returns the sum of x (T, N, c) over its last axis, (T, N).
func SumLast(x *gorgonia.Node) (*gorgonia.Node, error) { return sumLast(x) }

// Reshape returns a copy of x with the shape to, of the same size.
func Reshape(x *gorgonia.Node, to ...int) (*gorgonia.Node, error) {
	return reshape(x, tensor.Shape(to))
}

// RowDot returns, for every task t, k times the inner product of a[t] and
// b[t] (all their entries), for a and b of one shape (T, ...): the (T) per-task
// losses of MSELoss are RowDot(d, d, 1/(N*o)) for the differences d.
func RowDot(a, b *gorgonia.Node, k float64) (*gorgonia.Node, error) { return rowDot(a, b, k) }
