package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Scaled sums, elementwise over tensors of one shape: x + k*y (the inner
// SGD step), k*x, and the sum of a node's gradient terms.

// axpyKernel is x + k*y for x and y of one shape: the inner SGD step
// theta - alpha*grad with k = -alpha, and a subtraction with k = -1.
type axpyKernel struct{ k float64 }

// axpy returns x + k*y.
func axpy(x, y *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	return apply(axpyKernel{k}, x, y)
}

func (k axpyKernel) name() string { return fmt.Sprintf("axpy(%v)", k.k) }

func (k axpyKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || !in[0].Eq(in[1]) {
		return nil, shapeErr("two inputs of one shape", in)
	}
	return in[0].Clone(), nil
}

func (k axpyKernel) forward(a *args) { callElems(a, k.k, axpyLoop[float64], axpyLoop[float32]) }

func axpyLoop[T float](out []T, in [][]T, lo, hi int, k T) {
	vec.AddScaled(out[lo:hi], in[0][lo:hi], in[1][lo:hi], k)
}

func (k axpyKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dy, err := scale(g, k.k)
	return gorgonia.Nodes{g, dy}, err
}

// scaleKernel is k*x.
type scaleKernel struct{ k float64 }

// scale returns k*x; for a thin product x = a[t]ᵀ b[t] (thinProduct), the
// product of k*a and b, so that x is never scaled at its full size and a
// product by the result stays thin.
func scale(x *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	if a, b, ok := thinProduct(x); ok {
		ka, err := apply(scaleKernel{k}, a)
		if err != nil {
			return nil, err
		}
		return bmm(ka, b, true, false)
	}
	return apply(scaleKernel{k}, x)
}

func (k scaleKernel) name() string { return fmt.Sprintf("scale(%v)", k.k) }

func (k scaleKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, shapeErr("one input", in)
	}
	return in[0].Clone(), nil
}

func (k scaleKernel) forward(a *args) { callElems(a, k.k, scaleLoop[float64], scaleLoop[float32]) }

func scaleLoop[T float](out []T, in [][]T, lo, hi int, k T) { vec.Scale(out[lo:hi], in[0][lo:hi], k) }

func (k scaleKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := scale(g, k.k)
	return gorgonia.Nodes{d}, err
}

// addNKernel adds n tensors of one shape. Graph.Grad sums the gradient terms
// of a node with it: gorgonia's ReduceAdd chains binary Adds, each a separate
// node that allocates its result on every run. Its derivative passes the
// upstream gradient to every input unchanged.
type addNKernel struct{ n int }

// sumTerms returns the sum of terms: one addN node when all are float
// tensors of one shape and dtype, gorgonia's ReduceAdd otherwise. Two terms
// that are mulMid products (as batch norm's backward sweep makes) are
// computed as one mulMid2 instead, so neither product is ever stored; the
// two mulMid nodes stay in the graph unused and are never run.
func sumTerms(terms gorgonia.Nodes) (*gorgonia.Node, error) {
	s, dt := terms[0].Shape(), terms[0].Dtype()
	for _, t := range terms {
		if t.Dtype() != dt || (dt != tensor.Float64 && dt != tensor.Float32) || t.Dims() == 0 || !t.Shape().Eq(s) {
			return gorgonia.ReduceAdd(terms)
		}
	}
	var products, rest gorgonia.Nodes
	for _, t := range terms {
		if o, ok := t.Op().(*op); ok && len(products) < 2 {
			if _, ok := o.k.(mulMidKernel); ok {
				products = append(products, t)
				continue
			}
		}
		rest = append(rest, t)
	}
	if len(products) == 2 {
		a, b := inputsOf(products[0]), inputsOf(products[1])
		fused, err := apply(mulMid2Kernel{}, a[0], a[1], b[0], b[1])
		if err != nil {
			return nil, err
		}
		if len(rest) == 0 {
			return fused, nil
		}
		rest = append(rest, fused)
	} else {
		rest = terms
	}
	if len(rest) == 1 {
		return rest[0], nil
	}
	return apply(addNKernel{len(rest)}, rest...)
}

// inputsOf returns the inputs of n in argument order.
func inputsOf(n *gorgonia.Node) gorgonia.Nodes {
	it := n.Graph().From(n.ID())
	var in gorgonia.Nodes
	for it.Next() {
		in = append(in, it.Node().(*gorgonia.Node))
	}
	return in
}

func (k addNKernel) name() string { return fmt.Sprintf("addN(%d)", k.n) }

func (k addNKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != k.n || k.n < 2 {
		return nil, shapeErr(fmt.Sprintf("%d >= 2 inputs", k.n), in)
	}
	for _, s := range in[1:] {
		if !s.Eq(in[0]) {
			return nil, shapeErr("inputs of one shape", in)
		}
	}
	return in[0].Clone(), nil
}

func (addNKernel) forward(a *args) { callElems(a, 0, addNLoop[float64], addNLoop[float32]) }

// addNLoop adds the terms a block of addNBlock values at a time, so that
// the block of out stays in the first-level cache while every term is
// added to it (the same sums in the same order as whole passes, for a
// third of their memory traffic with four terms).
func addNLoop[T float](out []T, in [][]T, lo, hi int, _ T) {
	for b := lo; b < hi; b += addNBlock {
		e := min(b+addNBlock, hi)
		o := out[b:e]
		vec.AddScaled(o, in[0][b:e], in[1][b:e], 1) // x + 1*y is x + y exactly
		for _, x := range in[2:] {
			vec.AddTo(o, x[b:e])
		}
	}
}

// addNBlock is the values of addNLoop's blocks: 16 KB of float32.
const addNBlock = 1 << 12

func (k addNKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d := make(gorgonia.Nodes, len(in))
	for i := range d {
		d[i] = g
	}
	return d, nil
}
