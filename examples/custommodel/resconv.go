package custommodel

import (
	"fmt"

	"github.com/trmaml/trmaml/graph"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ResConv classifies H x W x C images into Ways classes with
//
//	a = relu(bn(conv(x)))                 first block, F filters
//	z = conv(a) + a                       residual 3x3 convolution
//	p = relu(maxpool(bn(z + bias)))       fused batch norm and 2x2 pool
//	logits = flatten(p) W + b
//
// Its parameters, in flat-vector order: conv kernel 1 (9*C, F), scale 1
// (F), shift 1 (F), conv kernel 2 (9*F, F), conv bias 2 (F), scale 2 (F),
// shift 2 (F), linear weight (H/2*W/2*F, Ways), linear bias (Ways). The
// inner loop adapts all but the batch-norm scales and shifts.
type ResConv struct {
	H, W, C, Filters, Ways int
}

const eps = 1e-5

// ParamShapes implements graph.Model.
func (m ResConv) ParamShapes() []tensor.Shape {
	f := m.Filters
	return []tensor.Shape{
		{9 * m.C, f}, {f}, {f},
		{9 * f, f}, {f}, {f}, {f},
		{(m.H / 2) * (m.W / 2) * f, m.Ways}, {m.Ways},
	}
}

// Adapted implements graph.AdaptedParams: the batch-norm scales and shifts
// are meta-learned but not adapted.
func (m ResConv) Adapted() []bool {
	return []bool{true, false, false, true, true, false, false, true, true}
}

// Forward implements graph.Model: x (T, N, H*W*C) to logits (T, N, Ways).
func (m ResConv) Forward(x *gorgonia.Node, p gorgonia.Nodes) (*gorgonia.Node, error) {
	if len(p) != 9 {
		return nil, fmt.Errorf("custommodel: ResConv needs 9 parameter nodes, got %d", len(p))
	}
	s := x.Shape()
	if len(s) != 3 || s[2] != m.H*m.W*m.C {
		return nil, fmt.Errorf("custommodel: ResConv input must be (T, N, %d), got %v", m.H*m.W*m.C, s)
	}
	z, err := graph.Conv3x3(x, p[0], m.H, m.W, m.C)
	if err != nil {
		return nil, err
	}
	if z, err = graph.BatchNorm(z, p[1], p[2], eps); err != nil {
		return nil, err
	}
	a, err := graph.ReLU.Apply(z)
	if err != nil {
		return nil, err
	}
	if z, err = graph.Conv3x3(a, p[3], m.H, m.W, m.Filters); err != nil {
		return nil, err
	}
	if z, err = graph.Axpy(z, a, 1); err != nil { // the residual connection
		return nil, err
	}
	if z, err = graph.BatchNormMaxPool(z, p[4], p[5], p[6], eps, m.H, m.W); err != nil {
		return nil, err
	}
	if z, err = graph.ReLU.Apply(z); err != nil {
		return nil, err
	}
	if z, err = graph.Reshape(z, s[0], s[1], (m.H/2)*(m.W/2)*m.Filters); err != nil {
		return nil, err
	}
	if z, err = graph.MatMul(z, p[7], false, false); err != nil {
		return nil, err
	}
	return graph.AddBias(z, p[8])
}
