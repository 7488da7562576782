package graph

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Elementwise ops: ReLU and its mask, the product, shifted powers, exp, log.

// sameShape is the shape rule of an elementwise op with n inputs.
func sameShape(in []tensor.Shape, n int) (tensor.Shape, error) {
	if len(in) != n {
		return nil, shapeErr(fmt.Sprintf("%d inputs", n), in)
	}
	for _, s := range in[1:] {
		if !s.Eq(in[0]) {
			return nil, shapeErr("inputs of one shape", in)
		}
	}
	return in[0].Clone(), nil
}

// reluKernel is max(x, 0); its derivative is mask.
type reluKernel struct{}

// relu returns max(x, 0) elementwise.
func relu(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(reluKernel{}, x) }

func (reluKernel) name() string                                  { return "relu" }
func (reluKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 1) }

func (reluKernel) forward(a *args) { callElems(a, 0, reluLoop[float64], reluLoop[float32]) }

func reluLoop[T float](out []T, in [][]T, lo, hi int, _ T) { vec.Relu(out[lo:hi], in[0][lo:hi]) }

func (reluKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := mask(in[0], g)
	return gorgonia.Nodes{d}, err
}

// maskKernel passes v where x > 0 and 0 elsewhere: the derivative of ReLU at
// x applied to v. It is linear in v and piecewise constant in x, so x is not
// differentiable (its derivative is 0 almost everywhere).
type maskKernel struct{}

// mask returns v where x > 0 and 0 elsewhere.
func mask(x, v *gorgonia.Node) (*gorgonia.Node, error) { return apply(maskKernel{}, x, v) }

func (maskKernel) name() string                                  { return "mask" }
func (maskKernel) differentiable() []bool                        { return []bool{false, true} }
func (maskKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 2) }

func (maskKernel) forward(a *args) { callElems(a, 0, maskLoop[float64], maskLoop[float32]) }

func maskLoop[T float](out []T, in [][]T, lo, hi int, _ T) {
	vec.Mask(out[lo:hi], in[0][lo:hi], in[1][lo:hi])
}

func (maskKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := mask(in[0], g)
	return gorgonia.Nodes{nil, d}, err
}

// mulKernel is the elementwise product a*b.
type mulKernel struct{}

// mul returns a*b elementwise.
func mul(a, b *gorgonia.Node) (*gorgonia.Node, error) { return apply(mulKernel{}, a, b) }

func (mulKernel) name() string                                  { return "mul" }
func (mulKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 2) }

func (mulKernel) forward(a *args) { callElems(a, 0, mulLoop[float64], mulLoop[float32]) }

func mulLoop[T float](out []T, in [][]T, lo, hi int, _ T) {
	a, b := in[0][lo:hi], in[1][lo:hi]
	for i, v := range a {
		out[lo+i] = v * b[i]
	}
}

func (mulKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	da, err := mul(g, in[1])
	if err != nil {
		return nil, err
	}
	db, err := mul(g, in[0])
	return gorgonia.Nodes{da, db}, err
}

// powKernel is (x + eps)^p: with p = -1/2 and eps the batch-norm epsilon, the
// inverse standard deviation (gorgonia's InverseSqrt has a wrong gradient);
// with p = -1 the derivative of log.
type powKernel struct{ p, eps float64 }

// pow returns (x + eps)^p elementwise.
func pow(x *gorgonia.Node, p, eps float64) (*gorgonia.Node, error) {
	return apply(powKernel{p, eps}, x)
}

func (k powKernel) name() string                                  { return fmt.Sprintf("pow(%v,%v)", k.p, k.eps) }
func (k powKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 1) }

func (k powKernel) forward(a *args) { call(a, k, forwardPow[float64], forwardPow[float32]) }

func forwardPow[T float](k powKernel, out []T, in [][]T, _ []tensor.Shape) {
	switch k.p {
	case -0.5:
		for i, v := range in[0] {
			out[i] = T(1 / math.Sqrt(float64(v)+k.eps))
		}
	case -1:
		for i, v := range in[0] {
			out[i] = T(1 / (float64(v) + k.eps))
		}
	default:
		for i, v := range in[0] {
			out[i] = T(math.Pow(float64(v)+k.eps, k.p))
		}
	}
}

// grad: d/dx (x+eps)^p = p (x+eps)^(p-1).
func (k powKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := pow(in[0], k.p-1, k.eps)
	if err != nil {
		return nil, err
	}
	if d, err = mul(g, d); err != nil {
		return nil, err
	}
	d, err = scale(d, k.p)
	return gorgonia.Nodes{d}, err
}

// expKernel is exp(x); its derivative reuses its own output.
type expKernel struct{}

// expNode returns exp(x) elementwise.
func expNode(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(expKernel{}, x) }

func (expKernel) name() string                                  { return "exp" }
func (expKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 1) }

func (k expKernel) forward(a *args) { call(a, k, forwardExp[float64], forwardExp[float32]) }

func forwardExp[T float](_ expKernel, out []T, in [][]T, _ []tensor.Shape) {
	for i, v := range in[0] {
		out[i] = T(math.Exp(float64(v)))
	}
}

func (expKernel) grad(_ gorgonia.Nodes, out, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := mul(g, out)
	return gorgonia.Nodes{d}, err
}

// logKernel is the natural logarithm.
type logKernel struct{}

// logNode returns log(x) elementwise.
func logNode(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(logKernel{}, x) }

func (logKernel) name() string                                  { return "log" }
func (logKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 1) }

func (k logKernel) forward(a *args) { call(a, k, forwardLog[float64], forwardLog[float32]) }

func forwardLog[T float](_ logKernel, out []T, in [][]T, _ []tensor.Shape) {
	for i, v := range in[0] {
		out[i] = T(math.Log(float64(v)))
	}
}

func (logKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	r, err := pow(in[0], -1, 0)
	if err != nil {
		return nil, err
	}
	d, err := mul(g, r)
	return gorgonia.Nodes{d}, err
}
