package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"github.com/trmaml/trmaml/graph/internal/exec"
	"github.com/trmaml/trmaml/graph/internal/memory"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The project's own ops. gorgonia's stock ops are slow on task-batched graphs
// (allocation per run, broadcasts built from copies) and several of their
// derivatives break under double differentiation (see grad.go). An op here is
// a kernel: its output shape, its forward computation and its derivative,
// side by side, where the derivative is built from ops of this package only,
// so derivatives of derivatives stay exact. The files ops_*.go group the
// kernels by family; TestOpsNestedFiniteDifferences checks every one.
//
// A kernel is wrapped in op, which implements gorgonia's Op interface once for
// all kernels. Each op belongs to one node. A small output stays the op's
// between runs; a large one lives at its place in the program's arena
// (graph/internal/exec) from its step to its last reader, and the op takes
// it from the arena again on its next run. Nothing writes into an op's
// input (no kernel here or gorgonia op in our graphs overwrites its inputs).

// kernel is the math of one op.
type kernel interface {
	// name identifies the op and its parameters: gorgonia merges nodes with
	// equal names and inputs.
	name() string
	// shape returns the output shape for the given input shapes.
	shape(in []tensor.Shape) (tensor.Shape, error)
	// forward writes the output for the inputs of a into its output, which
	// holds stale values (usually through call, from one generic function
	// for both float types).
	forward(a *args)
	// grad returns, for every input, the node of the gradient of a scalar
	// cost given the node g of its gradient with respect to the output out;
	// nil for inputs the kernel declares non-differentiable.
	grad(in gorgonia.Nodes, out, g *gorgonia.Node) (gorgonia.Nodes, error)
}

// partial is implemented by kernels with inputs that carry no gradient (a
// mask, an argmax, a stop-gradient).
type partial interface {
	differentiable() []bool
}

// op implements gorgonia.Op and gorgonia.SDOp for a kernel.
type op struct {
	k        kernel
	dtype    tensor.Dtype // of every input and the output
	inShapes []tensor.Shape
	outShape tensor.Shape
	buf      *tensor.Dense // the output of the last run; nil when released
	arena    *memory.Arena // where the output lives, if planned
	off      int           // the output's place in arena
	a        args          // scratch for Do
}

// float is the element type of the tensors of an op: float64 for
// finite-difference tests and small models, float32 for speed.
type float interface{ ~float32 | ~float64 }

// args are the inputs and output of one kernel call, in one of the two
// dtypes (the slices of the other are nil).
type args struct {
	// piece is tuning.elemsPiece of the op's program (parallelElems).
	piece int
	s     []tensor.Shape
	o64   []float64
	i64   [][]float64
	o32   []float32
	i32   [][]float32
}

// call runs the float64 or the float32 instance of a kernel's generic
// forward function on a.
func call[K any](a *args, k K, f64 func(K, []float64, [][]float64, []tensor.Shape), f32 func(K, []float32, [][]float32, []tensor.Shape)) {
	if a.o32 != nil {
		f32(k, a.o32, a.i32, a.s)
		return
	}
	f64(k, a.o64, a.i64, a.s)
}

// apply adds the node k(in...) to the graph of in. It checks the shapes now,
// and that gorgonia did not merge the new node into an existing node with
// other inputs: gorgonia identifies nodes by a 32-bit hash, and a collision
// would silently share one node (and one output buffer) between two
// computations.
func apply(k kernel, in ...*gorgonia.Node) (*gorgonia.Node, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("graph: %s: no inputs", k.name())
	}
	for i, n := range in {
		if n == nil {
			return nil, fmt.Errorf("graph: %s: input %d is missing", k.name(), i)
		}
	}
	o := &op{k: k, dtype: in[0].Dtype()}
	for _, n := range in {
		if n.Dtype() != o.dtype || (o.dtype != tensor.Float64 && o.dtype != tensor.Float32) {
			return nil, fmt.Errorf("graph: %s: input %q is %v, want float64 or float32 like the first input (%v)", k.name(), n.Name(), n.Dtype(), o.dtype)
		}
		o.inShapes = append(o.inShapes, n.Shape().Clone())
	}
	o.a.s = o.inShapes
	if o.dtype == tensor.Float64 {
		o.a.i64 = make([][]float64, len(in))
	} else {
		o.a.i32 = make([][]float32, len(in))
	}
	var err error
	if o.outShape, err = k.shape(o.inShapes); err != nil {
		return nil, fmt.Errorf("graph: %s: %w", k.name(), err)
	}
	n, err := gorgonia.ApplyOp(o, in...)
	if err != nil {
		return nil, err
	}
	it := n.Graph().From(n.ID())
	same := it.Len() == len(in)
	for i := 0; same && it.Next(); i++ {
		same = it.Node() == in[i]
	}
	if !same {
		return nil, fmt.Errorf("graph: node for %s was merged into node %q with other inputs (hash collision)", k.name(), n.Name())
	}
	return n, nil
}

func (o *op) Arity() int { return len(o.inShapes) }

func (o *op) Type() hm.Type {
	ts := make(hm.Types, 0, len(o.inShapes)+1)
	for _, s := range o.inShapes {
		ts = append(ts, tensorType(len(s)))
	}
	return hm.NewFnType(append(ts, tensorType(len(o.outShape)))...)
}

func tensorType(dims int) gorgonia.TensorType {
	return gorgonia.TensorType{Dims: dims, Of: hm.TypeVariable('a')}
}

