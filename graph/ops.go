package graph

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	vecf "gonum.org/v1/gonum/floats"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// This file holds the project's own float64 ops for task-batched graphs. They
// replace gorgonia compositions that dominated the run time (BatchedMatMul
// slices every task into new tensors, broadcasts are built from repeat copies,
// Mean is a chain of size and division nodes). Every op's SymDiff is made of
// ops of this family only, so derivatives of derivatives stay exact: the
// finite-difference tests of the meta-gradient check this.
//
// Each op value belongs to one node and keeps that node's output tensor
// between runs, so a rerun allocates nothing for these nodes. Nothing writes
// into an op's output (no op here or in gorgonia's Do overwrites its inputs)
// and the Objective copies its results out, so reusing the buffer is safe.

// applyOp adds a node computing op(in...) and checks that gorgonia did not
// merge it into an existing node with other inputs: gorgonia identifies
// nodes by a 32-bit hash, and a collision would silently share one node (and
// one output buffer) between two computations.
func applyOp(op gorgonia.Op, in ...*gorgonia.Node) (*gorgonia.Node, error) {
	n, err := gorgonia.ApplyOp(op, in...)
	if err != nil {
		return nil, err
	}
	it := n.Graph().From(n.ID())
	same := it.Len() == len(in)
	for i := 0; same && it.Next(); i++ {
		same = it.Node() == in[i]
	}
	if !same {
		return nil, fmt.Errorf("graph: node for %v was merged into node %q with other inputs (hash collision)", op, n.Name())
	}
	return n, nil
}

// outBuf is the output tensor an op reuses from run to run.
type outBuf struct{ t *tensor.Dense }

// get returns the reusable output of the given shape, zeroed when asked.
func (b *outBuf) get(shape tensor.Shape, zero bool) *tensor.Dense {
	if b.t == nil || !b.t.Shape().Eq(shape) {
		b.t = tensor.New(tensor.WithShape(shape.Clone()...), tensor.Of(tensor.Float64))
		return b.t
	}
	if zero {
		clear(b.t.Float64s())
	}
	return b.t
}

// floats returns the float64 data and shape of a tensor value.
func floats(v gorgonia.Value, op string) ([]float64, tensor.Shape, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, nil, fmt.Errorf("%s: input %v is not a dense tensor", op, v)
	}
	if t.Dtype() != tensor.Float64 {
		return nil, nil, fmt.Errorf("%s: input is %v, only float64 is supported", op, t.Dtype())
	}
	if !t.DataOrder().IsRowMajor() || t.RequiresIterator() {
		return nil, nil, fmt.Errorf("%s: input must be a contiguous row-major tensor", op)
	}
	// Float64s, unlike Data, does not box the slice in an interface (an
	// allocation per call).
	return t.Float64s(), t.Shape(), nil
}

func shapesOf(op string, want int, in []gorgonia.DimSizer) ([]tensor.Shape, error) {
	if len(in) != want {
		return nil, fmt.Errorf("%s takes %d inputs, got %d", op, want, len(in))
	}
	out := make([]tensor.Shape, len(in))
	for i, d := range in {
		s, ok := d.(tensor.Shape)
		if !ok {
			return nil, fmt.Errorf("%s: input %d shape is %T, not a tensor.Shape", op, i, d)
		}
		out[i] = s
	}
	return out, nil
}

func tensorType(dims int) gorgonia.TensorType {
	return gorgonia.TensorType{Dims: dims, Of: hm.TypeVariable('a')}
}

