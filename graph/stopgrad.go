package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// StopGradient returns a node with the value of x through which no gradient
// flows. First-order MAML is the second-order graph with the inner gradient
// wrapped in StopGradient: the adapted weights then depend on w only through
// the identity term.
func StopGradient(x *gorgonia.Node) (*gorgonia.Node, error) {
	return apply(stopGradientKernel{}, x)
}

// stopGradientKernel is the identity (a copy, so no two nodes alias) whose
// input is declared non-differentiable, so Graph.Grad never propagates
// through it.
type stopGradientKernel struct{}

func (stopGradientKernel) name() string                                  { return "StopGradient" }
func (stopGradientKernel) differentiable() []bool                        { return []bool{false} }
func (stopGradientKernel) shape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in, 1) }

func (k stopGradientKernel) forward(a *args) {
	call(a, k, forwardStopGradient[float64], forwardStopGradient[float32])
}

func forwardStopGradient[T float](_ stopGradientKernel, out []T, in [][]T, _ []tensor.Shape) {
	copy(out, in[0])
}

// grad is never reached through Graph.Grad, which skips non-differentiable
// inputs; it reports an error for callers that ask anyway.
func (stopGradientKernel) grad(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("StopGradient has no derivative by design")
}
