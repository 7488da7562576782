package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Model is a network whose forward pass takes its parameters as nodes, so the
// inner loop can substitute per-task fast weights for the meta-parameters.
type Model interface {
	// ParamShapes lists the shapes of the meta-parameters in the order of the
	// flat parameter vector (each tensor row-major, one after the other).
	ParamShapes() []tensor.Shape
	// Forward maps inputs x of shape (T, N, in) to predictions (T, N, out)
	// with per-task parameters: params[i] has shape (T, ParamShapes()[i]...).
	Forward(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error)
}

// Activation names a hidden-layer nonlinearity of an MLP.
type Activation string

// The activations whose gorgonia derivatives are exact under double
// differentiation (checked against finite differences in the tests).
const (
	ReLU     Activation = "relu"
	Tanh     Activation = "tanh"
	Sigmoid  Activation = "sigmoid"
	Softplus Activation = "softplus"
)

// Softplus caveat: gorgonia's softplus returns x itself for x > 16 while its
// derivative stays the sigmoid, so gradients there are exact only to about
// 1e-8 relative error; ReLU, Tanh and Sigmoid are exact.

func (a Activation) apply(x *gorgonia.Node) (*gorgonia.Node, error) {
	switch a {
	case ReLU:
		return relu(x)
	case Tanh:
		return gorgonia.Tanh(x)
	case Sigmoid:
		return gorgonia.Sigmoid(x)
	case Softplus:
		return gorgonia.Softplus(x)
	}
	return nil, fmt.Errorf("graph: unknown activation %q", string(a))
}

// MLP is a fully connected network with Sizes = [in, hidden..., out], the
// activation after every hidden layer and a linear output layer. Its flat
// parameters are, layer by layer, the weight matrix W (in, out) row-major and
// then the bias b (out): the layout of the MAML reference code.
type MLP struct {
	Sizes      []int
	Activation Activation
}

// NewMLP checks the sizes and activation and returns the MLP.
func NewMLP(sizes []int, act Activation) (MLP, error) {
	if len(sizes) < 2 {
		return MLP{}, fmt.Errorf("graph: an MLP needs at least input and output sizes, got %v", sizes)
	}
	for _, s := range sizes {
		if s < 1 {
			return MLP{}, fmt.Errorf("graph: MLP layer sizes must be >= 1, got %v", sizes)
		}
	}
	switch act {
	case ReLU, Tanh, Sigmoid, Softplus:
	default:
		return MLP{}, fmt.Errorf("graph: unknown activation %q (allowed: relu, tanh, sigmoid, softplus)", string(act))
	}
	return MLP{Sizes: append([]int(nil), sizes...), Activation: act}, nil
}

// ParamShapes implements Model: W_1, b_1, W_2, b_2, ...
func (m MLP) ParamShapes() []tensor.Shape {
	var shapes []tensor.Shape
	for l := 0; l+1 < len(m.Sizes); l++ {
		shapes = append(shapes, tensor.Shape{m.Sizes[l], m.Sizes[l+1]}, tensor.Shape{m.Sizes[l+1]})
	}
	return shapes
}

// Forward implements Model. Weights arrive as (T, in, out) and biases as
// (T, out); each layer is one batched matrix product over the task axis.
func (m MLP) Forward(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error) {
	if len(params) != 2*(len(m.Sizes)-1) {
		return nil, fmt.Errorf("graph: MLP %v needs %d parameter nodes, got %d", m.Sizes, 2*(len(m.Sizes)-1), len(params))
	}
	h := x
	for l := 0; l+1 < len(m.Sizes); l++ {
		w, b := params[2*l], params[2*l+1]
		var err error
		if h, err = bmm(h, w, false, false); err != nil {
			return nil, fmt.Errorf("graph: layer %d product: %w", l, err)
		}
		if h, err = addBias(h, b); err != nil {
			return nil, fmt.Errorf("graph: layer %d bias: %w", l, err)
		}
		if l+2 < len(m.Sizes) {
			if h, err = m.Activation.apply(h); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}
