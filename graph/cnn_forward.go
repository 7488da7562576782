package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The CNN's forward passes: the blocks, fused or composed from the layers,
// and the head, in the three variants a graph asks for (pass).

// Forward implements Model: x (T, N, H*W*C) to logits (T, N, Ways).
func (m CNN) Forward(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error) {
	return m.forward(x, params, trainedPass)
}

// forwardPass implements passModel: forwardValues and forwardOnce, for
// the CNN itself (a value or a pointer to it), not a type embedding it.
func (m CNN) forwardPass(p pass, model Model) forwardFunc {
	if ptr, ok := model.(*CNN); ok {
		model = *ptr
	}
	if model != Model(m) {
		return nil
	}
	switch p {
	case valuesPass:
		return m.forwardValues
	case oncePass:
		return m.forwardOnce
	}
	return nil
}

// forwardValues is the valuesPass: Forward with the blocks that
// fusesValues allows as one convBlock op each, for graphs that take no
// derivative of the result.
func (m CNN) forwardValues(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error) {
	return m.forward(x, params, valuesPass)
}

// forwardOnce is the oncePass: Forward with a first block of one
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

func (m CNN) forward(x *gorgonia.Node, params gorgonia.Nodes, p pass) (*gorgonia.Node, error) {
	nb := m.blockParams()
	if len(params) != nb*m.Blocks+m.headParams() {
		return nil, fmt.Errorf("graph: CNN with %d blocks needs %d parameter nodes, got %d", m.Blocks, nb*m.Blocks+m.headParams(), len(params))
	}
	s := x.Shape()
	if len(s) != 3 || s[2] != m.H*m.W*m.C {
		return nil, fmt.Errorf("graph: CNN input must be (T, N, %d) for %dx%dx%d images, got %v", m.H*m.W*m.C, m.H, m.W, m.C, s)
	}
	h := x
	H, W, C := m.H, m.W, m.C
	for l := 0; l < m.Blocks; l++ {
		w := params[nb*l : nb*l+nb]
		var z *gorgonia.Node
		var err error
		g := imageGeom{H: H, W: W, C: C, tune: m.tune}
		switch {
		case !m.fusedBlocks():
			z, err = m.plainBlock(h, g, w)
		case p == valuesPass && m.fusesValues(g, s[1]) || p == oncePass && C == 1 && m.fuses(C) && g.blockBackFast(h.Dtype()):
			z, err = convBlock(h, w[0], w[1], w[2], w[3], g, m.Eps)
		default:
			z, err = m.block(h, g, w[0], w[1], w[2], w[3])
		}
		if err != nil {
			return nil, fmt.Errorf("graph: CNN block %d: %w", l+1, err)
		}
		H, W = shrink(m.pool(), H, W)
		h, C = z, m.Filters
	}
	h, err := reshape(h, tensor.Shape{s[0], s[1], H * W * C})
	if err != nil {
		return nil, err
	}
	head := params[nb*m.Blocks:]
	if m.Hidden > 0 {
		if h, err = Linear(h, head[0], head[1]); err != nil {
			return nil, fmt.Errorf("graph: CNN hidden layer: %w", err)
		}
		if h, err = relu(h); err != nil {
			return nil, err
		}
		head = head[2:]
	}
	if h, err = Linear(h, head[0], head[1]); err != nil {
		return nil, fmt.Errorf("graph: CNN linear layer: %w", err)
	}
	return h, nil
}

// plainBlock is a block other than the fused conv -> batch norm -> max-pool
// one, composed from the standalone layers: the convolution (of stride 2
// with PoolStride) and its bias, batch norm unless NoBatchNorm, ReLU, and
// with PoolMax the max-pool (before the ReLU, which commutes with it, as in
// block). w holds the block's kernel, bias and, with batch norm, scale and
// shift.
func (m CNN) plainBlock(h *gorgonia.Node, g imageGeom, w gorgonia.Nodes) (*gorgonia.Node, error) {
	stride := 1
	if m.pool() == PoolStride {
		stride = 2
	}
	z, err := Conv(h, w[0], w[1], g.H, g.W, g.C, stride, 1)
	if err != nil {
		return nil, err
	}
	H, W := g.H, g.W
	if stride == 2 {
		H, W = shrink(m.pool(), H, W)
	}
	if !m.NoBatchNorm {
		if z, err = BatchNorm(z, w[2], w[3], m.Eps); err != nil {
			return nil, err
		}
	}
	if m.pool() == PoolMax {
		if z, err = MaxPool2(z, H, W); err != nil {
			return nil, err
		}
	}
	return relu(z)
}

// block is a 3x3 convolution, its bias, batch norm, 2x2 max-pool and ReLU
// of the images in h. Batch norm, the pool and the ReLU are fused
// (ops_bnpool.go, maxPoolBNReLU): the normalised activations are only
// computed at the windows' maxima. ReLU comes after the pool: max commutes
// with a monotone function, so the values are those of pool(relu(.)) and
// the derivatives agree wherever they exist, for a quarter of the ReLU work.
func (m CNN) block(h *gorgonia.Node, g imageGeom, kernel, bias, gamma, beta *gorgonia.Node) (*gorgonia.Node, error) {
	z, err := conv(h, kernel, g)
	if err != nil {
		return nil, err
	}
	st, err := bnStats(z, m.Eps)
	if err != nil {
		return nil, err
	}
	return maxPoolBNReLU(z, st, bias, gamma, beta, poolGeom{g.H, g.W})
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