func hashString(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// opCommon holds the Op methods shared by every op of this file: they return
// fresh tensors (never views of an input) and call no external code.
type opCommon struct{}

func (opCommon) ReturnsPtr() bool     { return false }
func (opCommon) CallsExtern() bool    { return false }
func (opCommon) OverwritesInput() int { return -1 }

// ---------------------------------------------------------------------------
// Batched matrix product.

// bmmOp multiplies per task: out[t] = op(a[t]) op(b[t]) with op the identity or
// the transpose, for a and b of shape (T, rows, cols).
type bmmOp struct {
	opCommon
	transA, transB bool
	out            outBuf
}

// bmm returns the task-batched product op(a) op(b).
func bmm(a, b *gorgonia.Node, transA, transB bool) (*gorgonia.Node, error) {
	return applyOp(&bmmOp{transA: transA, transB: transB}, a, b)
}

func (op *bmmOp) Arity() int { return 2 }
func (op *bmmOp) Type() hm.Type {
	t := tensorType(3)
	return hm.NewFnType(t, t, t)
}
func (op *bmmOp) String() string {
	return fmt.Sprintf("bmm(%s,%s)", map[bool]string{false: "A", true: "Aᵀ"}[op.transA], map[bool]string{false: "B", true: "Bᵀ"}[op.transB])
}
func (op *bmmOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *bmmOp) Hashcode() uint32      { return hashString(op.String()) }

// dims returns m, k, n of op(a) (m, k) times op(b) (k, n).
func (op *bmmOp) dims(a, b tensor.Shape) (m, k, n int, err error) {
	if len(a) != 3 || len(b) != 3 || a[0] != b[0] {
		return 0, 0, 0, fmt.Errorf("bmm needs two (T, rows, cols) inputs, got %v and %v", a, b)
	}
	m, k = a[1], a[2]
	if op.transA {
		m, k = k, m
	}
	kb, n := b[1], b[2]
	if op.transB {
		kb, n = n, kb
	}
	if k != kb {
		return 0, 0, 0, fmt.Errorf("bmm %v: inner sizes of %v and %v differ", op, a, b)
	}
	return m, k, n, nil
}

func (op *bmmOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("bmm", 2, in)
	if err != nil {
		return nil, err
	}
	m, _, n, err := op.dims(s[0], s[1])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0][0], m, n}, nil
}

func (op *bmmOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("bmm takes 2 inputs, got %d", len(in))
	}
	a, as, err := floats(in[0], "bmm")
	if err != nil {
		return nil, err
	}
	b, bs, err := floats(in[1], "bmm")
	if err != nil {
		return nil, err
	}
	m, k, n, err := op.dims(as, bs)
	if err != nil {
		return nil, err
	}
	out := op.out.get(tensor.Shape{as[0], m, n}, false)
	c := out.Float64s()
	sa, sb, sc := as[1]*as[2], bs[1]*bs[2], m*n
	for t := 0; t < as[0]; t++ {
		op.gemm(m, k, n, a[t*sa:(t+1)*sa], as[2], b[t*sb:(t+1)*sb], bs[2], c[t*sc:(t+1)*sc])
	}
	return out, nil
}

// gemm sets c (m, n) to op(a) op(b) for one task, where a and b are stored
// row-major with lda and ldb columns. For the small shapes of few-shot tasks
// matrix-vector and rank-one kernels beat a general Dgemm (about twice as fast
// for 5x40x40): a single product when c is a column, rank-one updates when the
// inner size is the smallest, one matrix-vector product per row of c else.
func (op *bmmOp) gemm(m, k, n int, a []float64, lda int, b []float64, ldb int, c []float64) {
	var impl gonum.Implementation
	switch {
	case n == 1: // c = op(a) times the vector b
		ta, ar, ac := blas.NoTrans, m, k
		if op.transA {
			ta, ar, ac = blas.Trans, k, m
		}
		impl.Dgemv(ta, ar, ac, 1, a, lda, b, 1, 0, c, 1)
	case k < m: // c = sum over p of column p of op(a) times row p of op(b)
		clear(c)
		for p := 0; p < k; p++ {
			x, incX := a[p:], lda
			if op.transA {
				x, incX = a[p*lda:], 1
			}
			y, incY := b[p*ldb:], 1
			if op.transB {
				y, incY = b[p:], ldb
			}
			impl.Dger(m, n, 1, x, incX, y, incY, c, n)
		}
	default: // row i of c = op(b)ᵀ times row i of op(a)
		tb, br, bc := blas.Trans, k, n
		if op.transB {
			tb, br, bc = blas.NoTrans, n, k
		}
		for i := 0; i < m; i++ {
			x, incX := a[i*lda:], 1
			if op.transA {
				x, incX = a[i:], lda
			}
			impl.Dgemv(tb, br, bc, 1, b, ldb, x, incX, 0, c[i*n:(i+1)*n], 1)
		}
	}
}

