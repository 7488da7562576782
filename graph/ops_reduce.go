package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Reductions and broadcasts over the axes of task-batched tensors, each with
// its adjoint: tile/sumFirst over the task axis, spreadLast/sumLast over
// the last axis, and spreadMid/sumMid over the point axis of (T, N, o) with
// the other per-point ops in ops_reduce_mid.go.

// tileKernel stacks n copies of its input along a new leading axis:
// (s...) -> (n, s...). Its adjoint is sumFirst (as sumOverTasks computes
// it). With first, set by firstTiles (compile.go) where only the first copy is
// ever read, it writes only that one (the others hold stale values).
type tileKernel struct {
	n     int
	first bool
}

// tile returns x repeated n times along a new leading axis.
func tile(x *gorgonia.Node, n int) (*gorgonia.Node, error) { return apply(tileKernel{n: n}, x) }

func (k tileKernel) name() string { return fmt.Sprintf("tile(%d)", k.n) }

func (k tileKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, shapeErr("one input", in)
	}
	return append(tensor.Shape{k.n}, in[0]...), nil
}

func (k tileKernel) forward(a *args) { call(a, k, forwardTile[float64], forwardTile[float32]) }

func forwardTile[T float](k tileKernel, out []T, in [][]T, _ []tensor.Shape) {
	if k.first {
		copy(out, in[0])
		return
	}
	for t := 0; t < k.n; t++ {
		copy(out[t*len(in[0]):], in[0])
	}
}

func (k tileKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := sumOverTasks(g)
	return gorgonia.Nodes{d}, err
}

// sumFirstKernel sums over the leading axis: (T, s...) -> (s...). Its adjoint
// is tile.
type sumFirstKernel struct{}

// sumFirst returns the sum of x over its leading axis.
func sumFirst(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(sumFirstKernel{}, x) }

func (sumFirstKernel) name() string { return "sumFirst" }

func (sumFirstKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || len(in[0]) < 2 {
		return nil, shapeErr("one input with at least 2 dims", in)
	}
	return in[0][1:].Clone(), nil
}

func (k sumFirstKernel) forward(a *args) {
	call(a, k, forwardSumFirst[float64], forwardSumFirst[float32])
}

func forwardSumFirst[T float](_ sumFirstKernel, out []T, in [][]T, s []tensor.Shape) {
	x := in[0]
	copy(out, x[:len(out)])
	for t := 1; t < s[0][0]; t++ {
		vec.AddTo(out, x[t*len(out):(t+1)*len(out)])
	}
}

func (sumFirstKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := tile(g, in[0].Shape()[0])
	return gorgonia.Nodes{d}, err
}

// sumLastKernel sums over the last axis: (T, N, c) -> (T, N). Its adjoint is
// spreadLast.
type sumLastKernel struct{}

// sumLast returns the sum of x (T, N, c) over c.
func sumLast(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(sumLastKernel{}, x) }

func (sumLastKernel) name() string { return "sumLast" }

func (sumLastKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || len(in[0]) != 3 {
		return nil, shapeErr("one (T, N, c) input", in)
	}
	return tensor.Shape{in[0][0], in[0][1]}, nil
}

func (k sumLastKernel) forward(a *args) { call(a, k, forwardSumLast[float64], forwardSumLast[float32]) }

func forwardSumLast[T float](_ sumLastKernel, out []T, in [][]T, s []tensor.Shape) {
	c := s[0][2]
	for r := range out {
		var v T
		for _, x := range in[0][r*c : (r+1)*c] {
			v += x
		}
		out[r] = v
	}
}

func (sumLastKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := spreadLast(g, in[0].Shape()[2])
	return gorgonia.Nodes{d}, err
}

// spreadLastKernel copies every entry of x (T, N) c times: (T, N, c). Its
// adjoint is sumLast.
type spreadLastKernel struct{ c int }

// spreadLast returns x (T, N) repeated along a new last axis of length c.
func spreadLast(x *gorgonia.Node, c int) (*gorgonia.Node, error) {
	return apply(spreadLastKernel{c}, x)
}

func (k spreadLastKernel) name() string { return fmt.Sprintf("spreadLast(%d)", k.c) }

func (k spreadLastKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || len(in[0]) != 2 {
		return nil, shapeErr("one (T, N) input", in)
	}
	return tensor.Shape{in[0][0], in[0][1], k.c}, nil
}

func (k spreadLastKernel) forward(a *args) {
	call(a, k, forwardSpreadLast[float64], forwardSpreadLast[float32])
}

func forwardSpreadLast[T float](k spreadLastKernel, out []T, in [][]T, _ []tensor.Shape) {
	for r, v := range in[0] {
		row := out[r*k.c : (r+1)*k.c]
		for i := range row {
			row[i] = v
		}
	}
}

func (k spreadLastKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := sumLast(g)
	return gorgonia.Nodes{d}, err
}

// maxLastKernel is the maximum over the last axis, (T, N, c) -> (T, N),
// declared non-differentiable: a stop-gradient max, used only to shift
// logits for a stable log-sum-exp whose value does not depend on the shift.
type maxLastKernel struct{}

// maxLastStop returns the maximum of x (T, N, c) over c, through which no
// gradient flows.
func maxLastStop(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(maxLastKernel{}, x) }

func (maxLastKernel) name() string           { return "maxLastStop" }
func (maxLastKernel) differentiable() []bool { return []bool{false} }

func (maxLastKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	return sumLastKernel{}.shape(in)
}

func (k maxLastKernel) forward(a *args) { call(a, k, forwardMaxLast[float64], forwardMaxLast[float32]) }

func forwardMaxLast[T float](_ maxLastKernel, out []T, in [][]T, s []tensor.Shape) {
	c := s[0][2]
	for r := range out {
		row := in[0][r*c : (r+1)*c]
		m := row[0]
		for _, x := range row[1:] {
			m = max(m, x)
		}
		out[r] = m
	}
}

func (maxLastKernel) grad(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{nil}, nil
}
