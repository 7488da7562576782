package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Broadcasts and reductions over the point axis of task-batched (T, N, o)
// tensors (ops_reduce.go has the other axes), each with its adjoint:
// spreadMid/sumMid, and the per-task bias and scale of every point
// (addBias, mulMid, mulMid2) with the sum of products that is mulMid's
// derivative (sumMidProd).

// addBiasKernel adds a per-task bias to every point: h (T, N, o) + b (T, o)
// broadcast over N.
type addBiasKernel struct{}

// addBias returns h + b with b (T, o) broadcast over the points of h (T, N, o).
func addBias(h, b *gorgonia.Node) (*gorgonia.Node, error) { return apply(addBiasKernel{}, h, b) }

func (addBiasKernel) name() string { return "addBias" }

func (addBiasKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || len(in[0]) != 3 || len(in[1]) != 2 || in[0][0] != in[1][0] || in[0][2] != in[1][1] {
		return nil, shapeErr("(T, N, o) and (T, o)", in)
	}
	return in[0].Clone(), nil
}

func (k addBiasKernel) forward(a *args) { call(a, k, forwardAddBias[float64], forwardAddBias[float32]) }

func forwardAddBias[T float](_ addBiasKernel, out []T, in [][]T, s []tensor.Shape) {
	h, b := in[0], in[1]
	n, w := s[0][1], s[0][2]
	if !parallel(s[0][0], n*w) { // no closure: the MLP's small graphs allocate nothing
		for t := 0; t < s[0][0]; t++ {
			addBiasTask(h, b, out, n, w, t)
		}
		return
	}
	parallelTasks(s[0][0], n*w, func(t int) { addBiasTask(h, b, out, n, w, t) })
}

func addBiasTask[T float](h, b, out []T, n, w, t int) {
	bt := b[t*w : (t+1)*w]
	for p := 0; p < n; p++ {
		off := (t*n + p) * w
		vec.AddScaled(out[off:off+w], h[off:off+w], bt, 1) // h + 1*b is h + b exactly
	}
}

func (addBiasKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	db, err := sumMid(g)
	return gorgonia.Nodes{g, db}, err
}

// mulMidKernel multiplies every point by a per-task vector: x (T, N, o) * s
// (T, o) broadcast over N (the batch-norm scale).
type mulMidKernel struct{}

// mulMid returns x * s with s (T, o) broadcast over the points of x (T, N, o).
func mulMid(x, s *gorgonia.Node) (*gorgonia.Node, error) { return apply(mulMidKernel{}, x, s) }

func (mulMidKernel) name() string { return "mulMid" }

func (mulMidKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	return addBiasKernel{}.shape(in)
}

func (k mulMidKernel) forward(a *args) { call(a, k, forwardMulMid[float64], forwardMulMid[float32]) }

func forwardMulMid[T float](_ mulMidKernel, out []T, in [][]T, s []tensor.Shape) {
	x, m := in[0], in[1]
	n, w := s[0][1], s[0][2]
	parallelTasks(s[0][0], n*w, func(t int) {
		mt := m[t*w : (t+1)*w]
		for p := 0; p < n; p++ {
			off := (t*n + p) * w
			src, dst := x[off:off+w], out[off:off+w]
			for i, v := range mt {
				dst[i] = src[i] * v
			}
		}
	})
}

func (mulMidKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := mulMid(g, in[1])
	if err != nil {
		return nil, err
	}
	ds, err := sumMidProd(g, in[0])
	return gorgonia.Nodes{dx, ds}, err
}

// mulMid2Kernel is a * s + b * k for a, b (T, N, o) and s, k (T, o)
// broadcast over N: the sum of two mulMid products in one pass.
type mulMid2Kernel struct{}

func (mulMid2Kernel) name() string { return "mulMid2" }

func (mulMid2Kernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 4 || !in[0].Eq(in[2]) || !in[1].Eq(in[3]) {
		return nil, shapeErr("(T, N, o), (T, o), (T, N, o), (T, o)", in)
	}
	return addBiasKernel{}.shape(in[:2])
}

func (k mulMid2Kernel) forward(a *args) {
	call(a, k, forwardMulMid2[float64], forwardMulMid2[float32])
}

func forwardMulMid2[T float](_ mulMid2Kernel, out []T, in [][]T, s []tensor.Shape) {
	x, m, y, q := in[0], in[1], in[2], in[3]
	n, w := s[0][1], s[0][2]
	parallelTasks(s[0][0], n*w, func(t int) {
		mt, qt := m[t*w:(t+1)*w], q[t*w:(t+1)*w]
		for p := 0; p < n; p++ {
			off := (t*n + p) * w
			xs, ys, dst := x[off:off+w], y[off:off+w], out[off:off+w]
			for i, v := range mt {
				dst[i] = xs[i]*v + ys[i]*qt[i]
			}
		}
	})
}

