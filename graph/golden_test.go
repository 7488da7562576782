package graph

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// goldenBits are the SHA-256 digests of the float64 bits of the losses
// and meta-gradient of each goldenCase, by kernel set (Kernels). Runs,
// and the tables and figures in docs/ made from them, reproduce bit for
// bit only while these hold: a change that reorders a sum passes every
// tolerance test yet moves a 70,000-iteration run's final numbers (a
// chaotic trajectory amplifies 1e-16 to the second digit). Update a digest
// only for an intended change of the arithmetic, and say in the commit
// which generated files in docs/ were made again.
var goldenBits = map[string]map[string]string{
	"BLAS gonum (pure Go), SIMD loops (SSE)": {
		"sine second order": "39bf279b78a859ab", "sine first order": "f9668229597755de", "sine two steps": "52981562bed8943f", "cnn second order (f32)": "e4f19ce028151499",
	},
	"BLAS gonum (pure Go), SIMD loops (AVX-512)": {
		"sine second order": "a077ee6ad712c831", "sine first order": "2b7f45377034ffb3", "sine two steps": "9f4707633969d086", "cnn second order (f32)": "5bb20f0bd19ab536",
	},
	"BLAS openblas (Cooperlake kernels), SIMD loops (AVX-512)": {
		"sine second order": "c4d3fe92c5346595", "sine first order": "bf0487c9ea26e049", "sine two steps": "4483a4ae6f7d329d", "cnn second order (f32)": "2cac6a36a9718b8e",
	},
}

// goldenCases are small objectives on the engine's main paths: the sine
// MLP (dense products, the tiled weights' gradients, ReLU), in second and
// first order and with two inner steps, and a CNN in float32 (convolution,
// batch norm, max pooling, softmax cross-entropy).
var goldenCases = []struct {
	name string
	spec func() (Spec, error)
}{
	{"sine second order", func() (Spec, error) { return sineSpec(1, false) }},
	{"sine first order", func() (Spec, error) { return sineSpec(1, true) }},
	{"sine two steps", func() (Spec, error) { return sineSpec(2, false) }},
	{"cnn second order (f32)", func() (Spec, error) {
		m, err := NewCNN(28, 28, 1, 8, 4, 5, false)
		return Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 4, Support: 5, Query: 10,
			InShape: m.InShape(), OutDim: 5, Steps: 1, Alpha: 0.1, MetaGradient: true, Dtype: tensor.Float32}, err
	}},
}

// sineSpec is the paper's sine setting at K = J = 5 with 25 tasks.
func sineSpec(steps int, firstOrder bool) (Spec, error) {
	mlp, err := NewMLP([]int{1, 40, 40, 1}, ReLU)
	return Spec{Model: mlp, Tasks: 25, Support: 5, Query: 5, Loss: MSELoss, InShape: []int{1}, OutDim: 1,
		Steps: steps, Alpha: 1e-3, FirstOrder: firstOrder, MetaGradient: true}, err
}

// TestGoldenBits checks that this kernel set computes the recorded bits
// (goldenBits); kernel sets without a record are skipped.
func TestGoldenBits(t *testing.T) {
	want, ok := goldenBits[Kernels()]
	if !ok {
		t.Skipf("no bits recorded for the kernel set %q", Kernels())
	}
	for _, c := range goldenCases {
		spec, err := c.spec()
		if err != nil {
			t.Fatal(err)
		}
		got, err := goldenDigest(spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != want[c.name] {
			t.Errorf("%s: bits %s, recorded %s for %q: the arithmetic changed, and runs made before no longer reproduce bit for bit",
				c.name, got, want[c.name], Kernels())
		}
	}
}

// goldenDigest runs spec's objective twice on a seeded batch and
// parameters with unequal task weights and returns the digest of the
// second call's losses and meta-gradient (the first allocates).
func goldenDigest(spec Spec) (string, error) {
	obj, err := NewObjective(spec)
	if err != nil {
		return "", err
	}
	rng := rand.New(rand.NewPCG(3, 5))
	b := randomBatch(rng, spec.Tasks, spec.Support, spec.Query, spec.inDim())
	if spec.Loss == SoftmaxCrossEntropy {
		b = randomImages(rng, spec.Tasks, spec.OutDim, spec.Support/spec.OutDim, spec.Query/spec.OutDim, 28, 28, 1)
	}
	w := randomParams(rng, obj.NumParams(), 0.1)
	weights := make([]float64, spec.Tasks)
	for i := range weights {
		weights[i] = float64(i+1) / float64(spec.Tasks*(spec.Tasks+1)/2)
	}
	losses, grad := make([]float64, spec.Tasks), make([]float64, len(w))
	for range 2 {
		if err := obj.Losses(w, b, weights, losses, grad); err != nil {
			return "", err
		}
	}
	h := sha256.New()
	for _, v := range append(losses, grad...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("non-finite value %v", v)
		}
		binary.Write(h, binary.LittleEndian, math.Float64bits(v))
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16], nil
}
