package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// CNN is MAML's convolutional classifier, the "conv4" of the field: Blocks
// blocks of [3x3 convolution with Filters filters and zero padding 1 ->
// batch normalisation with the statistics of the current set (per instance
// and forward pass; no running statistics) and learnable scale and shift ->
// ReLU -> 2x2 max-pool with stride 2], then a linear layer from the
// flattened last block to Ways logits. Inputs are H x W x C images stored
// row-major (h, w, c).
//
// Pool changes how a block shrinks the image: PoolMax (the default; the
// paper's Omniglot model and MAML's mini-ImageNet one) as above, PoolStride
// a convolution of stride 2 instead (MAML's no-pool variant; padding 1 on
// every side, as PyTorch's Conv2d(stride=2, padding=1): H -> ceil(H/2)) and
// no pooling, PoolNone neither. NoBatchNorm drops the batch norm (the conv
// bias then matters). Hidden > 0 puts a hidden layer of that width and a
// ReLU between the flattened blocks and the output layer.
//
// Its flat parameters are, per block, the conv kernel (3, 3, Cin, F) indexed
// [kh][kw][cin][f] (ParamShapes reports it as the (9*Cin, F) matrix with the
// same layout), the conv bias (F), and unless NoBatchNorm the batch-norm
// scale gamma (F) and shift beta (F); then, with Hidden, the hidden weight
// (D, Hidden) and bias (Hidden); then the output weight (D or Hidden, Ways)
// with D = Hf*Wf*F in (h, w, c) order and the output bias (Ways). With the
// defaults this is the layout of internal/reference.CNN.
//
// The inner loop adapts the conv and linear weights and biases, and the
// batch-norm scale and shift only if AdaptBN (the authors'
// enable_inner_loop_optimizable_bn_params); unadapted ones are used unchanged
// by the adapted model and still get a meta-gradient.
//
// Config files name these settings as Conv4 does; Conv4.CNN builds one.
type CNN struct {
	H, W, C     int
	Filters     int
	Blocks      int
	Ways        int
	AdaptBN     bool
	Eps         float64 // batch-norm epsilon (1e-5 by default in NewCNN)
	Pool        string  `json:",omitempty"` // how a block shrinks the image: PoolMax ("" too), PoolStride or PoolNone
	NoBatchNorm bool    `json:",omitempty"` // blocks without batch norm
	Hidden      int     `json:",omitempty"` // width of a hidden layer before the output layer, 0 for none
	tune        tuning  // the engine's choices for the ops of the blocks
}

// The poolings of a CNN block, CNN.Pool.
const (
	PoolMax    = "max"    // 2x2 max-pool of stride 2 after the ReLU: H -> floor(H/2)
	PoolStride = "stride" // a convolution of stride 2 (padding 1): H -> ceil(H/2)
	PoolNone   = "none"   // the image keeps its size
)

// Batch-norm settings as Conv4.BatchNorm names them.
const (
	BatchNormAdapt = "adapt" // batch norm, scale and shift adapted in the inner loop
	BatchNormFixed = "fixed" // batch norm, scale and shift meta-learned only
	BatchNormOff   = "off"   // no batch norm
)

// Conv4 is a CNN's settings under the names a config gives them: Filters
// per block, Blocks, the input's Channels, Height and Width, Pool ("max",
// "stride" or "none"), BatchNorm ("adapt", "fixed" or "off") and the head's
// Hidden width (0: none). The paper's Omniglot model is {64, 4, 1, 28, 28,
// "max", "fixed", 0}; MAML's mini-ImageNet model {32, 4, 3, 84, 84, "max",
// "adapt", 0} (5x5x32 features into the output layer).
type Conv4 struct {
	Filters, Blocks         int
	Channels, Height, Width int
	Pool                    string
	BatchNorm               string
	Hidden                  int
}

// CNN checks the settings and returns the CNN with Ways outputs and
// Eps = 1e-5; errors name the setting and what is allowed.
func (s Conv4) CNN(ways int) (CNN, error) {
	m := CNN{H: s.Height, W: s.Width, C: s.Channels, Filters: s.Filters, Blocks: s.Blocks, Ways: ways, Eps: 1e-5,
		Pool: s.Pool, Hidden: s.Hidden}
	switch s.BatchNorm {
	case BatchNormAdapt:
		m.AdaptBN = true
	case BatchNormFixed:
	case BatchNormOff:
		m.NoBatchNorm = true
	default:
		return CNN{}, fmt.Errorf("graph: batch_norm %q: want %s, %s or %s", s.BatchNorm, BatchNormAdapt, BatchNormFixed, BatchNormOff)
	}
	return m, m.Check()
}

// NewCNN checks the sizes and returns the CNN with max-pooling, batch norm,
// no hidden layer and Eps = 1e-5.
func NewCNN(h, w, c, filters, blocks, ways int, adaptBN bool) (CNN, error) {
	m := CNN{H: h, W: w, C: c, Filters: filters, Blocks: blocks, Ways: ways, AdaptBN: adaptBN, Eps: 1e-5}
	if err := m.Check(); err != nil {
		return CNN{}, err
	}
	return m, nil
}

