package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Ops that move values without arithmetic: reshape, and midRows, which
// picks rows of the middle axis (its adjoint puts them back in place).

// reshapeKernel copies its input into another shape of the same size.
type reshapeKernel struct{ to tensor.Shape }

// reshape returns x with shape to (a copy: ops never alias their inputs).
func reshape(x *gorgonia.Node, to tensor.Shape) (*gorgonia.Node, error) {
	return apply(reshapeKernel{to}, x)
}

func (k reshapeKernel) name() string { return fmt.Sprintf("reshape%v", k.to) }

func (k reshapeKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || in[0].TotalSize() != k.to.TotalSize() {
		return nil, shapeErr(fmt.Sprintf("one input of size %d", k.to.TotalSize()), in)
	}
	return k.to.Clone(), nil
}

func (k reshapeKernel) forward(a *args) { call(a, k, forwardReshape[float64], forwardReshape[float32]) }

func forwardReshape[T float](k reshapeKernel, out []T, in [][]T, _ []tensor.Shape) { copy(out, in[0]) }

func (k reshapeKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := reshape(g, in[0].Shape())
	return gorgonia.Nodes{d}, err
}

// midRowsKernel picks the rows lo..lo+n-1 of the middle axis, (T, of, o)
// -> (T, n, o), or with pad puts x (T, n, o) at those rows of zeros,
// (T, n, o) -> (T, of, o): each other's adjoints. They split an op's
// output that holds several results (convBlockBack's) and join their
// gradients.
type midRowsKernel struct {
	lo, n, of int
	pad       bool
}

// midRows returns the rows lo..lo+n-1 of x (T, R, o) over its middle axis.
func midRows(x *gorgonia.Node, lo, n int) (*gorgonia.Node, error) {
	return apply(midRowsKernel{lo, n, x.Shape()[1], false}, x)
}

func (k midRowsKernel) name() string {
	if k.pad {
		return fmt.Sprintf("padMid(%d,%d,%d)", k.lo, k.n, k.of)
	}
	return fmt.Sprintf("midRows(%d,%d,%d)", k.lo, k.n, k.of)
}

func (k midRowsKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	from, to := k.of, k.n
	if k.pad {
		from, to = to, from
	}
	if len(in) != 1 || len(in[0]) != 3 || in[0][1] != from || k.lo < 0 || k.n < 1 || k.lo+k.n > k.of {
		return nil, shapeErr(fmt.Sprintf("one (T, %d, o) input, rows %d..%d of %d", from, k.lo, k.lo+k.n-1, k.of), in)
	}
	return tensor.Shape{in[0][0], to, in[0][2]}, nil
}

func (k midRowsKernel) forward(a *args) { call(a, k, forwardMidRows[float64], forwardMidRows[float32]) }

func forwardMidRows[T float](k midRowsKernel, out []T, in [][]T, s []tensor.Shape) {
	o := s[0][2]
	for t := 0; t < s[0][0]; t++ {
		if !k.pad {
			copy(out[t*k.n*o:][:k.n*o], in[0][(t*k.of+k.lo)*o:])
			continue
		}
		whole := out[t*k.of*o:][:k.of*o]
		clear(whole)
		copy(whole[k.lo*o:], in[0][t*k.n*o:][:k.n*o])
	}
}

func (k midRowsKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	k.pad = !k.pad
	d, err := apply(k, g)
	return gorgonia.Nodes{d}, err
}
