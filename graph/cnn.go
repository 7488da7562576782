package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CNN is MAML's convolutional classifier for Omniglot: Blocks blocks of
// [3x3 convolution with Filters filters, stride 1, zero padding 1 -> batch
// normalisation with the statistics of the current set (per instance and
// forward pass; no running statistics) and learnable scale and shift ->
// ReLU -> 2x2 max-pool with stride 2], then a linear layer from the
// flattened last block to Ways logits. Inputs are H x W x C images stored
// row-major (h, w, c).
//
// Its flat parameters are, per block, the conv kernel (3, 3, Cin, F) indexed
// [kh][kw][cin][f] (ParamShapes reports it as the (9*Cin, F) matrix with the
// same layout), the conv bias (F), the batch-norm scale gamma (F) and shift
// beta (F); then the linear weight (D, Ways) with D = Hf*Wf*F in (h, w, c)
// order and the linear bias (Ways): the layout of internal/reference.CNN.
//
// The inner loop adapts the conv and linear weights and biases, and the
// batch-norm scale and shift only if AdaptBN (the authors'
// enable_inner_loop_optimizable_bn_params); unadapted ones are used unchanged
// by the adapted model and still get a meta-gradient.
type CNN struct {
	H, W, C int
	Filters int
	Blocks  int
	Ways    int
	AdaptBN bool
	Eps     float64 // batch-norm epsilon (1e-5 by default in NewCNN)
}

// NewCNN checks the sizes and returns the CNN with Eps = 1e-5.
func NewCNN(h, w, c, filters, blocks, ways int, adaptBN bool) (CNN, error) {
	m := CNN{H: h, W: w, C: c, Filters: filters, Blocks: blocks, Ways: ways, AdaptBN: adaptBN, Eps: 1e-5}
	if h < 1 || w < 1 || c < 1 || filters < 1 || blocks < 1 || ways < 1 {
		return CNN{}, fmt.Errorf("graph: CNN sizes must be >= 1, got %dx%dx%d images, %d filters, %d blocks, %d ways", h, w, c, filters, blocks, ways)
	}
	fh, fw := h, w
	for l := 0; l < blocks; l++ {
		if fh < 2 || fw < 2 {
			return CNN{}, fmt.Errorf("graph: %dx%d images are too small for %d blocks of 2x2 pooling (block %d gets %dx%d)", h, w, blocks, l+1, fh, fw)
		}
		fh, fw = fh/2, fw/2
	}
	return m, nil
}

// finalSize is the image size after the last block.
func (m CNN) finalSize() (h, w int) {
	h, w = m.H, m.W
	for l := 0; l < m.Blocks; l++ {
		h, w = h/2, w/2
	}
	return h, w
}

// InShape is the shape of one input image, for Spec.InShape.
func (m CNN) InShape() []int { return []int{m.H, m.W, m.C} }

// ParamShapes implements Model.
func (m CNN) ParamShapes() []tensor.Shape {
	var shapes []tensor.Shape
	cin := m.C
	for l := 0; l < m.Blocks; l++ {
		f := m.Filters
		shapes = append(shapes, tensor.Shape{9 * cin, f}, tensor.Shape{f}, tensor.Shape{f}, tensor.Shape{f})
		cin = f
	}
	fh, fw := m.finalSize()
	return append(shapes, tensor.Shape{fh * fw * m.Filters, m.Ways}, tensor.Shape{m.Ways})
}

// Adapted implements AdaptedParams: every tensor but the batch-norm scale and
// shift, which only with AdaptBN.
func (m CNN) Adapted() []bool {
	a := make([]bool, 4*m.Blocks+2)
	for i := range a {
		a[i] = m.AdaptBN || i >= 4*m.Blocks || i%4 < 2
	}
	return a
}

// Forward implements Model: x (T, N, H*W*C) to logits (T, N, Ways).
func (m CNN) Forward(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error) {
	return m.forward(x, params, trainedPass)
}

// forwardValues implements valueModel: Forward with the blocks that
// fusesValues allows as one convBlock op each, for graphs that take no
// derivative of the result.
func (m CNN) forwardValues(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error) {
	return m.forward(x, params, valuesPass)
}

// forwardOnce implements onceModel: Forward with a first block of one
// input channel (if fuses allows it) as one convBlock op, whose gradient
// (convBlockBack) computes the block's activations again instead of
// storing them and their gradient, for graphs that differentiate the
// result once, where convBlockBack runs on the SIMD kernels
// (blockBackFast). Blocks of more channels would compute their
// convolution a third time for no saving, and stay unfused.
func (m CNN) forwardOnce(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error) {
	return m.forward(x, params, oncePass)
}

// fuses reports whether a block with cin input channels has thin patches
// (9*cin below 2*Filters, as the first block's one channel): its im2col
// convolution is cheap enough to compute twice instead of storing its
// output, so it runs as one convBlock op in forwardValues and, with the
// SIMD kernels, in forwardOnce.
func (m CNN) fuses(cin int) bool { return 9*cin < 2*m.Filters }

