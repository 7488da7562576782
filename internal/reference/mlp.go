package reference

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/metalearn"
)

// MLP is a fully connected network. Sizes lists the layer widths
// [in, hidden..., out]; Activation ("relu", "tanh", "sigmoid" or "softplus")
// is applied after every layer except the last, so the output is linear.
//
// Parameters live in one flat vector w with, for each layer l in order, the
// weight matrix W_l stored row-major with shape (Sizes[l], Sizes[l+1])
// followed by the bias b_l of length Sizes[l+1]; a layer computes
// h_{l+1} = act(h_l W_l + b_l). The gorgonia model uses the same layout, so a
// vector can be passed unchanged to both.
//
// The methods assume a valid MLP (see Validate) and slices whose lengths match
// the layout; like most numeric code they do not check this on every call.
type MLP struct {
	Sizes      []int
	Activation string
}

// Validate reports whether m describes a usable network: at least an input and
// an output layer, positive widths and a known activation. Call it once on
// configuration input before using the other methods.
func (m MLP) Validate() error {
	if len(m.Sizes) < 2 {
		return fmt.Errorf("reference: MLP needs at least input and output sizes, got %v", m.Sizes)
	}
	for l, s := range m.Sizes {
		if s <= 0 {
			return fmt.Errorf("reference: MLP layer %d has non-positive width %d", l, s)
		}
	}
	switch m.Activation {
	case "relu", "tanh", "sigmoid", "softplus":
		return nil
	}
	return fmt.Errorf("reference: unknown activation %q", m.Activation)
}

// NumParams is the length of the flat parameter vector: the sum over layers of
// Sizes[l]*Sizes[l+1] weights and Sizes[l+1] biases.
func (m MLP) NumParams() int {
	n := 0
	for l := 0; l+1 < len(m.Sizes); l++ {
		n += m.Sizes[l]*m.Sizes[l+1] + m.Sizes[l+1]
	}
	return n
}

// layer returns the weight matrix (row-major, in×out) and bias of layer l as
// sub-slices of w.
func (m MLP) layer(w []float64, l int) (weights, bias []float64) {
	off := 0
	for k := 0; k < l; k++ {
		off += m.Sizes[k]*m.Sizes[k+1] + m.Sizes[k+1]
	}
	in, out := m.Sizes[l], m.Sizes[l+1]
	return w[off : off+in*out], w[off+in*out : off+in*out+out]
}

// act applies the hidden-layer activation to a pre-activation z.
func (m MLP) act(z float64) float64 {
	switch m.Activation {
	case "relu":
		return math.Max(z, 0)
	case "tanh":
		return math.Tanh(z)
	case "sigmoid":
		return sigmoid(z)
	case "softplus":
		// log(1+e^z) without overflow for large z.
		return math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))
	}
	return math.NaN() // unknown activation; Validate rejects it
}

