package graph

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Products that use the shape of a meta-batch: the gradient of a weight
// shared by the tasks (tile) as one product over all tasks' rows (bmmSum),
// per-task products over so few rows that a product by them costs less
// through the rows (thinProduct), and the adapted parameters' inner step
// distributed over the products that read them (adaptedStep). bmm, scale
// and the tile's gradient choose them as the graph is built, so models and
// inner loops write plain products and steps.

// bmmSumKernel is the sum over tasks of the products a[t]ᵀ b[t], for a (T,
// m, k) and b (T, m, n): one product Aᵀ B of the stacked (T*m)-row
// matrices, (k, n). It is the gradient of a weight shared by the tasks
// (tile) where every task's term is such a product (sumOverTasks): the T
// per-task products, their (T, k, n) sum and the pass over it become one
// product whose output stays in cache.
type bmmSumKernel struct{}

// bmmSum returns the sum over t of a[t]ᵀ b[t].
func bmmSum(a, b *gorgonia.Node) (*gorgonia.Node, error) { return apply(bmmSumKernel{}, a, b) }

func (bmmSumKernel) name() string { return "bmmSum" }

func (bmmSumKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || len(in[0]) != 3 || len(in[1]) != 3 || in[0][0] != in[1][0] || in[0][1] != in[1][1] {
		return nil, shapeErr("(T, m, k) and (T, m, n)", in)
	}
	return tensor.Shape{in[0][2], in[1][2]}, nil
}

func (bmmSumKernel) forward(a *args) {
	s := a.s
	rows, k, n := s[0][0]*s[0][1], s[0][2], s[1][2]
	if a.o32 != nil {
		gemm(true, false, k, n, rows, a.i32[0], a.i32[1], 0, a.o32)
		return
	}
	bmmKernel{transA: true}.gemm(k, rows, n, a.i64[0], k, a.i64[1], n, a.o64)
}

// grad: with G (k, n) the same for every task, a[t] gets b[t] Gᵀ and b[t]
// gets a[t] G.
func (bmmSumKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	gt, err := tile(g, in[0].Shape()[0])
	if err != nil {
		return nil, err
	}
	da, err := bmm(in[1], gt, false, true)
	if err != nil {
		return nil, err
	}
	db, err := bmm(in[0], gt, false, false)
	return gorgonia.Nodes{da, db}, err
}

// sumOverTasks returns sumFirst(g), the gradient of a tiled weight from that
// of its tiles, computing the terms of g (the inputs of an addN, or g
// itself) that are thin products a[t]ᵀ b[t] (thinProduct) read by nothing
// else as bmmSum: their per-task (T, k, n) values, larger than a and b, are
// then never computed. (Small weights keep the per-task products and their
// float sums: an MLP with 8 hidden units reproduces its recorded runs bit
// for bit. Products large enough to run on several goroutines, one per
// task, keep them too: bmmSum is one product on one goroutine.)
func sumOverTasks(g *gorgonia.Node) (*gorgonia.Node, error) {
	terms, readers := gorgonia.Nodes{g}, 0 // what reads a term: g's addN or nothing
	if o, ok := g.Op().(*op); ok {
		if _, ok := o.k.(addNKernel); ok {
			terms, readers = inputsOf(g), 1
		}
	}
	var sums, rest gorgonia.Nodes
	for _, t := range terms {
		if a, b, ok := thinProduct(t); ok && t.Graph().To(t.ID()).Len() == readers && !largeTasks(a.Shape()[0], productWork(t)) {
			s, err := bmmSum(a, b)
			if err != nil {
				return nil, err
			}
			sums = append(sums, s)
			continue
		}
		rest = append(rest, t)
	}
	if len(sums) == 0 {
		return sumFirst(g)
	}
	if len(rest) > 0 {
		r := rest[0]
		var err error
		if len(rest) > 1 {
			if r, err = apply(addNKernel{len(rest)}, rest...); err != nil {
				return nil, err
			}
		}
		if r, err = sumFirst(r); err != nil {
			return nil, err
		}
		sums = append(sums, r)
	}
	if len(sums) == 1 {
		return sums[0], nil
	}
	return apply(addNKernel{len(sums)}, sums...)
}

// productWork is the number of multiply-adds of one task's product, for a
// product node n (bmmKernel).
func productWork(n *gorgonia.Node) int {
	o := n.Op().(*op)
	m, kk, c := o.k.(bmmKernel).dims(o.inShapes[0], o.inShapes[1])
	return m * kk * c
}

// thinProduct reports whether n is a product x[t]ᵀ y[t] of x (T, r, k) and
// y (T, r, n) through so few rows r that r (k + n) < k n: then the inputs
// are smaller than n, and a product by n costs more than two products
// through its r rows. It returns x and y.
func thinProduct(n *gorgonia.Node) (x, y *gorgonia.Node, ok bool) {
	o, isOp := n.Op().(*op)
	if !isOp || o.k != (bmmKernel{transA: true}) {
		return nil, nil, false
	}
	r, k, c := o.inShapes[0][1], o.inShapes[0][2], o.inShapes[1][2]
	if r*(k+c) >= k*c {
		return nil, nil, false
	}
	in := inputsOf(n)
	return in[0], in[1], true
}

// adaptedKernel passes its input through: it marks the parameters an inner
// loop returns after an SGD step whose gradient is a thin product, which
// the query pass reads and nothing differentiates with respect to. A
// product by them then reads the step's terms instead (bmm, adaptedStep),
// and where products are its only readers neither the mark (a copy) nor
// the step runs. Inner steps before the last stay whole: later support
// passes, and their gradients with respect to them, need them.
type adaptedKernel struct{}

// markAdapted marks x, parameters an inner loop returns, as adapted if it
// is an SGD step x0 + k y with a thin product y (thinProduct, such as an
// MLP weight's gradient), and returns x itself otherwise.
func markAdapted(x *gorgonia.Node) (*gorgonia.Node, error) {
	if _, _, ok := thinStep(x); !ok {
		return x, nil
	}
	return apply(adaptedKernel{}, x)
}

func (adaptedKernel) name() string                                  { return "adapted" }
func (adaptedKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 1) }

func (k adaptedKernel) forward(a *args) { call(a, k, forwardAdapted[float64], forwardAdapted[float32]) }

func forwardAdapted[T float](_ adaptedKernel, out []T, in [][]T, _ []tensor.Shape) { copy(out, in[0]) }

func (adaptedKernel) grad(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{g}, nil
}

// adaptedStep reports whether n is an adapted step (markAdapted) and
// returns its x0, y and k.
func adaptedStep(n *gorgonia.Node) (x0, y *gorgonia.Node, k float64, ok bool) {
	if o, isOp := n.Op().(*op); !isOp || o.k != (adaptedKernel{}) {
		return nil, nil, 0, false
	}
	in, k, thin := thinStep(inputsOf(n)[0])
	if !thin {
		panic("graph: an adapted step that is not a thin step") // markAdapted wraps only those
	}
	return in[0], in[1], k, true
}

// thinStep reports whether n is axpy(x0, y, k) with a thin product y and
// returns its inputs and k.
func thinStep(n *gorgonia.Node) (in gorgonia.Nodes, k float64, ok bool) {
	o, isOp := n.Op().(*op)
	if !isOp {
		return nil, 0, false
	}
	ax, isAxpy := o.k.(axpyKernel)
	if !isAxpy {
		return nil, 0, false
	}
	in = inputsOf(n)
	if _, _, thin := thinProduct(in[1]); !thin {
		return nil, 0, false
	}
	return in, ax.k, true
}