func (op *bmmOp) DiffWRT(n int) []bool { return []bool{true, true} }

// SymDiff: for C = op(A) op(B) with upstream G, the input gradients are again
// batched products with other transpose flags.
func (op *bmmOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	a, b := in[0], in[1]
	var da, db *gorgonia.Node
	var err error
	switch {
	case !op.transA && !op.transB: // C = A B
		if da, err = bmm(g, b, false, true); err == nil {
			db, err = bmm(a, g, true, false)
		}
	case op.transA && !op.transB: // C = Aᵀ B
		if da, err = bmm(b, g, false, true); err == nil {
			db, err = bmm(a, g, false, false)
		}
	case !op.transA && op.transB: // C = A Bᵀ
		if da, err = bmm(g, b, false, false); err == nil {
			db, err = bmm(g, a, true, false)
		}
	default: // C = Aᵀ Bᵀ
		if da, err = bmm(b, g, true, true); err == nil {
			db, err = bmm(g, a, true, true)
		}
	}
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{da, db}, nil
}

// ---------------------------------------------------------------------------
// Copies along the task axis and their adjoint.

// tileOp stacks T copies of its input along a new leading axis:
// (s...) -> (T, s...). Its adjoint is sumFirstOp.
type tileOp struct {
	opCommon
	n, dims int // copies, input dims
	out     outBuf
}

// tile returns x repeated n times along a new leading axis.
func tile(x *gorgonia.Node, n int) (*gorgonia.Node, error) {
	return applyOp(&tileOp{n: n, dims: x.Dims()}, x)
}

func (op *tileOp) Arity() int            { return 1 }
func (op *tileOp) Type() hm.Type         { return hm.NewFnType(tensorType(op.dims), tensorType(op.dims+1)) }
func (op *tileOp) String() string        { return fmt.Sprintf("tile(%d)", op.n) }
func (op *tileOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *tileOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *tileOp) DiffWRT(int) []bool    { return []bool{true} }

func (op *tileOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("tile", 1, in)
	if err != nil {
		return nil, err
	}
	return append(tensor.Shape{op.n}, s[0]...), nil
}

func (op *tileOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("tile takes 1 input, got %d", len(in))
	}
	x, xs, err := floats(in[0], "tile")
	if err != nil {
		return nil, err
	}
	out := op.out.get(append(tensor.Shape{op.n}, xs...), false)
	o := out.Float64s()
	for t := 0; t < op.n; t++ {
		copy(o[t*len(x):], x)
	}
	return out, nil
}

func (op *tileOp) SymDiff(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := sumFirst(g)
	return gorgonia.Nodes{d}, err
}

// sumFirstOp sums over the leading axis: (T, s...) -> (s...). Its adjoint is
// tileOp.
type sumFirstOp struct {
	opCommon
	dims int // input dims
	out  outBuf
}

// sumFirst returns the sum of x over its leading axis.
func sumFirst(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x.Dims() < 2 {
		return nil, fmt.Errorf("sumFirst needs at least 2 dims, got shape %v", x.Shape())
	}
	return applyOp(&sumFirstOp{dims: x.Dims()}, x)
}

func (op *sumFirstOp) Arity() int            { return 1 }
func (op *sumFirstOp) Type() hm.Type         { return hm.NewFnType(tensorType(op.dims), tensorType(op.dims-1)) }
func (op *sumFirstOp) String() string        { return "sumFirst" }
func (op *sumFirstOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *sumFirstOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *sumFirstOp) DiffWRT(int) []bool    { return []bool{true} }

