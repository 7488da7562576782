package reference

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/metalearn"
)

// DefaultBNEps is the batch-norm epsilon graph.NewCNN uses.
const DefaultBNEps = 1e-5

// CNN is MAML's convolutional classifier for Omniglot ("conv4" when Blocks
// is 4), with the layout graph.CNN uses (graph's tests compare the two on
// every parameter and pin the layout in TestCNNParamLayout): Blocks
// blocks of [3x3 convolution with Filters filters, stride 1, zero padding 1
// -> batch norm with the statistics of the current set -> ReLU -> 2x2 max-pool
// with stride 2, floor], then a linear layer from the flattened last block
// output to Ways logits, and softmax cross-entropy.
//
// Inputs are n images of H x W x C values, row-major in (h, w, c) order;
// targets are n one-hot rows of length Ways. Batch norm uses the mean and
// biased variance, per channel, over all points of the set passed to a call
// and all positions (no running statistics), with epsilon Eps.
//
// The flat parameter vector holds, for block l = 0..Blocks-1 (Cin = C for the
// first block, Filters after), the conv kernel (3, 3, Cin, Filters) indexed
// [kh][kw][cin][f], the conv bias (Filters), the BN scale gamma (Filters) and
// the BN shift beta (Filters); then the linear weight (D, Ways) with
// D = Hf*Wf*Filters in the (h, w, c) flatten order of the last block output,
// Hf = H>>Blocks and Wf = W>>Blocks; then the linear bias (Ways). Every tensor
// is row-major. Layout lists the ranges by name.
//
// The MAML inner loop adapts the conv kernels and biases and the linear
// weight and bias, and the BN scale and shift only if AdaptBN; see Adapted.
//
// The methods assume a valid CNN (see Validate) and slices whose lengths
// match the layout; they do not check this on every call.
type CNN struct {
	H, W, C int // input image height, width and channels
	Filters int // channels of every block's output
	Blocks  int
	Ways    int     // classes N
	AdaptBN bool    // whether the inner loop also adapts BN scale and shift
	Eps     float64 // batch-norm epsilon, positive; graph.NewCNN's is DefaultBNEps
}

// Validate reports whether m describes a usable network: positive sizes, an
// image large enough that Blocks 2x2 poolings leave at least one pixel, and a
// positive finite Eps.
func (m CNN) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"H", m.H}, {"W", m.W}, {"C", m.C}, {"Filters", m.Filters}, {"Blocks", m.Blocks}, {"Ways", m.Ways}} {
		if f.v <= 0 {
			return fmt.Errorf("reference: CNN %s must be positive, got %d", f.name, f.v)
		}
	}
	if m.H>>m.Blocks < 1 || m.W>>m.Blocks < 1 {
		return fmt.Errorf("reference: CNN image %dx%d is too small for %d blocks: each block halves the size (floor) and nothing may be left at 0", m.H, m.W, m.Blocks)
	}
	if !(m.Eps > 0) || math.IsInf(m.Eps, 1) {
		return fmt.Errorf("reference: CNN Eps must be positive and finite, got %v", m.Eps)
	}
	return nil
}

// ParamRange names one tensor of the flat parameter vector: it occupies
// w[Start:End], has the row-major Shape and is adapted by the MAML inner loop
// if Adapted.
type ParamRange struct {
	Name       string // "block<l>.kernel", ".bias", ".bn_scale", ".bn_shift", "linear.weight", "linear.bias"
	Shape      []int
	Start, End int
	Adapted    bool
}

// Layout lists the tensors of the flat parameter vector in order: per block
// kernel, bias, bn_scale, bn_shift, then linear.weight and linear.bias.
func (m CNN) Layout() []ParamRange {
	var ranges []ParamRange
	off := 0
	add := func(name string, adapted bool, shape ...int) {
		size := 1
		for _, s := range shape {
			size *= s
		}
		ranges = append(ranges, ParamRange{Name: name, Shape: shape, Start: off, End: off + size, Adapted: adapted})
		off += size
	}
	cin := m.C
	for l := 0; l < m.Blocks; l++ {
		add(fmt.Sprintf("block%d.kernel", l), true, 3, 3, cin, m.Filters)
		add(fmt.Sprintf("block%d.bias", l), true, m.Filters)
		add(fmt.Sprintf("block%d.bn_scale", l), m.AdaptBN, m.Filters)
		add(fmt.Sprintf("block%d.bn_shift", l), m.AdaptBN, m.Filters)
		cin = m.Filters
	}
	add("linear.weight", true, m.featureDim(), m.Ways)
	add("linear.bias", true, m.Ways)
	return ranges
}

// NumParams is the length of the flat parameter vector.
func (m CNN) NumParams() int {
	layout := m.Layout()
	return layout[len(layout)-1].End
}

