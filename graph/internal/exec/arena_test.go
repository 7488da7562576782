package exec

import (
	"fmt"
	"hash"
	"hash/fnv"
	"testing"

	"github.com/chewxy/hm"
	"github.com/trmaml/trmaml/graph/internal/memory"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// revOp is a Pooled op of n values: 1 plus the sum of its inputs read
// backwards. Written into memory it shares with an input, it would read
// the values it has already written, so its results tell whether the
// program placed a value over one still alive.
type revOp struct {
	name   string
	arity  int
	n      int
	dt     tensor.Dtype
	arena  *memory.Arena
	off    int
	buf    *tensor.Dense
	placed bool     // UseArena was called
	from   []*revOp // the ops of its inputs (nil for leaves)
}

func (o *revOp) Arity() int { return o.arity }
func (o *revOp) Type() hm.Type {
	ts := make(hm.Types, o.arity+1)
	for i := range ts {
		ts[i] = gorgonia.TensorType{Dims: 1, Of: hm.TypeVariable('a')}
	}
	return hm.NewFnType(ts...)
}
func (o *revOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n}, nil
}
func (o *revOp) ReturnsPtr() bool      { return false }
func (o *revOp) CallsExtern() bool     { return false }
func (o *revOp) OverwritesInput() int  { return -1 }
func (o *revOp) WriteHash(h hash.Hash) { h.Write([]byte(o.name)) }
func (o *revOp) Hashcode() uint32      { h := fnv.New32a(); o.WriteHash(h); return h.Sum32() }
func (o *revOp) String() string        { return o.name }
func (o *revOp) OutSize() int          { return o.n }
func (o *revOp) OutDtype() tensor.Dtype {
	return o.dt
}
func (o *revOp) UseArena(a *memory.Arena, off int) { o.arena, o.off, o.placed = a, off, true }
func (o *revOp) Release() {
	o.arena.Put()
	o.buf = nil
}

func (o *revOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	for _, f := range o.from {
		if f != nil && f.buf == nil {
			return nil, fmt.Errorf("%s reads %s, released before its last reader", o.name, f.name)
		}
	}
	if o.buf == nil {
		if o.arena != nil {
			o.buf = o.arena.Get(o.off, tensor.Shape{o.n})
		} else {
			o.buf = tensor.New(tensor.WithShape(o.n), tensor.Of(o.dt))
		}
	}
	switch out := o.buf.Data().(type) {
	case []float64:
		reverseSum(out, in)
	case []float32:
		reverseSum(out, in)
	}
	return o.buf, nil
}

func reverseSum[T float32 | float64](out []T, in []gorgonia.Value) {
	for i := range out {
		s := T(1)
		for _, v := range in {
			s += v.Data().([]T)[len(out)-1-i]
		}
		out[i] = s
	}
}

// TestCompileArenas: the large values of Pooled ops that only Pooled ops
// read and that are no output live in one arena per dtype, each alive from
// its step to its last reader and placed over no value alive then (the
// ops' results are those of plain slices, twice in a row, and no value is
// released before its last reader); outputs, values a gorgonia op reads
// and small values keep buffers of their own, and every arena's buffer is
// back in the pool after a run.
func TestCompileArenas(t *testing.T) {
	const n = PooledSize
	g := gorgonia.NewGraph()
	ops := map[string]*revOp{}
	leaf := func(name string, dt tensor.Dtype, size int) (*gorgonia.Node, []float64) {
		v := make([]float64, size)
		for i := range v {
			v[i] = float64(i%7) - 3
		}
		var val *tensor.Dense
		if dt == tensor.Float32 {
			f := make([]float32, size)
			for i, x := range v {
				f[i] = float32(x)
			}
			val = tensor.New(tensor.WithBacking(f))
		} else {
			val = tensor.New(tensor.WithBacking(append([]float64(nil), v...)))
		}
		return gorgonia.NewVector(g, dt, gorgonia.WithShape(size), gorgonia.WithName(name), gorgonia.WithValue(val)), v
	}
	want := map[string][]float64{}
	rev := func(name string, in ...*gorgonia.Node) *gorgonia.Node {
		o := &revOp{name: name, arity: len(in), n: in[0].Shape().TotalSize(), dt: in[0].Dtype()}
		for _, c := range in {
			o.from = append(o.from, ops[c.Name()])
		}
		ops[name] = o
		node, err := gorgonia.ApplyOpWithName(o, name, in...)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, o.n)
		for i := range w {
			w[i] = 1
			for _, c := range in {
				w[i] += want[c.Name()][o.n-1-i]
			}
		}
		want[name] = w
		return node
	}
	x, xv := leaf("x", tensor.Float64, n)
	y, yv := leaf("y", tensor.Float32, n)
	s, sv := leaf("s", tensor.Float64, 4)
	want["x"], want["y"], want["s"] = xv, yv, sv
	// Steps: a b c d e (e reads b and d); f, its Sum, then g reading f; p
	// r (an output) q; small tiny.
	a := rev("a", x)
	b := rev("b", a)
	c := rev("c", a, b)
	d := rev("d", c)
	e := rev("e", b, d)
	f := rev("f", d)
	sum := gorgonia.Must(gorgonia.Sum(f))
	r := rev("r", rev("p", y))
	q := rev("q", r)
	tiny := rev("tiny", rev("small", s))
	outputs := gorgonia.Nodes{e, sum, rev("g", f), r, q, tiny}
	p, idx := Compile(g, outputs)

	inArena := map[string]bool{"a": true, "b": true, "c": true, "d": true, "p": true}
	for name, o := range ops {
		if o.placed != inArena[name] {
			t.Errorf("value %s in an arena: %v, want %v", name, o.placed, inArena[name])
		}
	}
	if len(p.Arenas) != 2 || p.Arenas[0].Dtype() != tensor.Float64 || p.Arenas[1].Dtype() != tensor.Float32 {
		t.Fatalf("arenas %v, want one of float64, then one of float32", p.Arenas)
	}
	if got := p.Arenas[0].Size(); got != 3*n {
		t.Errorf("float64 arena of %d values, want %d (a, b and c alive at c's step)", got, 3*n)
	}
	for run := range 2 {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		for k, out := range outputs {
			name := out.Name()
			if out == sum {
				continue
			}
			got := p.Vals[idx[k]].(*tensor.Dense)
			for i, w := range want[name] {
				var v float64
				if d, ok := got.Data().([]float32); ok {
					v = float64(d[i])
				} else {
					v = got.Float64s()[i]
				}
				if v != w {
					t.Fatalf("run %d: %s[%d] = %v, want %v", run, name, i, v, w)
				}
			}
		}
		if got, w := p.Vals[idx[1]].Data(), total(want["f"]); got != w {
			t.Errorf("run %d: sum of f %v, want %v", run, got, w)
		}
		if free := p.Pool.Free(); len(free) != 2 {
			t.Errorf("run %d: %d free buffers in the pool after the run, want the 2 arenas'", run, len(free))
		}
	}
}

// total is the sum of v.
func total(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