// Check reports whether m is a usable network: positive sizes, a known
// pooling, no batch-norm adaptation without batch norm, and images that
// every block leaves at least one pixel of (the error names the image, the
// pooling and the block that gets too little).
func (m CNN) Check() error {
	if m.H < 1 || m.W < 1 || m.C < 1 || m.Filters < 1 || m.Blocks < 1 || m.Ways < 1 || m.Hidden < 0 {
		return fmt.Errorf("graph: CNN sizes must be >= 1 (hidden >= 0), got %dx%dx%d images, %d filters, %d blocks, %d ways, hidden %d",
			m.H, m.W, m.C, m.Filters, m.Blocks, m.Ways, m.Hidden)
	}
	switch m.Pool {
	case "", PoolMax, PoolStride, PoolNone:
	default:
		return fmt.Errorf("graph: CNN pool %q: want %s, %s or %s", m.Pool, PoolMax, PoolStride, PoolNone)
	}
	if m.AdaptBN && m.NoBatchNorm {
		return fmt.Errorf("graph: CNN without batch norm cannot adapt its scale and shift")
	}
	if !(m.Eps > 0) && !m.NoBatchNorm {
		return fmt.Errorf("graph: CNN batch-norm epsilon must be positive, got %v", m.Eps)
	}
	fh, fw := m.H, m.W
	for l := 0; l < m.Blocks; l++ {
		nh, nw := shrink(m.pool(), fh, fw)
		if nh < 1 || nw < 1 {
			return fmt.Errorf("graph: %dx%d images are too small for %d blocks of %s pooling: block %d gets %dx%d and would leave %dx%d",
				m.H, m.W, m.Blocks, m.pool(), l+1, fh, fw, nh, nw)
		}
		fh, fw = nh, nw
	}
	return nil
}

// pool is m.Pool, PoolMax if unset (Pool documents "" as PoolMax).
func (m CNN) pool() string {
	if m.Pool == "" {
		return PoolMax
	}
	return m.Pool
}

// shrink is the image size after a block of pooling p.
func shrink(p string, h, w int) (int, int) {
	switch p {
	case PoolStride:
		return (h + 1) / 2, (w + 1) / 2
	case PoolNone:
		return h, w
	}
	return h / 2, w / 2
}

// fusedBlocks reports whether the blocks are conv -> batch norm -> max-pool
// -> ReLU, the blocks of the fused ops (convBlock, batchNormMaxPool).
func (m CNN) fusedBlocks() bool { return m.pool() == PoolMax && !m.NoBatchNorm }

// blockParams is the number of parameter tensors of a block.
func (m CNN) blockParams() int {
	if m.NoBatchNorm {
		return 2
	}
	return 4
}

// headParams is the number of parameter tensors after the blocks.
func (m CNN) headParams() int {
	if m.Hidden > 0 {
		return 4
	}
	return 2
}

// finalSize is the image size after the last block.
func (m CNN) finalSize() (h, w int) {
	h, w = m.H, m.W
	for l := 0; l < m.Blocks; l++ {
		h, w = shrink(m.pool(), h, w)
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
		shapes = append(shapes, tensor.Shape{9 * cin, f}, tensor.Shape{f})
		if !m.NoBatchNorm {
			shapes = append(shapes, tensor.Shape{f}, tensor.Shape{f})
		}
		cin = f
	}
	fh, fw := m.finalSize()
	d := fh * fw * m.Filters
	if m.Hidden > 0 {
		shapes = append(shapes, tensor.Shape{d, m.Hidden}, tensor.Shape{m.Hidden})
		d = m.Hidden
	}
	return append(shapes, tensor.Shape{d, m.Ways}, tensor.Shape{m.Ways})
}

// Adapted implements AdaptedParams: every tensor but the batch-norm scale and
// shift, which only with AdaptBN.
func (m CNN) Adapted() []bool {
	nb := m.blockParams()
	a := make([]bool, nb*m.Blocks+m.headParams())
	for i := range a {
		a[i] = m.AdaptBN || i >= nb*m.Blocks || i%nb < 2
	}
	return a
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
		if !m.NoBatchNorm {
			for i := 0; i < f; i++ {
				w = append(w, 1) // gamma
			}
			w = append(w, make([]float64, f)...) // beta
		}
		cin = f
	}
	fh, fw := m.finalSize()
	d := fh * fw * m.Filters
	if m.Hidden > 0 {
		uniform(d*m.Hidden, d, m.Hidden)
		w = append(w, make([]float64, m.Hidden)...)
		d = m.Hidden
	}
	uniform(d*m.Ways, d, m.Ways)
	return append(w, make([]float64, m.Ways)...)
}