// Adapted reports, per parameter, whether the MAML inner loop updates it.
func (m CNN) Adapted() []bool {
	mask := make([]bool, m.NumParams())
	for _, r := range m.Layout() {
		for k := r.Start; k < r.End; k++ {
			mask[k] = r.Adapted
		}
	}
	return mask
}

// featureDim is D = Hf*Wf*Filters, the length of the flattened last block
// output.
func (m CNN) featureDim() int { return (m.H >> m.Blocks) * (m.W >> m.Blocks) * m.Filters }

// inDim is the number of input values per image.
func (m CNN) inDim() int { return m.H * m.W * m.C }

// cnnBlock holds one block's parameters as sub-slices of w.
type cnnBlock struct{ kernel, bias, gamma, beta []float64 }

// params splits w (or a gradient in the same layout) into its tensors.
func (m CNN) params(w []float64) (blocks []cnnBlock, linW, linB []float64) {
	layout := m.Layout()
	part := func(i int) []float64 { return w[layout[i].Start:layout[i].End] }
	for l := 0; l < m.Blocks; l++ {
		blocks = append(blocks, cnnBlock{part(4 * l), part(4*l + 1), part(4*l + 2), part(4*l + 3)})
	}
	return blocks, part(4 * m.Blocks), part(4*m.Blocks + 1)
}

// blockTrace keeps what the backward pass needs from one block's forward
// pass on n images of h x w x cin values.
type blockTrace struct {
	in        []float64
	h, w, cin int
	xhat, inv []float64 // batch norm's normalised values and 1/sqrt(var+eps)
	bn        []float64 // batch norm output, the ReLU input
	poolFrom  []int     // max-pool's selected inputs
	reluSize  int       // length of the ReLU output, the max-pool input
}

// forward runs the network on n images and returns the logits (n x Ways), the
// flattened features of the last block (n x D) and the trace of every block.
func (m CNN) forward(w, x []float64, n int) (logits, feats []float64, trace []blockTrace) {
	blocks, linW, linB := m.params(w)
	h, wd, cin := m.H, m.W, m.C
	act := x
	for _, b := range blocks {
		t := blockTrace{in: act, h: h, w: wd, cin: cin}
		z := conv3x3(act, n, h, wd, cin, b.kernel, b.bias, m.Filters)
		t.bn, t.xhat, t.inv = batchNorm(z, n*h*wd, m.Filters, b.gamma, b.beta, m.Eps)
		r := relu(t.bn)
		t.reluSize = len(r)
		act, t.poolFrom = maxPool2(r, n, h, wd, m.Filters)
		trace = append(trace, t)
		h, wd, cin = h/2, wd/2, m.Filters
	}
	feats = act
	d := m.featureDim()
	logits = make([]float64, n*m.Ways)
	for p := 0; p < n; p++ {
		for j := 0; j < m.Ways; j++ {
			s := linB[j]
			for i := 0; i < d; i++ {
				s += feats[p*d+i] * linW[i*m.Ways+j]
			}
			logits[p*m.Ways+j] = s
		}
	}
	return logits, feats, trace
}

// Forward returns the logits, n rows of Ways values, of the n images in x.
func (m CNN) Forward(w, x []float64, n int) []float64 {
	logits, _, _ := m.forward(w, x, n)
	return logits
}

// Loss is the mean softmax cross-entropy of the network on the images x with
// one-hot targets y (n = len(x)/(H*W*C) points; batch norm uses this set's
// statistics).
func (m CNN) Loss(w, x, y []float64) float64 {
	n := len(x) / m.inDim()
	loss, _ := softmaxCrossEntropy(m.Forward(w, x, n), y, n, m.Ways)
	return loss
}

