package graph

import "github.com/trmaml/trmaml/graph/internal/memory"

// ShareBuffers makes o recycle its large intermediate values through the
// same pool as other, so that a training objective and the evaluation
// objective of the same model (whose activations have the same sizes when
// their batches match) hold one set of buffers between them instead of two:
// the process peaks at the larger of the two graphs, not their sum. Every
// pooled buffer is back in the pool when a call returns, so the two may be
// called in turn, but never at the same time (the same goroutine). Call it
// once, before either has run: bufferBytes counts o's buffers into other's
// pool.
func (o *Objective) ShareBuffers(other *Objective) {
	o.joinPool(other.programs()[0].Pool, true)
}

// joinPool moves o's buffers into pool to and has its ops take theirs from
// it; with borrow, they may borrow larger buffers (memory.Pool.Get) and
// allocate, when nothing free fits, what the op would take in a graph of
// all of o's tasks.
func (o *Objective) joinPool(to *memory.Pool, borrow bool) {
	from := o.programs()[0].Pool
	if from == to {
		return
	}
	to.Absorb(from)
	for _, sub := range o.graphs() { // the lanes of o share from
		p := sub.prog
		for _, s := range p.Steps {
			op, ok := s.Op.(*op)
			if !ok || op.pool != from {
				continue
			}
			op.pool = to
			if borrow {
				op.borrow = op.outShape.TotalSize()
				if n := sub.spec.Tasks; n < o.spec.Tasks && len(op.outShape) > 0 && op.outShape[0] == n {
					op.borrow = op.borrow / n * o.spec.Tasks
				}
			}
		}
		p.Pool = to
	}
}

// bufferBytes is the memory of the large intermediate values (the CNN's
// activations and their gradients) that o's buffer pool has allocated so
// far, shared with the objectives of ShareBuffers: the pool keeps every
// buffer for reuse, so after a call of each this is the graphs' peak.
// Parameters, batches and small values are not counted.
func (o *Objective) bufferBytes() int64 { return o.programs()[0].Pool.Bytes() }