// fusesValues reports whether a block of n images of g per task runs as
// one convBlock op in forwardValues: as fuses allows, or where its
// convolution takes the Winograd path, which the op runs once, keeping
// only z's moments and pooled extremes (winogradBlock).
func (m CNN) fusesValues(g imageGeom, n int) bool {
	return m.fuses(g.C) || g.winogradBlockTile(n, m.Filters) > 0
}

// pass is what a graph does with a forward pass: differentiate it as
// often as it likes (Forward), not at all (forwardValues) or once
// (forwardOnce).
type pass int

const (
	trainedPass pass = iota
	valuesPass
	oncePass
)

func (m CNN) forward(x *gorgonia.Node, params gorgonia.Nodes, p pass) (*gorgonia.Node, error) {
	if len(params) != 4*m.Blocks+2 {
		return nil, fmt.Errorf("graph: CNN with %d blocks needs %d parameter nodes, got %d", m.Blocks, 4*m.Blocks+2, len(params))
	}
	s := x.Shape()
	if len(s) != 3 || s[2] != m.H*m.W*m.C {
		return nil, fmt.Errorf("graph: CNN input must be (T, N, %d) for %dx%dx%d images, got %v", m.H*m.W*m.C, m.H, m.W, m.C, s)
	}
	h := x
	H, W, C := m.H, m.W, m.C
	for l := 0; l < m.Blocks; l++ {
		w := params[4*l : 4*l+4]
		var z *gorgonia.Node
		var err error
		if p == valuesPass && m.fusesValues(imageGeom{H, W, C}, s[1]) || p == oncePass && C == 1 && m.fuses(C) && blockBackFast(h.Dtype()) {
			z, err = convBlock(h, w[0], w[1], w[2], w[3], imageGeom{H, W, C}, m.Eps)
		} else {
			z, err = m.block(h, imageGeom{H, W, C}, w[0], w[1], w[2], w[3])
		}
		if err != nil {
			return nil, fmt.Errorf("graph: CNN block %d: %w", l+1, err)
		}
		h, H, W, C = z, H/2, W/2, m.Filters
	}
	h, err := reshape(h, tensor.Shape{s[0], s[1], H * W * C})
	if err != nil {
		return nil, err
	}
	if h, err = bmm(h, params[4*m.Blocks], false, false); err != nil {
		return nil, fmt.Errorf("graph: CNN linear layer: %w", err)
	}
	return addBias(h, params[4*m.Blocks+1])
}

// block is a 3x3 convolution, its bias, batch norm, 2x2 max-pool and ReLU
// of the images in h. Batch norm and the pool are fused (ops_bnpool.go):
// the normalised activations are only computed at the windows' maxima.
// ReLU comes after the pool: max commutes with a monotone function, so the
// values are those of pool(relu(.)) and the derivatives agree wherever they
// exist, for a quarter of the ReLU work.
func (m CNN) block(h *gorgonia.Node, g imageGeom, kernel, bias, gamma, beta *gorgonia.Node) (*gorgonia.Node, error) {
	z, err := conv(h, kernel, g)
	if err != nil {
		return nil, err
	}
	if z, err = batchNormMaxPool(z, bias, gamma, beta, m.Eps, poolGeom{g.H, g.W}); err != nil {
		return nil, err
	}
	return relu(z)
}

// batchNormMaxPool adds the bias b (T, F) to every row of z (T, M, F),
// normalises every channel with its mean and biased variance over the M rows
// of its task, scales by gamma (T, F), shifts by beta (T, F) and max-pools
// the result, with the fused ops of ops_bnpool.go (gorgonia's BatchNorm,
// InverseSqrt and MaxPool2D have wrong derivatives). The bias cancels: its
// gradient is exactly zero, as in the reference.
func batchNormMaxPool(z, b, gamma, beta *gorgonia.Node, eps float64, p poolGeom) (*gorgonia.Node, error) {
	st, err := bnStats(z, eps)
	if err != nil {
		return nil, err
	}
	return maxPoolBN(z, st, b, gamma, beta, p)
}

// Init returns freshly initialised flat parameters drawn from rng: conv
// kernels and the linear weight Glorot-uniform, U(-a, a) with
// a = sqrt(6 / (fan_in + fan_out)), where a conv kernel has fan_in = 9*Cin
// and fan_out = 9*F (the receptive field times the channels, as Keras and
// PyTorch count) and the linear weight fan_in = D, fan_out = Ways; biases and
// shifts 0, scales 1.
func (m CNN) Init(rng *rand.Rand) []float64 {
	var w []float64
	uniform := func(n int, fanIn, fanOut int) {
		a := math.Sqrt(6 / float64(fanIn+fanOut))
		for i := 0; i < n; i++ {
			w = append(w, a*(2*rng.Float64()-1))
		}
	}
	cin := m.C
	for l := 0; l < m.Blocks; l++ {
		f := m.Filters
		uniform(9*cin*f, 9*cin, 9*f)
		w = append(w, make([]float64, f)...) // conv bias
		for i := 0; i < f; i++ {
			w = append(w, 1) // gamma
		}
		w = append(w, make([]float64, f)...) // beta
		cin = f
	}
	fh, fw := m.finalSize()
	d := fh * fw * m.Filters
	uniform(d*m.Ways, d, m.Ways)
	return append(w, make([]float64, m.Ways)...)
}