// Accuracy is the fraction of the images in x whose first largest logit is
// at the label, the position of the first largest value of their row in y.
func (m CNN) Accuracy(w, x, y []float64) float64 {
	n := len(x) / m.inDim()
	logits := m.Forward(w, x, n)
	hits := 0
	for p := 0; p < n; p++ {
		if argmax(logits[p*m.Ways:(p+1)*m.Ways]) == argmax(y[p*m.Ways:(p+1)*m.Ways]) {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

// LossGrad returns Loss(w, x, y) and its gradient with respect to w, in the
// flat parameter layout, by backpropagation through the linear layer and,
// per block in reverse, the max-pool, ReLU, batch norm (including the terms
// through the batch mean and variance) and convolution.
func (m CNN) LossGrad(w, x, y []float64) (float64, []float64) {
	n := len(x) / m.inDim()
	logits, feats, trace := m.forward(w, x, n)
	loss, dlogits := softmaxCrossEntropy(logits, y, n, m.Ways)

	grad := make([]float64, len(w))
	blocks, linW, _ := m.params(w)
	gBlocks, gLinW, gLinB := m.params(grad)
	d := m.featureDim()
	dact := make([]float64, n*d) // dLoss/d(features), then per block dLoss/d(block input)
	for p := 0; p < n; p++ {
		for j := 0; j < m.Ways; j++ {
			g := dlogits[p*m.Ways+j]
			gLinB[j] += g
			for i := 0; i < d; i++ {
				gLinW[i*m.Ways+j] += feats[p*d+i] * g
				dact[p*d+i] += linW[i*m.Ways+j] * g
			}
		}
	}
	for l := m.Blocks - 1; l >= 0; l-- {
		t, b, g := trace[l], blocks[l], gBlocks[l]
		dr := maxPool2Backward(dact, t.poolFrom, t.reluSize)
		dbn := reluBackward(t.bn, dr)
		dz := batchNormBackward(dbn, t.xhat, t.inv, n*t.h*t.w, m.Filters, b.gamma, g.gamma, g.beta)
		var din []float64
		if l > 0 {
			din = make([]float64, len(t.in))
		}
		conv3x3Backward(t.in, n, t.h, t.w, t.cin, b.kernel, m.Filters, dz, g.kernel, g.bias, din)
		dact = din
	}
	return loss, grad
}

// Adapt runs the MAML inner loop for one instance: starting from w it takes
// steps SGD steps w' = w' - alpha * grad Loss(w'; sx, sy) on the support set,
// updating only the parameters that Adapted marks (the others keep their
// values in the result). w is not modified.
func (m CNN) Adapt(w, sx, sy []float64, alpha float64, steps int) []float64 {
	return m.adaptPath(w, sx, sy, alpha, steps)[steps]
}

// adaptPath returns the inner-loop iterates theta_0 = w, ..., theta_steps of
// Adapt, each a fresh slice.
func (m CNN) adaptPath(w, sx, sy []float64, alpha float64, steps int) [][]float64 {
	path := [][]float64{append([]float64(nil), w...)}
	mask := m.Adapted()
	for s := 0; s < steps; s++ {
		next := append([]float64(nil), path[s]...)
		_, g := m.LossGrad(next, sx, sy)
		for k := range next {
			if mask[k] {
				next[k] -= alpha * g[k]
			}
		}
		path = append(path, next)
	}
	return path
}

// AdaptedLoss is the MAML two-level objective for one instance: the query
// loss Loss(Adapt(w, sx, sy, alpha, steps); qx, qy).
func (m CNN) AdaptedLoss(w, sx, sy, qx, qy []float64, alpha float64, steps int) float64 {
	return m.Loss(m.Adapt(w, sx, sy, alpha, steps), qx, qy)
}

// AdaptedAccuracy is the query accuracy of the adapted model,
// Accuracy(Adapt(w, sx, sy, alpha, steps); qx, qy).
func (m CNN) AdaptedAccuracy(w, sx, sy, qx, qy []float64, alpha float64, steps int) float64 {
	return m.Accuracy(m.Adapt(w, sx, sy, alpha, steps), qx, qy)
}

// CNNMetaObjective evaluates the meta-objective of the CNN on every instance
// of b, like MetaObjective for the MLP: losses[t] and accuracies[t] are the
// query loss and accuracy of the model adapted on row t, and total is
// sum_t weights[t]*losses[t]. weights must have length b.Tasks.
func CNNMetaObjective(m CNN, w []float64, b *metalearn.Batch, weights []float64, alpha float64, steps int) (total float64, losses, accuracies []float64) {
	losses = make([]float64, b.Tasks)
	accuracies = make([]float64, b.Tasks)
	for t := range losses {
		sx, sy, qx, qy := b.Row(t)
		adapted := m.Adapt(w, sx, sy, alpha, steps)
		losses[t] = m.Loss(adapted, qx, qy)
		accuracies[t] = m.Accuracy(adapted, qx, qy)
		total += weights[t] * losses[t]
	}
	return total, losses, accuracies
}

// CNNFirstOrderMetaGrad is the first-order MAML meta-gradient of
// CNNMetaObjective: the inner gradients are held constant (their Jacobians
// dropped), so each instance contributes the gradient of its query loss at
// the adapted point, with respect to all parameters (the non-adapted BN
// parameters included, at their unchanged values), weighted by weights[t].
func CNNFirstOrderMetaGrad(m CNN, w []float64, b *metalearn.Batch, weights []float64, alpha float64, steps int) []float64 {
	grad := make([]float64, len(w))
	for t := 0; t < b.Tasks; t++ {
		sx, sy, qx, qy := b.Row(t)
		_, g := m.LossGrad(m.Adapt(w, sx, sy, alpha, steps), qx, qy)
		for k := range grad {
			grad[k] += weights[t] * g[k]
		}
	}
	return grad
}