func (op *sumFirstOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("sumFirst", 1, in)
	if err != nil {
		return nil, err
	}
	return s[0][1:].Clone(), nil
}

func (op *sumFirstOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("sumFirst takes 1 input, got %d", len(in))
	}
	x, xs, err := floats(in[0], "sumFirst")
	if err != nil {
		return nil, err
	}
	out := op.out.get(xs[1:], false)
	o := out.Float64s()
	copy(o, x[:len(o)])
	for t := 1; t < xs[0]; t++ {
		row := x[t*len(o) : (t+1)*len(o)]
		for i, v := range row {
			o[i] += v
		}
	}
	return out, nil
}

func (op *sumFirstOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := tile(g, in[0].Shape()[0])
	return gorgonia.Nodes{d}, err
}

// ---------------------------------------------------------------------------
// Bias: broadcasting over the middle (point) axis and its adjoint.

// addBiasOp adds a per-task bias to every point: h (T, N, o) + b (T, o)
// broadcast over N.
type addBiasOp struct {
	opCommon
	out outBuf
}

// addBias returns h + b with b (T, o) broadcast over the points of h (T, N, o).
func addBias(h, b *gorgonia.Node) (*gorgonia.Node, error) {
	return applyOp(&addBiasOp{}, h, b)
}

func (op *addBiasOp) Arity() int            { return 2 }
func (op *addBiasOp) Type() hm.Type         { return hm.NewFnType(tensorType(3), tensorType(2), tensorType(3)) }
func (op *addBiasOp) String() string        { return "addBias" }
func (op *addBiasOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *addBiasOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *addBiasOp) DiffWRT(int) []bool    { return []bool{true, true} }

func (op *addBiasOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("addBias", 2, in)
	if err != nil {
		return nil, err
	}
	if len(s[0]) != 3 || len(s[1]) != 2 || s[0][0] != s[1][0] || s[0][2] != s[1][1] {
		return nil, fmt.Errorf("addBias needs (T, N, o) and (T, o), got %v and %v", s[0], s[1])
	}
	return s[0].Clone(), nil
}

func (op *addBiasOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("addBias takes 2 inputs, got %d", len(in))
	}
	h, hs, err := floats(in[0], "addBias")
	if err != nil {
		return nil, err
	}
	b, _, err := floats(in[1], "addBias")
	if err != nil {
		return nil, err
	}
	out := op.out.get(hs, false)
	o := out.Float64s()
	n, w := hs[1], hs[2]
	for t := 0; t < hs[0]; t++ {
		bt := b[t*w : (t+1)*w]
		for p := 0; p < n; p++ {
			off := (t*n + p) * w
			src, dst := h[off:off+w], o[off:off+w]
			for i, v := range bt {
				dst[i] = src[i] + v
			}
		}
	}
	return out, nil
}

func (op *addBiasOp) SymDiff(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	db, err := sumMid(g)
	return gorgonia.Nodes{g, db}, err
}

// sumMidOp sums over the middle axis: (T, N, o) -> (T, o). Its adjoint is
// spreadMidOp.
type sumMidOp struct {
	opCommon
	out outBuf
}

// sumMid returns the sum of x (T, N, o) over N.
func sumMid(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applyOp(&sumMidOp{}, x)
}

func (op *sumMidOp) Arity() int            { return 1 }
func (op *sumMidOp) Type() hm.Type         { return hm.NewFnType(tensorType(3), tensorType(2)) }
func (op *sumMidOp) String() string        { return "sumMid" }
func (op *sumMidOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *sumMidOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *sumMidOp) DiffWRT(int) []bool    { return []bool{true} }

func (op *sumMidOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("sumMid", 1, in)
	if err != nil {
		return nil, err
	}
	if len(s[0]) != 3 {
		return nil, fmt.Errorf("sumMid needs (T, N, o), got %v", s[0])
	}
	return tensor.Shape{s[0][0], s[0][2]}, nil
}

