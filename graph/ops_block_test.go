package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"gorgonia.org/tensor"
)

// unfused hides the CNN's forwardValues: an evaluation objective of it
// builds the query pass from the four ops per block, as before convBlock.
type unfused struct {
	Model
	AdaptedParams
}

// TestEvalQueryPassFused: an objective without a meta-gradient runs the
// CNN's first block on the query images as one convBlock op, and its losses
// and accuracies are those of the same objective built from the unfused
// blocks, up to rounding. The op runs the same products on the same chunks
// of images, but it takes the batch-norm statistics of the one-channel
// images from their patches' moments (z's exact moments, not those of the
// rounded z: relative differences of the float32 losses of 4-9e-8 here,
// measured); the bound also covers chunks of one image.
func TestEvalQueryPassFused(t *testing.T) {
	for _, c := range []struct {
		h, w, blocks int
		dt           tensor.Dtype
		chunk        int // chunkValues; 0: the default
		maxRel       float64
	}{
		{28, 28, 4, tensor.Float32, 0, 1e-6},
		{28, 28, 4, tensor.Float32, 1, 1e-6},
		{28, 28, 4, tensor.Float64, 0, 1e-14},
		{28, 28, 4, tensor.Float64, 1, 1e-14},
		{9, 7, 2, tensor.Float32, 0, 1e-6}, // odd sizes: the pool drops a row and a column
		{9, 7, 2, tensor.Float64, 1, 1e-14},
	} {
		t.Run(fmt.Sprintf("%dx%d, %v, chunkValues %d", c.h, c.w, c.dt, c.chunk), func(t *testing.T) {
			if c.chunk > 0 {
				defer func(v int) { chunkValues = v }(chunkValues)
				chunkValues = c.chunk
			}
			rng := rand.New(rand.NewPCG(7, 7))
			m, err := NewCNN(c.h, c.w, 1, 32, c.blocks, 5, false)
			if err != nil {
				t.Fatal(err)
			}
			b := randomImages(rng, 4, 5, 1, 10, c.h, c.w, 1)
			w := m.Init(rng)
			var losses, acc [2][]float64
			for k, model := range []Model{m, unfused{m, m}} {
				obj, err := NewObjective(Spec{Model: model, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 4, Support: 5, Query: 50,
					InShape: m.InShape(), OutDim: 5, Steps: 1, Alpha: 0.4, Dtype: c.dt})
				if err != nil {
					t.Fatal(err)
				}
				fused := false
				for _, s := range obj.prog.steps {
					if o, ok := s.op.(*op); ok {
						_, isBlock := o.k.(convBlockKernel)
						fused = fused || isBlock
					}
				}
				if fused != (k == 0) {
					t.Fatalf("model %d: convBlock in the program %v, want %v", k, fused, k == 0)
				}
				losses[k], acc[k] = make([]float64, 4), make([]float64, 4)
				if err := obj.LossesMetric(w, b, nil, losses[k], acc[k], nil); err != nil {
					t.Fatal(err)
				}
			}
			d := relErr(losses[0], losses[1])
			t.Logf("losses %v, accuracies %v, relative difference %.3g (bit for bit: %v)", losses[0], acc[0], d, reflect.DeepEqual(losses[0], losses[1]))
			if !reflect.DeepEqual(acc[0], acc[1]) || d > c.maxRel {
				t.Errorf("fused: losses %v, accuracies %v; unfused: %v, %v (relative difference %.3g, at most %.3g)",
					losses[0], acc[0], losses[1], acc[1], d, c.maxRel)
			}
		})
	}
}
