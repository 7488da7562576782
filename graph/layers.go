package graph

import (
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
	return conv(x, k, imageGeom{h, w, c})
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