func (o *op) String() string        { return o.k.name() }
func (o *op) WriteHash(h hash.Hash) { h.Write([]byte(o.k.name())) }
func (o *op) ReturnsPtr() bool      { return false }
func (o *op) CallsExtern() bool     { return false }
func (o *op) OverwritesInput() int  { return -1 }
func (o *op) Hashcode() uint32      { h := fnv.New32a(); o.WriteHash(h); return h.Sum32() }

func (o *op) DiffWRT(n int) []bool {
	if p, ok := o.k.(partial); ok {
		return p.differentiable()
	}
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (o *op) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(in) != len(o.inShapes) {
		return nil, fmt.Errorf("%s takes %d inputs, got %d", o.k.name(), len(o.inShapes), len(in))
	}
	for i, d := range in {
		if s, ok := d.(tensor.Shape); !ok || !s.Eq(o.inShapes[i]) {
			return nil, fmt.Errorf("%s: input %d has shape %v, the op was built for %v", o.k.name(), i, d, o.inShapes[i])
		}
	}
	return o.outShape.Clone(), nil
}

func (o *op) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != len(o.inShapes) {
		return nil, fmt.Errorf("%s takes %d inputs, got %d", o.k.name(), len(o.inShapes), len(in))
	}
	for i, v := range in {
		t, ok := v.(*tensor.Dense)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: input %d is %T, not a dense tensor", o.k.name(), i, v)
		case t.Dtype() != o.dtype:
			return nil, fmt.Errorf("%s: input %d is %v, the op was built for %v", o.k.name(), i, t.Dtype(), o.dtype)
		case !t.Shape().Eq(o.inShapes[i]):
			return nil, fmt.Errorf("%s: input %d has shape %v, the op was built for %v", o.k.name(), i, t.Shape(), o.inShapes[i])
		case !t.DataOrder().IsRowMajor() || t.RequiresIterator():
			return nil, fmt.Errorf("%s: input %d is not a contiguous row-major tensor", o.k.name(), i)
		}
		// Float64s, unlike Data, does not box the slice (an allocation).
		if o.a.i64 != nil {
			o.a.i64[i] = t.Float64s()
		} else {
			o.a.i32[i] = t.Float32s()
		}
	}
	if o.buf == nil {
		if o.arena != nil {
			o.buf = o.arena.Get(o.off, o.outShape)
		} else {
			o.buf = tensor.New(tensor.WithShape(o.outShape.Clone()...), tensor.Of(o.dtype))
		}
	}
	if o.a.i64 != nil {
		o.a.o64 = o.buf.Float64s()
	} else {
		o.a.o32 = o.buf.Float32s()
	}
	o.k.forward(&o.a)
	clear(o.a.i64)
	clear(o.a.i32)
	o.a.o64, o.a.o32 = nil, nil
	return o.buf, nil
}

// flops is the work of a product or convolution op, 0 for the others. A
// convolution counts as its im2col product even where it runs as Winograd's
// (winograd.go), with up to 2.25 times fewer multiplications: FLOPs per
// second are then effective ones, comparable across builds and with other
// implementations of the same convolutions. For the same reason convBlock
// counts as the convolution of the block it computes, convBlockBack and
// convKBNBack as the product for the kernels' gradient (convK) they
// replace.
func (o *op) flops() float64 {
	switch k := o.k.(type) {
	case bmmKernel:
		m, kk, n := k.dims(o.inShapes[0], o.inShapes[1])
		return 2 * float64(o.inShapes[0][0]*m*kk*n)
	case convKernel, convTKernel, convKKernel, convKBNBackKernel, convBlockKernel, convBlockBackKernel:
		// Every one is a (pixels x 9C) by (9C x F) product per task.
		var g convGeom
		switch k := k.(type) {
		case convKernel:
			g = k.g
		case convTKernel:
			g = k.g
		case convKKernel:
			g = k.g
		case convKBNBackKernel:
			g = k.g
		case convBlockKernel:
			g = k.g
		case convBlockBackKernel:
			g = k.g
		}
		f := o.outShape[2]
		if _, ok := k.(convTKernel); ok {
			f = o.inShapes[0][2]
		}
		return 2 * float64(g.x[0]*g.pixelsPerTask()*9*g.C*f)
	}
	return 0
}

// The program (graph/internal/exec) places the outputs of large ops in arenas.
var _ exec.Pooled = (*op)(nil)

// OutSize implements exec.Pooled: the values of the output.
func (o *op) OutSize() int { return o.outShape.TotalSize() }

// OutDtype implements exec.Pooled.
func (o *op) OutDtype() tensor.Dtype { return o.dtype }

// UseArena implements exec.Pooled.
func (o *op) UseArena(a *memory.Arena, off int) { o.arena, o.off = a, off }

// Release implements exec.Pooled: it hands the output back to the arena,
// its last reader in this run being done. The next Do takes it from the
// arena again.
func (o *op) Release() {
	if o.arena != nil && o.buf != nil {
		o.arena.Put()
		o.buf = nil
	}
}

func (o *op) SymDiff(in gorgonia.Nodes, out, g *gorgonia.Node) (gorgonia.Nodes, error) {
	return o.k.grad(in, out, g)
}

// shapeErr formats a shape mismatch for kernel.shape.
func shapeErr(want string, in []tensor.Shape) error {
	return fmt.Errorf("needs %s, got %v", want, in)
}
