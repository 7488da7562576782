// Package ctxtest gives tests a context that interrupts a loop at an exact
// iteration: the training loops ask their context's Err once per
// iteration, so StopAfter(parent, n) stops them after exactly n, wherever
// that falls relative to evaluations and checkpoints.
package ctxtest

import "context"

// StopAfter returns a context whose Err is nil for its first n calls and
// context.Canceled from the (n+1)-th on; the rest is parent's.
func StopAfter(parent context.Context, n int) context.Context {
	return &stopAfter{parent, n}
}

type stopAfter struct {
	context.Context
	n int
}

func (c *stopAfter) Err() error {
	if c.n == 0 {
		return context.Canceled
	}
	c.n--
	return nil
}