func (op *sumMidOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("sumMid takes 1 input, got %d", len(in))
	}
	x, xs, err := floats(in[0], "sumMid")
	if err != nil {
		return nil, err
	}
	out := op.out.get(tensor.Shape{xs[0], xs[2]}, true)
	o := out.Float64s()
	n, w := xs[1], xs[2]
	for t := 0; t < xs[0]; t++ {
		dst := o[t*w : (t+1)*w]
		for p := 0; p < n; p++ {
			off := (t*n + p) * w
			for i, v := range x[off : off+w] {
				dst[i] += v
			}
		}
	}
	return out, nil
}

func (op *sumMidOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := spreadMid(g, in[0].Shape()[1])
	return gorgonia.Nodes{d}, err
}

// spreadMidOp copies x (T, o) to every one of n points: (T, n, o). Its adjoint
// is sumMidOp.
type spreadMidOp struct {
	opCommon
	n   int
	out outBuf
}

// spreadMid returns x (T, o) repeated over a new middle axis of length n.
func spreadMid(x *gorgonia.Node, n int) (*gorgonia.Node, error) {
	return applyOp(&spreadMidOp{n: n}, x)
}

func (op *spreadMidOp) Arity() int            { return 1 }
func (op *spreadMidOp) Type() hm.Type         { return hm.NewFnType(tensorType(2), tensorType(3)) }
func (op *spreadMidOp) String() string        { return fmt.Sprintf("spreadMid(%d)", op.n) }
func (op *spreadMidOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *spreadMidOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *spreadMidOp) DiffWRT(int) []bool    { return []bool{true} }

func (op *spreadMidOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("spreadMid", 1, in)
	if err != nil {
		return nil, err
	}
	if len(s[0]) != 2 {
		return nil, fmt.Errorf("spreadMid needs (T, o), got %v", s[0])
	}
	return tensor.Shape{s[0][0], op.n, s[0][1]}, nil
}

func (op *spreadMidOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("spreadMid takes 1 input, got %d", len(in))
	}
	x, xs, err := floats(in[0], "spreadMid")
	if err != nil {
		return nil, err
	}
	out := op.out.get(tensor.Shape{xs[0], op.n, xs[1]}, false)
	o := out.Float64s()
	w := xs[1]
	for t := 0; t < xs[0]; t++ {
		for p := 0; p < op.n; p++ {
			copy(o[(t*op.n+p)*w:], x[t*w:(t+1)*w])
		}
	}
	return out, nil
}

func (op *spreadMidOp) SymDiff(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := sumMid(g)
	return gorgonia.Nodes{d}, err
}

// ---------------------------------------------------------------------------
// ReLU.

// reluOp is max(x, 0); its derivative is maskOp.
type reluOp struct {
	opCommon
	dims int
	out  outBuf
}

// relu returns max(x, 0) elementwise.
func relu(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applyOp(&reluOp{dims: x.Dims()}, x)
}

func (op *reluOp) Arity() int            { return 1 }
func (op *reluOp) Type() hm.Type         { return hm.NewFnType(tensorType(op.dims), tensorType(op.dims)) }
func (op *reluOp) String() string        { return "relu" }
func (op *reluOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *reluOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *reluOp) DiffWRT(int) []bool    { return []bool{true} }

func (op *reluOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("relu", 1, in)
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}

func (op *reluOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("relu takes 1 input, got %d", len(in))
	}
	x, xs, err := floats(in[0], "relu")
	if err != nil {
		return nil, err
	}
	out := op.out.get(xs, false)
	o := out.Float64s()
	for i, v := range x {
		o[i] = max(v, 0)
	}
	return out, nil
}

func (op *reluOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := mask(in[0], g)
	return gorgonia.Nodes{d}, err
}

