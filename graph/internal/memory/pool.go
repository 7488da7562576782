// Package memory holds the graphs' large values: Plan places a program's
// values in one arena per dtype by their lifetimes, a pool lends the
// arenas' buffers within and between programs, and scratch buffers serve
// the kernels, all mapped outside Go's heap so that the garbage
// collector's target does not grow with them.
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

// Pool recycles the buffers of programs' arenas (Arena) by dtype and size,
// within and between programs, so that the peak memory of a run is that of
// the values alive at once, not of all values. Graphs that share a pool
// (graph.Objective.ShareBuffers, lanes, task groups) may run at the same
// time.
//
// The pool's float buffers live outside Go's heap (offHeap): the pool, not
// the garbage collector, manages them, and the collector's target (a
// percentage of the live heap) would otherwise grow with the activations,
// leaving room for tens of megabytes of garbage beside a graph of a few
// hundred.
type Pool struct {
	mu   sync.Mutex
	free map[poolKey][]*tensor.Dense
	// lent maps the parts handed out by lend to the buffer they are part
	// of; open are the lendings with room left at their end.
	lent map[*tensor.Dense]*lending
	open []*lending
	// mapped are the buffers mapped outside Go's heap, to unmap when the
	// pool drops one; bytes is the memory of the buffers the pool holds,
	// peak the most it has held at once.
	mapped      map[*tensor.Dense]mapping
	bytes, peak int64
}

type poolKey struct {
	dtype tensor.Dtype
	size  int
}

// mapping is the memory behind an off-heap buffer and the cleanup that
// unmaps it once the buffer is unreachable.
type mapping struct {
	mem     []byte
	cleanup runtime.Cleanup
}

// NewPool returns an empty pool.
func NewPool() *Pool {
	return &Pool{free: map[poolKey][]*tensor.Dense{}, lent: map[*tensor.Dense]*lending{}, mapped: map[*tensor.Dense]mapping{}}
}

// lending is a buffer whose consecutive parts are lent: the arenas of an
// evaluation's lanes, whose graphs hold half the tasks of training's (or
// fewer), fit two (or more) into training's arena. It goes back to the
// free buffers when every part has come back.
type lending struct {
	whole *tensor.Dense
	used  int // values lent from the beginning, each part aligned
	views int // parts not yet returned
}

// Get returns a buffer of n values of dt: a free one of that size, else a
// part of a larger one (the room left in one already partly lent, else the
// beginning of the smallest larger free buffer), else a new one. A new
// buffer replaces the free ones of dt, all smaller: the pool holds the
// largest buffers its programs need, not one of every size it was asked
// for. So an evaluation whose lanes ran first, in buffers of their size,
// hands them over to the larger arena of the training graph sharing the
// pool (graph.Objective.ShareBuffers), and later runs in training's.
func (p *Pool) Get(dt tensor.Dtype, n int) *tensor.Dense {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := poolKey{dt, n}
	if t := p.take(key); t != nil {
		return t
	}
	if t := p.lend(key); t != nil {
		return t
	}
	for k, l := range p.free {
		if k.dtype == dt {
			for _, t := range l {
				p.drop(t)
			}
			delete(p.free, k)
		}
	}
	return p.alloc(dt, n)
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

// lend lends a part of key's size of an open lending with room enough,
// else of the smallest larger free buffer, or returns nil.
func (p *Pool) lend(key poolKey) *tensor.Dense {
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
		view = tensor.New(tensor.WithShape(key.size), tensor.WithBacking(d[from:end:end]))
	case []float64:
		view = tensor.New(tensor.WithShape(key.size), tensor.WithBacking(d[from:end:end]))
	}
	to.used, to.views = roundUp(end), to.views+1
	p.lent[view] = to
	return view
}

// alloc returns a new buffer of n values of dt and counts it.
func (p *Pool) alloc(dt tensor.Dtype, n int) *tensor.Dense {
	var t *tensor.Dense
	var m mapping
	switch dt {
	case tensor.Float32:
		t, m = offHeap[float32](n)
	case tensor.Float64:
		t, m = offHeap[float64](n)
	}
	if t == nil {
		t = tensor.New(tensor.WithShape(n), tensor.Of(dt))
	} else {
		p.mapped[t] = m
	}
	p.bytes += int64(t.MemSize())
	p.peak = max(p.peak, p.bytes)
	return t
}

// drop forgets the free buffer t and unmaps its memory if it is mapped:
// nothing may hold a part of it.
func (p *Pool) drop(t *tensor.Dense) {
	p.bytes -= int64(t.MemSize())
	if m, ok := p.mapped[t]; ok {
		delete(p.mapped, t)
		m.cleanup.Stop()
		unmapMemory(m.mem)
	}
}

// offHeap returns a zeroed tensor of n values backed by memory mapped
// outside Go's heap, unmapped once the tensor is unreachable unless the
// mapping's cleanup is stopped first, or nil if the mapping fails. Nothing
// may keep a slice of its data beyond the tensor itself: the collector
// does not see such a slice.
func offHeap[E float32 | float64](n int) (*tensor.Dense, mapping) {
	data, mem := mapFloats[E](n)
	if mem == nil {
		return nil, mapping{}
	}
	t := tensor.New(tensor.WithShape(n), tensor.WithBacking(data))
	return t, mapping{mem, runtime.AddCleanup(t, unmapMemory, mem)}
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

// Bytes is the most memory the pool's buffers have held at once.
func (p *Pool) Bytes() int64 { return p.peak }

// Absorb moves the buffers of from, and its counts of bytes, into p:
// from's arenas take their buffers from p from now on.
func (p *Pool) Absorb(from *Pool) {
	for k, l := range from.free {
		p.free[k] = append(p.free[k], l...)
	}
	for t, m := range from.mapped {
		p.mapped[t] = m
	}
	p.bytes += from.bytes
	p.peak += from.peak
}

// Free lists the buffers in the pool, not lent to an op at the moment.
func (p *Pool) Free() []*tensor.Dense {
	var all []*tensor.Dense
	for _, l := range p.free {
		all = append(all, l...)
	}
	return all
}