func (mulMid2Kernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d := make(gorgonia.Nodes, 4)
	var err error
	for i := 0; i < 4 && err == nil; i += 2 {
		if d[i], err = mulMid(g, in[i+1]); err == nil {
			d[i+1], err = sumMidProd(g, in[i])
		}
	}
	return d, err
}

// sumMidProdKernel sums the product of two (T, N, o) tensors over the middle
// axis: (T, o). It is sumMid(mul(a, b)) without the (T, N, o) intermediate.
type sumMidProdKernel struct{}

// sumMidProd returns the sum over N of a * b for a, b (T, N, o).
func sumMidProd(a, b *gorgonia.Node) (*gorgonia.Node, error) { return apply(sumMidProdKernel{}, a, b) }

func (sumMidProdKernel) name() string { return "sumMidProd" }

func (sumMidProdKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || !in[0].Eq(in[1]) {
		return nil, shapeErr("two (T, N, o) inputs of one shape", in)
	}
	return sumMidKernel{}.shape(in[:1])
}

func (k sumMidProdKernel) forward(a *args) {
	call(a, k, forwardSumMidProd[float64], forwardSumMidProd[float32])
}

func forwardSumMidProd[T float](_ sumMidProdKernel, out []T, in [][]T, s []tensor.Shape) {
	x, y := in[0], in[1]
	n, w := s[0][1], s[0][2]
	parallelTasks(s[0][0], n*w, func(t int) {
		dst := out[t*w : (t+1)*w]
		clear(dst)
		for p := 0; p < n; p++ {
			off := (t*n + p) * w
			yr := y[off : off+w]
			for i, v := range x[off : off+w] {
				dst[i] += v * yr[i]
			}
		}
	})
}

func (sumMidProdKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	da, err := mulMid(in[1], g)
	if err != nil {
		return nil, err
	}
	db, err := mulMid(in[0], g)
	return gorgonia.Nodes{da, db}, err
}

// sumMidKernel sums over the middle axis: (T, N, o) -> (T, o). Its adjoint
// is spreadMid.
type sumMidKernel struct{}

// sumMid returns the sum of x (T, N, o) over N.
func sumMid(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(sumMidKernel{}, x) }

func (sumMidKernel) name() string { return "sumMid" }

func (sumMidKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || len(in[0]) != 3 {
		return nil, shapeErr("one (T, N, o) input", in)
	}
	return tensor.Shape{in[0][0], in[0][2]}, nil
}

func (k sumMidKernel) forward(a *args) { call(a, k, forwardSumMid[float64], forwardSumMid[float32]) }

func forwardSumMid[T float](_ sumMidKernel, out []T, in [][]T, s []tensor.Shape) {
	x := in[0]
	n, w := s[0][1], s[0][2]
	if !parallel(s[0][0], n*w) {
		for t := 0; t < s[0][0]; t++ {
			sumMidTask(x, out, n, w, t)
		}
		return
	}
	parallelTasks(s[0][0], n*w, func(t int) { sumMidTask(x, out, n, w, t) })
}

func sumMidTask[T float](x, out []T, n, w, t int) {
	dst := out[t*w : (t+1)*w]
	clear(dst)
	vec.SumRows(dst, x[t*n*w:(t+1)*n*w])
}

func (sumMidKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := spreadMid(g, in[0].Shape()[1])
	return gorgonia.Nodes{d}, err
}

// spreadMidKernel copies x (T, o) to every one of n points: (T, n, o). Its
// adjoint is sumMid.
type spreadMidKernel struct{ n int }

// spreadMid returns x (T, o) repeated over a new middle axis of length n.
func spreadMid(x *gorgonia.Node, n int) (*gorgonia.Node, error) {
	return apply(spreadMidKernel{n}, x)
}

func (k spreadMidKernel) name() string { return fmt.Sprintf("spreadMid(%d)", k.n) }

func (k spreadMidKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || len(in[0]) != 2 {
		return nil, shapeErr("one (T, o) input", in)
	}
	return tensor.Shape{in[0][0], k.n, in[0][1]}, nil
}

func (k spreadMidKernel) forward(a *args) {
	call(a, k, forwardSpreadMid[float64], forwardSpreadMid[float32])
}

func forwardSpreadMid[T float](k spreadMidKernel, out []T, in [][]T, s []tensor.Shape) {
	x, w := in[0], s[0][1]
	for t := 0; t < s[0][0]; t++ {
		for p := 0; p < k.n; p++ {
			copy(out[(t*k.n+p)*w:], x[t*w:(t+1)*w])
		}
	}
}

func (k spreadMidKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := sumMid(g)
	return gorgonia.Nodes{d}, err
}