// actDeriv is the derivative of the activation at pre-activation z, given
// also its value a = act(z).
func (m MLP) actDeriv(z, a float64) float64 {
	switch m.Activation {
	case "relu":
		if z > 0 {
			return 1
		}
		return 0
	case "tanh":
		return 1 - a*a
	case "sigmoid":
		return a * (1 - a)
	case "softplus":
		return sigmoid(z)
	}
	return math.NaN() // unknown activation; Validate rejects it
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// forward runs the network on n points and returns, per layer, the
// pre-activations zs[l] (n×Sizes[l+1]) and the layer inputs hs[l]
// (n×Sizes[l]); hs has one extra entry, the output.
func (m MLP) forward(w, x []float64, n int) (zs, hs [][]float64) {
	layers := len(m.Sizes) - 1
	hs = append(hs, x)
	for l := 0; l < layers; l++ {
		W, b := m.layer(w, l)
		in, out := m.Sizes[l], m.Sizes[l+1]
		h := hs[l]
		z := make([]float64, n*out)
		for p := 0; p < n; p++ {
			for j := 0; j < out; j++ {
				s := b[j]
				for i := 0; i < in; i++ {
					s += h[p*in+i] * W[i*out+j]
				}
				z[p*out+j] = s
			}
		}
		next := z
		if l < layers-1 {
			next = make([]float64, len(z))
			for k, v := range z {
				next[k] = m.act(v)
			}
		}
		zs = append(zs, z)
		hs = append(hs, next)
	}
	return zs, hs
}

// Forward evaluates the network on n points: x holds n rows of Sizes[0]
// inputs and the result n rows of Sizes[len-1] outputs, both row-major.
func (m MLP) Forward(w, x []float64, n int) []float64 {
	_, hs := m.forward(w, x, n)
	return hs[len(hs)-1]
}

// Loss is the mean squared error of the network on the points x with targets
// y: the mean over all n*out entries of (pred-y)^2, where n = len(x)/Sizes[0].
func (m MLP) Loss(w, x, y []float64) float64 {
	pred := m.Forward(w, x, len(x)/m.Sizes[0])
	s := 0.0
	for k, p := range pred {
		d := p - y[k]
		s += d * d
	}
	return s / float64(len(pred))
}

// LossGrad returns Loss(w, x, y) and its gradient with respect to w, in the
// flat parameter layout, computed by backpropagation.
func (m MLP) LossGrad(w, x, y []float64) (float64, []float64) {
	n := len(x) / m.Sizes[0]
	zs, hs := m.forward(w, x, n)
	layers := len(m.Sizes) - 1
	pred := hs[layers]

	// delta holds dLoss/dz for the current layer, starting at the output.
	loss := 0.0
	delta := make([]float64, len(pred))
	for k, p := range pred {
		d := p - y[k]
		loss += d * d
		delta[k] = 2 * d / float64(len(pred))
	}
	loss /= float64(len(pred))

	grad := make([]float64, m.NumParams())
	for l := layers - 1; l >= 0; l-- {
		W, _ := m.layer(w, l)
		gW, gb := m.layer(grad, l)
		in, out := m.Sizes[l], m.Sizes[l+1]
		h := hs[l]
		for p := 0; p < n; p++ {
			for j := 0; j < out; j++ {
				d := delta[p*out+j]
				gb[j] += d
				for i := 0; i < in; i++ {
					gW[i*out+j] += h[p*in+i] * d
				}
			}
		}
		if l == 0 {
			break
		}
		// Propagate through W_l, then through the activation of layer l-1,
		// whose pre-activation is zs[l-1] and output is h = hs[l].
		prev := make([]float64, n*in)
		for p := 0; p < n; p++ {
			for i := 0; i < in; i++ {
				s := 0.0
				for j := 0; j < out; j++ {
					s += delta[p*out+j] * W[i*out+j]
				}
				k := p*in + i
				prev[k] = s * m.actDeriv(zs[l-1][k], h[k])
			}
		}
		delta = prev
	}
	return loss, grad
}

// AdaptedLoss is the MAML two-level objective for one task instance: starting
// from w' = w it takes steps gradient steps w' = w' - alpha*grad Loss(w'; sx, sy)
// on the support set and returns the query loss Loss(w'; qx, qy). w is not
// modified.
func (m MLP) AdaptedLoss(w, sx, sy, qx, qy []float64, alpha float64, steps int) float64 {
	adapted := append([]float64(nil), w...)
	for s := 0; s < steps; s++ {
		_, g := m.LossGrad(adapted, sx, sy)
		for k := range adapted {
			adapted[k] -= alpha * g[k]
		}
	}
	return m.Loss(adapted, qx, qy)
}

// MetaObjective evaluates the meta-objective on every instance of b:
// losses[t] is AdaptedLoss on row t (b.Row(t)) and total is
// sum_t weights[t]*losses[t]. weights must have length b.Tasks. It is the
// value whose gradient a metalearn.Objective reports, so tests can compare
// both the losses and, through CentralDiff, the gradient.
func MetaObjective(m MLP, w []float64, b *metalearn.Batch, weights []float64, alpha float64, steps int) (total float64, losses []float64) {
	losses = make([]float64, b.Tasks)
	for t := range losses {
		sx, sy, qx, qy := b.Row(t)
		losses[t] = m.AdaptedLoss(w, sx, sy, qx, qy, alpha, steps)
		total += weights[t] * losses[t]
	}
	return total, losses
}

// CentralDiff approximates the gradient of f at w by central differences
// (f(w+h e_i) - f(w-h e_i)) / 2h in every coordinate. It perturbs a copy, so w
// is left unchanged; with float64 and h around 1e-6 it is accurate to roughly
// 1e-8 relative for smooth f.
func CentralDiff(f func([]float64) float64, w []float64, h float64) []float64 {
	p := append([]float64(nil), w...)
	g := make([]float64, len(w))
	for i := range p {
		p[i] = w[i] + h
		fp := f(p)
		p[i] = w[i] - h
		fm := f(p)
		p[i] = w[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}
