package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// StopGradient returns a node with the value of x through which no gradient
// flows. First-order MAML is the second-order graph with the inner gradient
// wrapped in StopGradient: the adapted weights then depend on w only through
// the identity term.
func StopGradient(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applyOp(&stopGradientOp{}, x)
}

// stopGradientOp is the identity in the forward pass and declares its input
// non-differentiable, so Graph.Grad never propagates through it. It belongs to
// one node and keeps that node's output between runs.
type stopGradientOp struct{ out gorgonia.Value }

func (*stopGradientOp) Arity() int { return 1 }

func (*stopGradientOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (*stopGradientOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("StopGradient takes one input, got %d", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("StopGradient: input shape is %T, not a tensor.Shape", in[0])
	}
	return s.Clone(), nil
}

// Do copies its input, so that later in-place ops on either side cannot alias;
// the copy goes into the previous run's output when it still fits.
func (op *stopGradientOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("StopGradient takes one input, got %d", len(in))
	}
	if op.out != nil && op.out.Dtype() == in[0].Dtype() && op.out.Shape().Eq(in[0].Shape()) {
		if _, err := gorgonia.Copy(op.out, in[0]); err == nil {
			return op.out, nil
		}
	}
	v, err := gorgonia.CloneValue(in[0])
	op.out = v
	return v, err
}

func (*stopGradientOp) ReturnsPtr() bool      { return false }
func (*stopGradientOp) CallsExtern() bool     { return false }
func (*stopGradientOp) OverwritesInput() int  { return -1 }
func (*stopGradientOp) String() string        { return "StopGradient" }
func (*stopGradientOp) WriteHash(h hash.Hash) { h.Write([]byte("StopGradient")) }
func (*stopGradientOp) DiffWRT(n int) []bool  { return make([]bool, n) }

func (op *stopGradientOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// SymDiff is never reached through Graph.Grad, which skips non-differentiable
// inputs; it reports an error for callers that ask anyway.
func (*stopGradientOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("StopGradient has no derivative by design")
}
