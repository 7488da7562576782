package graph

import (
	"github.com/trmaml/trmaml/graph/internal/memory"
	"gorgonia.org/tensor"
)

// ShareBuffers makes o take the buffers of its arenas (its large
// intermediate values) from the same pool as other, so that a training
// objective and the evaluation objective of the same model hold one set of
// buffers between them instead of two: an arena that fits in a free buffer
// borrows a part of it, a larger one replaces the free ones
// (memory.Pool.Get), and the process peaks at the larger of the two graphs,
// not their sum. Every buffer is back in the pool when a call returns, so
// the two may be called in turn, but never at the same time (the same
// goroutine). Call it once, before either has run: bufferBytes counts o's
// buffers into other's pool.
func (o *Objective) ShareBuffers(other *Objective) {
	o.joinPool(other.programs()[0].Pool)
	other.hold(o)
}

// hold grows the largest of o's arenas of each dtype to hold all of e's
// arenas of that dtype side by side, so that an evaluation slightly larger
// than training in total does not allocate a second set beside training's:
// e's lanes each take the next part of one free buffer, and a buffer lent
// in parts is free again only when every part is back (memory.Pool.Get),
// so where two or more goroutines run lanes back to back, all of them need
// room, not only as many as run at once.
func (o *Objective) hold(e *Objective) {
	need := map[tensor.Dtype][]int{}
	for _, p := range e.programs() {
		for _, a := range p.Arenas {
			need[a.Dtype()] = append(need[a.Dtype()], a.Size())
		}
	}
	for dt, sizes := range need {
		var largest *memory.Arena
		for _, p := range o.programs() {
			for _, a := range p.Arenas {
				if a.Dtype() == dt && (largest == nil || a.Size() > largest.Size()) {
					largest = a
				}
			}
		}
		if largest != nil {
			largest.Hold(sizes...)
		}
	}
}

// joinPool moves o's buffers into pool to and has its arenas take theirs
// from it: an arena smaller than a free buffer there borrows a part of it
// (memory.Pool.Get).
func (o *Objective) joinPool(to *memory.Pool) {
	from := o.programs()[0].Pool
	if from == to {
		return
	}
	to.Absorb(from)
	for _, sub := range o.graphs() { // the lanes of o share from
		for _, a := range sub.prog.Arenas {
			a.UsePool(to)
		}
		sub.prog.Pool = to
	}
}

// bufferBytes is the most memory o's buffer pool, shared with the
// objectives of ShareBuffers, has held at once for the large intermediate
// values (the CNN's activations and their gradients): after a call of each,
// the graphs' peak. Parameters, batches and small values are not counted.
func (o *Objective) bufferBytes() int64 { return o.programs()[0].Pool.Bytes() }
