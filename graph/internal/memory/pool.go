// Package memory holds the graphs' large values: a pool that recycles the
// ops' output tensors by size within and between programs, and scratch
// buffers for the kernels, both mapped outside Go's heap so that the
// garbage collector's target does not grow with them.
package memory

import (
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"gorgonia.org/tensor"
)

// Float is the element type of the buffers.
type Float interface{ ~float32 | ~float64 }

// Pool recycles tensors by dtype and size between the ops of one compiled
// graph, so that the peak memory of a run is that of the values alive at
// once, not of all values. A nil pool allocates on Go's heap. Graphs that
// share a pool (graph.Objective.ShareBuffers, lanes) may run at the same
// time.
//
// The pool's own float buffers live outside Go's heap (offHeap): the
// pool, not the garbage collector, manages them, and the collector's target
// (a percentage of the live heap) would otherwise grow with the
// activations, leaving room for tens of megabytes of garbage beside a graph
// of a few hundred.
type Pool struct {
	mu   sync.Mutex
	free map[poolKey][]*tensor.Dense
	// lent maps the views handed out by borrow to the buffer they are part
	// of; open are the lendings with room left at their end.
	lent map[*tensor.Dense]*lending
	open []*lending
	// bytes is the memory of every buffer the pool has allocated; it
	// releases none, so this is its peak.
	bytes int64
}

type poolKey struct {
	dtype tensor.Dtype
	size  int
}

// NewPool returns an empty pool.
func NewPool() *Pool {
	return &Pool{free: map[poolKey][]*tensor.Dense{}, lent: map[*tensor.Dense]*lending{}}
}

// lending is a buffer whose consecutive parts are lent to borrowing ops:
// the lanes of an evaluation, whose graphs hold half the tasks of
// training's (or fewer), fit two (or more) of their values into one of
// training's buffers. It goes back to the free buffers when every part has
// come back.
type lending struct {
	whole *tensor.Dense
	used  int // values lent from the beginning, each part aligned to 16
	views int // parts not yet returned
}

// Get returns a free buffer of shape's size, or a new one. With borrow > 0
// it lends, instead of allocating, a part of a larger buffer: the room left
// in one already partly lent, else the beginning of the smallest larger
// free buffer, else of a new buffer of borrow values if that is larger. The
// ops of an objective that shares another's pool (ShareBuffers) borrow,
// and borrow is the size of their value in a graph of all their
// objective's tasks: an evaluation in lanes, whose graphs hold fewer tasks
// than training's, then runs in training's buffers when training ran
// first, and allocates buffers that training's graph takes over when it
// runs first.
func (p *Pool) Get(dt tensor.Dtype, shape tensor.Shape, borrow int) *tensor.Dense {
	if p == nil {
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.Of(dt))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := poolKey{dt, shape.TotalSize()}
	if t := p.take(key); t != nil {
		if err := t.Reshape(shape...); err == nil {
			return t
		}
	}
	if borrow <= 0 {
		return p.alloc(dt, shape)
	}
	if t := p.borrow(key, shape); t != nil {
		return t
	}
	if borrow <= key.size {
		return p.alloc(dt, shape)
	}
	p.free[poolKey{dt, borrow}] = append(p.free[poolKey{dt, borrow}], p.alloc(dt, tensor.Shape{borrow}))
	return p.borrow(key, shape)
}

// take removes a free buffer of key from the pool, or returns nil.
func (p *Pool) take(key poolKey) *tensor.Dense {
	l := p.free[key]
	if len(l) == 0 {
		return nil
	}
	t := l[len(l)-1]
	p.free[key] = l[:len(l)-1]
	return t
}

// borrow lends a part of shape's size of an open lending with room enough,
// else of the smallest larger free buffer, or returns nil.
func (p *Pool) borrow(key poolKey, shape tensor.Shape) *tensor.Dense {
	var to *lending
	for _, l := range p.open {
		if l.whole.Dtype() == key.dtype && l.whole.Shape().TotalSize()-l.used >= key.size {
			to = l
			break
		}
	}
	if to == nil {
		best := poolKey{}
		for k, l := range p.free {
			if k.dtype == key.dtype && k.size > key.size && len(l) > 0 && (best.size == 0 || k.size < best.size) {
				best = k
			}
		}
		if best.size == 0 {
			return nil
		}
		to = &lending{whole: p.take(best)}
		p.open = append(p.open, to)
	}
	var view *tensor.Dense
	from, end := to.used, to.used+key.size
	switch d := to.whole.Data().(type) {
	case []float32:
		view = tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(d[from:end:end]))
	case []float64:
		view = tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(d[from:end:end]))
	}
	to.used, to.views = (end+15)&^15, to.views+1
	p.lent[view] = to
	return view
}

// alloc returns a new buffer of shape and counts it.
func (p *Pool) alloc(dt tensor.Dtype, shape tensor.Shape) *tensor.Dense {
	var t *tensor.Dense
	switch dt {
	case tensor.Float32:
		t = offHeap[float32](shape)
	case tensor.Float64:
		t = offHeap[float64](shape)
	}
	if t == nil {
		t = tensor.New(tensor.WithShape(shape.Clone()...), tensor.Of(dt))
	}
	p.bytes += int64(t.MemSize())
	return t
}

// offHeap returns a zeroed tensor of shape backed by memory mapped
// outside Go's heap, unmapped once the tensor is unreachable, or nil if
// the mapping fails. Nothing may keep a slice of its data beyond the
// tensor itself: the collector does not see such a slice.
func offHeap[E float32 | float64](shape tensor.Shape) *tensor.Dense {
	data, mem := mapFloats[E](shape.TotalSize())
	if mem == nil {
		return nil
	}
	t := tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(data))
	runtime.AddCleanup(t, unmapMemory, mem)
	return t
}

// mapFloats returns n zeros mapped outside Go's heap and the mapping,
// which unmapMemory releases, or nil and nil if the mapping fails.
func mapFloats[E Float](n int) ([]E, []byte) {
	mem, ok := mapMemory(n * int(unsafe.Sizeof(E(0))))
	if !ok {
		return nil, nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(mem))), n), mem
}

// Put hands t back: a lent part returns its buffer once the buffer's other
// parts are back too.
func (p *Pool) Put(t *tensor.Dense) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.lent[t]; ok {
		delete(p.lent, t)
		if l.views--; l.views > 0 {
			return
		}
		p.open = slices.DeleteFunc(p.open, func(o *lending) bool { return o == l })
		t = l.whole
	}
	key := poolKey{t.Dtype(), t.Shape().TotalSize()}
	p.free[key] = append(p.free[key], t)
}

// Bytes is the memory of every buffer the pool has allocated: it releases
// none, so this is its peak.
func (p *Pool) Bytes() int64 { return p.bytes }

// Absorb moves the free buffers of from, and its count of bytes, into p:
// from's ops take their buffers from p from now on.
func (p *Pool) Absorb(from *Pool) {
	for k, l := range from.free {
		p.free[k] = append(p.free[k], l...)
	}
	p.bytes += from.bytes
}

// Free lists the buffers in the pool, not lent to an op at the moment.
func (p *Pool) Free() []*tensor.Dense {
	var all []*tensor.Dense
	for _, l := range p.free {
		all = append(all, l...)
	}
	return all
}
