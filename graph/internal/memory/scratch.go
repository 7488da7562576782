package memory

import "sync"

// Scratch keeps scratch buffers of both float types for reuse. Unlike
// a sync.Pool it keeps them across garbage collections: trmaml runs the
// collector at GOGC=5, which collects every batch or two, and a sync.Pool
// emptied that often had the convolutions allocate their megabytes of
// scratch again and fault its pages in (an evaluation spent a tenth of its
// time in the kernel). It holds at most one buffer per goroutine that used
// one at once, each as large as the largest use so far, mapped outside Go's
// heap like the graph's buffers (Pool), so that they do not raise
// the collector's target.
type Scratch struct {
	mu   sync.Mutex
	free []any // *Buf[float32] and *Buf[float64]
}

// Buf is a buffer of a Scratch.
type Buf[T Float] struct {
	data   []T
	mapped []byte // the mapping behind data, nil if data is on Go's heap
}

// Take returns n values of a free buffer of p, or of a new one
// (replacing a free one too small: the buffers grow to the largest use),
// and the buffer to put back.
func Take[T Float](p *Scratch, n int) (*Buf[T], []T) {
	var bp, drop *Buf[T]
	p.mu.Lock()
	at := -1
	for i, b := range p.free {
		if b, ok := b.(*Buf[T]); ok {
			at = i
			if len(b.data) >= n {
				bp = b
				break
			}
			drop = b
		}
	}
	if at >= 0 { // taken, or dropped for a larger one
		p.free = append(p.free[:at], p.free[at+1:]...)
	}
	p.mu.Unlock()
	if bp == nil {
		if drop != nil && drop.mapped != nil {
			unmapMemory(drop.mapped)
		}
		bp = &Buf[T]{}
		if bp.data, bp.mapped = mapFloats[T](n); bp.mapped == nil {
			bp.data = make([]T, n)
		}
	}
	return bp, bp.data[:n]
}

// Put hands back a buffer from Take.
func (p *Scratch) Put(bp any) {
	p.mu.Lock()
	p.free = append(p.free, bp)
	p.mu.Unlock()
}