// maskOp passes v where x > 0 and 0 elsewhere: the derivative of ReLU at x
// applied to v. It is linear in v and piecewise constant in x, so x is not
// differentiable (its derivative is 0 almost everywhere).
type maskOp struct {
	opCommon
	dims int
	out  outBuf
}

// mask returns v where x > 0 and 0 elsewhere.
func mask(x, v *gorgonia.Node) (*gorgonia.Node, error) {
	return applyOp(&maskOp{dims: x.Dims()}, x, v)
}

func (op *maskOp) Arity() int { return 2 }
func (op *maskOp) Type() hm.Type {
	t := tensorType(op.dims)
	return hm.NewFnType(t, t, t)
}
func (op *maskOp) String() string        { return "mask" }
func (op *maskOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *maskOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *maskOp) DiffWRT(int) []bool    { return []bool{false, true} }

func (op *maskOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("mask", 2, in)
	if err != nil {
		return nil, err
	}
	if !s[0].Eq(s[1]) {
		return nil, fmt.Errorf("mask needs equal shapes, got %v and %v", s[0], s[1])
	}
	return s[0].Clone(), nil
}

func (op *maskOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("mask takes 2 inputs, got %d", len(in))
	}
	x, xs, err := floats(in[0], "mask")
	if err != nil {
		return nil, err
	}
	v, _, err := floats(in[1], "mask")
	if err != nil {
		return nil, err
	}
	out := op.out.get(xs, false)
	o := out.Float64s()
	v = v[:len(x)]
	for i, xv := range x {
		// Branch-free v[i] if x[i] > 0 else 0 (the signs of pre-activations
		// are unpredictable): bits > 0 as a signed integer means x > 0.
		b := int64(math.Float64bits(xv))
		keep := uint64(-b>>63) &^ uint64(b>>63)
		o[i] = math.Float64frombits(math.Float64bits(v[i]) & keep)
	}
	return out, nil
}

func (op *maskOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := mask(in[0], g)
	return gorgonia.Nodes{nil, d}, err
}

// ---------------------------------------------------------------------------
// Per-task inner products and scalings (the MSE and its derivatives).

// rowDotOp is k times the inner product of every task's slice:
// out[t] = k * sum_i a[t, i] b[t, i] for a, b of shape (T, ...).
type rowDotOp struct {
	opCommon
	k    float64
	dims int
	out  outBuf
}

// rowDot returns k * <a[t], b[t]> for every task t, shape (T).
func rowDot(a, b *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	return applyOp(&rowDotOp{k: k, dims: a.Dims()}, a, b)
}

func (op *rowDotOp) Arity() int { return 2 }
func (op *rowDotOp) Type() hm.Type {
	t := tensorType(op.dims)
	return hm.NewFnType(t, t, tensorType(1))
}
func (op *rowDotOp) String() string        { return fmt.Sprintf("rowDot(%v)", op.k) }
func (op *rowDotOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *rowDotOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *rowDotOp) DiffWRT(int) []bool    { return []bool{true, true} }

func (op *rowDotOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("rowDot", 2, in)
	if err != nil {
		return nil, err
	}
	if !s[0].Eq(s[1]) || len(s[0]) < 2 {
		return nil, fmt.Errorf("rowDot needs equal shapes (T, ...), got %v and %v", s[0], s[1])
	}
	return tensor.Shape{s[0][0]}, nil
}

func (op *rowDotOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("rowDot takes 2 inputs, got %d", len(in))
	}
	a, as, err := floats(in[0], "rowDot")
	if err != nil {
		return nil, err
	}
	b, _, err := floats(in[1], "rowDot")
	if err != nil {
		return nil, err
	}
	out := op.out.get(tensor.Shape{as[0]}, false)
	o := out.Float64s()
	w := len(a) / as[0]
	for t := range o {
		s := 0.0
		bt := b[t*w : (t+1)*w]
		for i, v := range a[t*w : (t+1)*w] {
			s += v * bt[i]
		}
		o[t] = op.k * s
	}
	return out, nil
}

