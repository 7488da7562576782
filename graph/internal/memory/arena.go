package memory

import "gorgonia.org/tensor"

// Arena holds the large values of one program of one dtype in one buffer
// of a pool, each at the place Plan gave it: the program takes the buffer
// when its first value is computed and hands it back when its last one has
// been read, so between runs the pool can lend it to other programs. A
// program runs on one goroutine at a time, so an arena needs no lock (its
// pool has one).
type Arena struct {
	pool *Pool
	dt   tensor.Dtype
	size int
	buf  *tensor.Dense // the buffer while any value is alive
	live int           // values taken and not yet put back
}

// NewArena returns an arena of size values of dt, whose buffer comes from
// pool.
func NewArena(pool *Pool, dt tensor.Dtype, size int) *Arena {
	return &Arena{pool: pool, dt: dt, size: size}
}

// UsePool makes the arena take its buffer from p from its next run on.
func (a *Arena) UsePool(p *Pool) { a.pool = p }

// Size is the arena's size in values.
func (a *Arena) Size() int { return a.size }

// Dtype is the type of the arena's values.
func (a *Arena) Dtype() tensor.Dtype { return a.dt }

// Hold makes the arena at least large enough to lend parts of n values
// each, side by side (Pool.Get), from its next run on.
func (a *Arena) Hold(n ...int) {
	total := 0
	for _, m := range n {
		total += roundUp(m)
	}
	a.size = max(a.size, total)
}

// Get returns the value of shape at offset off of the arena's buffer.
func (a *Arena) Get(off int, shape tensor.Shape) *tensor.Dense {
	if a.live == 0 {
		a.buf = a.pool.Get(a.dt, a.size)
	}
	a.live++
	end := off + shape.TotalSize()
	switch d := a.buf.Data().(type) {
	case []float32:
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(d[off:end:end]))
	case []float64:
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(d[off:end:end]))
	}
	panic("memory: an arena of " + a.dt.String())
}

// Put hands back a value of Get: the buffer goes back to the pool with the
// last one.
func (a *Arena) Put() {
	if a.live--; a.live == 0 {
		a.pool.Put(a.buf)
		a.buf = nil
	}
}
