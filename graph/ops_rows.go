package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Per-task inner products and scalings of rows, each the other's adjoint
// in one argument: rowDot and scaleRows.

// rowDotKernel is k times the inner product of every task's slice:
// out[t] = k * sum_i a[t, i] b[t, i] for a, b of shape (T, ...).
type rowDotKernel struct{ k float64 }

// rowDot returns k * <a[t], b[t]> for every task t, shape (T).
func rowDot(a, b *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	return apply(rowDotKernel{k}, a, b)
}

func (k rowDotKernel) name() string { return fmt.Sprintf("rowDot(%v)", k.k) }

func (k rowDotKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || !in[0].Eq(in[1]) || len(in[0]) < 2 {
		return nil, shapeErr("two (T, ...) inputs of one shape", in)
	}
	return tensor.Shape{in[0][0]}, nil
}

func (k rowDotKernel) forward(a *args) { call(a, k, forwardRowDot[float64], forwardRowDot[float32]) }

func forwardRowDot[T float](k rowDotKernel, out []T, in [][]T, _ []tensor.Shape) {
	a, b := in[0], in[1]
	w := len(a) / len(out)
	for t := range out {
		s := 0.0
		bt := b[t*w : (t+1)*w]
		for i, v := range a[t*w : (t+1)*w] {
			s += float64(v) * float64(bt[i])
		}
		out[t] = T(k.k * s)
	}
}

func (k rowDotKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	da, err := scaleRows(in[1], g, k.k)
	if err != nil {
		return nil, err
	}
	db, err := scaleRows(in[0], g, k.k)
	return gorgonia.Nodes{da, db}, err
}

// scaleRowsKernel multiplies every task's slice by k times its own scale:
// out[t, i] = k * s[t] * x[t, i] for x (T, ...) and s (T).
type scaleRowsKernel struct{ k float64 }

// scaleRows returns k * s[t] * x[t] for every task t.
func scaleRows(x, s *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	return apply(scaleRowsKernel{k}, x, s)
}

func (k scaleRowsKernel) name() string { return fmt.Sprintf("scaleRows(%v)", k.k) }

func (k scaleRowsKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || len(in[0]) < 2 || len(in[1]) != 1 || in[0][0] != in[1][0] {
		return nil, shapeErr("(T, ...) and (T)", in)
	}
	return in[0].Clone(), nil
}

func (k scaleRowsKernel) forward(a *args) {
	call(a, k, forwardScaleRows[float64], forwardScaleRows[float32])
}

func forwardScaleRows[T float](k scaleRowsKernel, out []T, in [][]T, _ []tensor.Shape) {
	x, s := in[0], in[1]
	w := len(x) / len(s)
	for t, st := range s {
		c := T(k.k * float64(st))
		dst := out[t*w : (t+1)*w]
		for i, v := range x[t*w : (t+1)*w] {
			dst[i] = c * v
		}
	}
}

func (k scaleRowsKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := scaleRows(g, in[1], k.k)
	if err != nil {
		return nil, err
	}
	ds, err := rowDot(g, in[0], k.k)
	return gorgonia.Nodes{dx, ds}, err
}