func (op *rowDotOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	da, err := scaleRows(in[1], g, op.k)
	if err != nil {
		return nil, err
	}
	db, err := scaleRows(in[0], g, op.k)
	return gorgonia.Nodes{da, db}, err
}

// scaleRowsOp multiplies every task's slice by k times its own scale:
// out[t, i] = k * s[t] * x[t, i] for x (T, ...) and s (T).
type scaleRowsOp struct {
	opCommon
	k    float64
	dims int
	out  outBuf
}

// scaleRows returns k * s[t] * x[t] for every task t.
func scaleRows(x, s *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	return applyOp(&scaleRowsOp{k: k, dims: x.Dims()}, x, s)
}

func (op *scaleRowsOp) Arity() int { return 2 }
func (op *scaleRowsOp) Type() hm.Type {
	t := tensorType(op.dims)
	return hm.NewFnType(t, tensorType(1), t)
}
func (op *scaleRowsOp) String() string        { return fmt.Sprintf("scaleRows(%v)", op.k) }
func (op *scaleRowsOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *scaleRowsOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *scaleRowsOp) DiffWRT(int) []bool    { return []bool{true, true} }

func (op *scaleRowsOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("scaleRows", 2, in)
	if err != nil {
		return nil, err
	}
	if len(s[0]) < 2 || len(s[1]) != 1 || s[0][0] != s[1][0] {
		return nil, fmt.Errorf("scaleRows needs (T, ...) and (T), got %v and %v", s[0], s[1])
	}
	return s[0].Clone(), nil
}

func (op *scaleRowsOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("scaleRows takes 2 inputs, got %d", len(in))
	}
	x, xs, err := floats(in[0], "scaleRows")
	if err != nil {
		return nil, err
	}
	s, _, err := floats(in[1], "scaleRows")
	if err != nil {
		return nil, err
	}
	out := op.out.get(xs, false)
	o := out.Float64s()
	w := len(x) / xs[0]
	for t, st := range s {
		c := op.k * st
		dst := o[t*w : (t+1)*w]
		for i, v := range x[t*w : (t+1)*w] {
			dst[i] = c * v
		}
	}
	return out, nil
}

func (op *scaleRowsOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := scaleRows(g, in[1], op.k)
	if err != nil {
		return nil, err
	}
	ds, err := rowDot(g, in[0], op.k)
	return gorgonia.Nodes{dx, ds}, err
}

// ---------------------------------------------------------------------------
// The SGD step.

// axpyOp is x + k*y for x and y of one shape: the inner SGD step
// theta - alpha*grad with k = -alpha.
type axpyOp struct {
	opCommon
	k    float64
	dims int
	out  outBuf
}

// axpy returns x + k*y.
func axpy(x, y *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	return applyOp(&axpyOp{k: k, dims: x.Dims()}, x, y)
}

func (op *axpyOp) Arity() int { return 2 }
func (op *axpyOp) Type() hm.Type {
	t := tensorType(op.dims)
	return hm.NewFnType(t, t, t)
}
func (op *axpyOp) String() string        { return fmt.Sprintf("axpy(%v)", op.k) }
func (op *axpyOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *axpyOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *axpyOp) DiffWRT(int) []bool    { return []bool{true, true} }

func (op *axpyOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("axpy", 2, in)
	if err != nil {
		return nil, err
	}
	if !s[0].Eq(s[1]) {
		return nil, fmt.Errorf("axpy needs equal shapes, got %v and %v", s[0], s[1])
	}
	return s[0].Clone(), nil
}

func (op *axpyOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("axpy takes 2 inputs, got %d", len(in))
	}
	x, xs, err := floats(in[0], "axpy")
	if err != nil {
		return nil, err
	}
	y, _, err := floats(in[1], "axpy")
	if err != nil {
		return nil, err
	}
	out := op.out.get(xs, false)
	o := out.Float64s()
	for i, v := range x {
		o[i] = v + op.k*y[i]
	}
	return out, nil
}

func (op *axpyOp) SymDiff(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dy, err := scale(g, op.k)
	return gorgonia.Nodes{g, dy}, err
}

// scaleOp is k*x.
type scaleOp struct {
	opCommon
	k    float64
	dims int
	out  outBuf
}

// scale returns k*x.
func scale(x *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	return applyOp(&scaleOp{k: k, dims: x.Dims()}, x)
}

func (op *scaleOp) Arity() int            { return 1 }
func (op *scaleOp) Type() hm.Type         { return hm.NewFnType(tensorType(op.dims), tensorType(op.dims)) }
func (op *scaleOp) String() string        { return fmt.Sprintf("scale(%v)", op.k) }
func (op *scaleOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *scaleOp) Hashcode() uint32      { return hashString(op.String()) }
func (op *scaleOp) DiffWRT(int) []bool    { return []bool{true} }

func (op *scaleOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("scale", 1, in)
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}

func (op *scaleOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("scale takes 1 input, got %d", len(in))
	}
	x, xs, err := floats(in[0], "scale")
	if err != nil {
		return nil, err
	}
	out := op.out.get(xs, false)
	o := out.Float64s()
	for i, v := range x {
		o[i] = op.k * v
	}
	return out, nil
}

func (op *scaleOp) SymDiff(_ gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := scale(g, op.k)
	return gorgonia.Nodes{d}, err
}

// ---------------------------------------------------------------------------
// Sums of gradient terms.

// addNOp adds any number of float64 tensors of one shape. Graph.Grad sums
// the gradient terms of a node with it: gorgonia's ReduceAdd chains binary
// Adds, each a separate node that allocates its result on every run. Its
// derivative passes the upstream gradient to every input unchanged.
type addNOp struct {
	opCommon
	n, dims int
	out     outBuf
}

// sumTerms returns the sum of terms: one addNOp node when all are float64
// tensors of one shape, gorgonia's ReduceAdd otherwise.
func sumTerms(terms gorgonia.Nodes) (*gorgonia.Node, error) {
	s := terms[0].Shape()
	for _, t := range terms {
		if t.Dtype() != tensor.Float64 || t.Dims() == 0 || !t.Shape().Eq(s) {
			return gorgonia.ReduceAdd(terms)
		}
	}
	return applyOp(&addNOp{n: len(terms), dims: len(s)}, terms...)
}

func (op *addNOp) Arity() int { return op.n }
func (op *addNOp) Type() hm.Type {
	ts := make(hm.Types, op.n+1)
	for i := range ts {
		ts[i] = tensorType(op.dims)
	}
	return hm.NewFnType(ts...)
}
func (op *addNOp) String() string        { return fmt.Sprintf("addN(%d)", op.n) }
func (op *addNOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *addNOp) Hashcode() uint32      { return hashString(op.String()) }

func (op *addNOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *addNOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf("addN", op.n, in)
	if err != nil {
		return nil, err
	}
	for _, si := range s[1:] {
		if !si.Eq(s[0]) {
			return nil, fmt.Errorf("addN needs equal shapes, got %v", s)
		}
	}
	return s[0].Clone(), nil
}

func (op *addNOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != op.n || op.n < 2 {
		return nil, fmt.Errorf("addN(%d) got %d inputs", op.n, len(in))
	}
	x0, xs, err := floats(in[0], "addN")
	if err != nil {
		return nil, err
	}
	x1, _, err := floats(in[1], "addN")
	if err != nil {
		return nil, err
	}
	out := op.out.get(xs, false)
	o := out.Float64s()
	vecf.AddTo(o, x0, x1)
	for _, v := range in[2:] {
		x, _, err := floats(v, "addN")
		if err != nil {
			return nil, err
		}
		vecf.Add(o, x)
	}
	return out, nil
}

func (op *addNOp) SymDiff(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d := make(gorgonia.Nodes, len(in))
	for i := range d {
		d[i] = g
	}
	return d, nil
}
