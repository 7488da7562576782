package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/tensor"
)

// plainCNNLoss is the softmax cross-entropy of m on n images x with one-hot
// labels y at the flat parameters w, written out in plain Go from the
// definition in CNN's doc (strided convolution, batch norm over the set,
// ReLU, max-pool, hidden layer), independently of the graph's ops.
func plainCNNLoss(m CNN, w, x, y []float64, n int) float64 {
	var ts [][]float64
	off := 0
	for _, s := range m.ParamShapes() {
		ts = append(ts, w[off:off+s.TotalSize()])
		off += s.TotalSize()
	}
	h, W, c := m.H, m.W, m.C
	stride := 1
	if m.pool() == PoolStride {
		stride = 2
	}
	nb := m.blockParams()
	for l := 0; l < m.Blocks; l++ {
		p := ts[nb*l : nb*l+nb]
		z := naiveConvSP(x, p[0], p[1], 1, n, h, W, c, m.Filters, stride, 1)
		if stride == 2 {
			h, W = (h+1)/2, (W+1)/2
		}
		if !m.NoBatchNorm {
			z = naiveBatchNorm(z, p[2], p[3], 1, n*h*W, m.Filters, m.Eps)
		}
		for i, v := range z {
			z[i] = math.Max(v, 0)
		}
		if m.pool() == PoolMax {
			z = naiveMaxPool(z, n, h, W, m.Filters)
			h, W = h/2, W/2
		}
		x, c = z, m.Filters
	}
	head := ts[nb*m.Blocks:]
	d := h * W * c
	for len(head) > 2 {
		o := len(head[1])
		z := gtMatMul(x, head[0], n, d, o)
		for i := range z {
			z[i] = math.Max(z[i]+head[1][i%o], 0)
		}
		x, d, head = z, o, head[2:]
	}
	z := gtMatMul(x, head[0], n, d, m.Ways)
	for i := range z {
		z[i] += head[1][i%m.Ways]
	}
	return naiveSoftmaxCE(z, y, 1, n, m.Ways)[0]
}

// plainMetaLosses are the adapted query losses of every task of b: steps
// inner SGD steps of size alpha on every parameter but the batch-norm scales
// and shifts (those too if adaptBN), the inner gradient by central
// differences of plainCNNLoss.
func plainMetaLosses(m CNN, adaptBN bool, w []float64, b *metalearn.Batch, alpha float64, steps int) []float64 {
	var mask []bool
	for i, s := range m.ParamShapes() {
		bn := !m.NoBatchNorm && i < 4*m.Blocks && i%4 >= 2
		for range s.TotalSize() {
			mask = append(mask, adaptBN || !bn)
		}
	}
	losses := make([]float64, b.Tasks)
	for t := range losses {
		sx, sy, qx, qy := b.Row(t)
		ns, nq := len(sy)/m.Ways, len(qy)/m.Ways
		v := append([]float64(nil), w...)
		for range steps {
			g := reference.CentralDiff(func(v []float64) float64 { return plainCNNLoss(m, v, sx, sy, ns) }, v, 1e-6)
			for i := range v {
				if mask[i] {
					v[i] -= alpha * g[i]
				}
			}
		}
		losses[t] = plainCNNLoss(m, v, qx, qy, nq)
	}
	return losses
}

// TestCNNVariants checks every pooling, batch-norm setting and the hidden
// layer of CNN on 7x6 colour images: the adapted query losses against
// plainMetaLosses, the second-order meta-gradient against central
// differences of the two-level objective, and float32 against float64.
func TestCNNVariants(t *testing.T) {
	t.Parallel()
	const tasks, ways, shots, queries, steps, alpha = 2, 2, 2, 2, 2, 0.3
	for ci, s := range []Conv4{
		{Filters: 3, Blocks: 2, Channels: 3, Height: 7, Width: 6, Pool: PoolStride, BatchNorm: BatchNormAdapt},
		{Filters: 3, Blocks: 2, Channels: 3, Height: 5, Width: 4, Pool: PoolNone, BatchNorm: BatchNormFixed, Hidden: 4},
		{Filters: 3, Blocks: 2, Channels: 3, Height: 7, Width: 6, Pool: PoolMax, BatchNorm: BatchNormOff},
		{Filters: 3, Blocks: 2, Channels: 2, Height: 6, Width: 7, Pool: PoolStride, BatchNorm: BatchNormOff, Hidden: 5},
		{Filters: 3, Blocks: 2, Channels: 3, Height: 7, Width: 6, Pool: PoolMax, BatchNorm: BatchNormAdapt, Hidden: 3},
	} {
		t.Run(fmt.Sprintf("%s pool, batch norm %s, hidden %d", s.Pool, s.BatchNorm, s.Hidden), func(t *testing.T) {
			m, err := s.CNN(ways)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			b := randomImages(rng, tasks, ways, shots, queries, s.Height, s.Width, s.Channels)
			w := m.Init(rng)
			for i := range w {
				w[i] += 0.2 * rng.NormFloat64()
			}
			weights := []float64{0.7, 1.6}
			spec := Spec{Model: m, Loss: SoftmaxCrossEntropy, Tasks: tasks, Support: ways * shots, Query: ways * queries,
				InShape: m.InShape(), OutDim: ways, Steps: steps, Alpha: alpha, MetaGradient: true}
			run := func(spec Spec, w []float64, withGrad bool) (losses, grad []float64) {
				obj, err := NewObjective(spec)
				if err != nil {
					t.Fatal(err)
				}
				losses = make([]float64, tasks)
				ws := weights
				if withGrad {
					grad = make([]float64, len(w))
				} else {
					ws = nil
				}
				if err := obj.LossesMetric(w, b, ws, losses, nil, grad); err != nil {
					t.Fatal(err)
				}
				return losses, grad
			}
			losses, grad := run(spec, w, true)
			if want := plainMetaLosses(m, s.BatchNorm == BatchNormAdapt, w, b, alpha, steps); relErr(losses, want) > 1e-7 {
				t.Errorf("adapted losses %v, plain Go %v", losses, want)
			}
			values := spec
			values.MetaGradient = false
			objVal, err := NewObjective(values)
			if err != nil {
				t.Fatal(err)
			}
			total := func(v []float64) float64 {
				l := make([]float64, tasks)
				if err := objVal.LossesMetric(v, b, nil, l, nil, nil); err != nil {
					t.Fatal(err)
				}
				return weights[0]*l[0] + weights[1]*l[1]
			}
			if d := relErr(grad, reference.CentralDiff(total, w, 1e-6)); d > 1e-6 {
				t.Errorf("meta-gradient relative error %.3g against central differences", d)
			}
			spec.Dtype = tensor.Float32
			l32, g32 := run(spec, w, true)
			if relErr(l32, losses) > 1e-4 || relErr(g32, grad) > 1e-3 {
				t.Errorf("float32: losses %v (float64 %v), meta-gradient relative error %.3g", l32, losses, relErr(g32, grad))
			}
		})
	}
}

// TestCNNColourFiveSteps compares the second-order meta-gradient of a
// colour CNN (3 channels, max-pooling, batch norm adapted and not) after 5
// inner steps with central differences of the independent reference's
// two-level objective, on every convolution path (as chosen, Winograd
// F(2x2) and F(4x4)).
func TestCNNColourFiveSteps(t *testing.T) {
	const tasks, ways, shots, queries, steps, alpha = 2, 2, 1, 2, 5, 0.1
	for _, wino := range []int{0, 2, 4} {
		for _, adapt := range []bool{false, true} {
			t.Run(fmt.Sprintf("Winograd %d, BN adapted %v", wino, adapt), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, uint64(wino)))
				m, err := NewCNN(6, 5, 3, 3, 2, ways, adapt)
				if err != nil {
					t.Fatal(err)
				}
				m.tune.winograd = wino
				ref := reference.CNN{H: 6, W: 5, C: 3, Filters: 3, Blocks: 2, Ways: ways, AdaptBN: adapt, Eps: 1e-5}
				b := randomImages(rng, tasks, ways, shots, queries, 6, 5, 3)
				w := m.Init(rng)
				for i := range w {
					w[i] += 0.2 * rng.NormFloat64()
				}
				weights := []float64{0.7, 1.6}
				want := reference.CentralDiff(func(w []float64) float64 {
					v, _, _ := reference.CNNMetaObjective(ref, w, b, weights, alpha, steps)
					return v
				}, w, 1e-6)
				obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Tasks: tasks, Support: ways * shots,
					Query: ways * queries, InShape: m.InShape(), OutDim: ways, Steps: steps, Alpha: alpha, MetaGradient: true})
				if err != nil {
					t.Fatal(err)
				}
				losses, grad := make([]float64, tasks), make([]float64, len(w))
				if err := obj.LossesMetric(w, b, weights, losses, nil, grad); err != nil {
					t.Fatal(err)
				}
				if d := relErr(grad, want); d > 1e-6 {
					t.Errorf("meta-gradient relative error %.3g", d)
				}
			})
		}
	}
}

// TestCNNRefusesShapes: settings a CNN cannot take are refused naming what
// is wrong; a pooling chain that shrinks the image to nothing names the
// image, the pooling and the block.
func TestCNNRefusesShapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Conv4
		want string
	}{
		{Conv4{Filters: 8, Blocks: 4, Channels: 1, Height: 11, Width: 9, Pool: PoolMax, BatchNorm: BatchNormFixed}, "11x9 images are too small for 4 blocks of max pooling: block 4 gets 1x1"},
		{Conv4{Filters: 8, Blocks: 2, Channels: 1, Height: 11, Width: 9, Pool: "avg", BatchNorm: BatchNormFixed}, `pool "avg": want max, stride or none`},
		{Conv4{Filters: 8, Blocks: 2, Channels: 1, Height: 11, Width: 9, Pool: PoolMax, BatchNorm: "on"}, `batch_norm "on": want adapt, fixed or off`},
		{Conv4{Filters: 0, Blocks: 2, Channels: 1, Height: 11, Width: 9, Pool: PoolMax, BatchNorm: BatchNormOff}, "sizes must be >= 1"},
	} {
		if _, err := c.s.CNN(5); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.s, err, c.want)
		}
	}
	// Strided blocks never shrink an image to nothing.
	if _, err := (Conv4{Filters: 2, Blocks: 6, Channels: 3, Height: 3, Width: 1, Pool: PoolStride, BatchNorm: BatchNormOff}).CNN(2); err != nil {
		t.Error(err)
	}
}

// TestConv4Settings pins the two published models as settings: the paper's
// Omniglot model is NewCNN's, and MAML's mini-ImageNet model has 5x5x32
// features into its output layer.
func TestConv4Settings(t *testing.T) {
	t.Parallel()
	omni, err := Conv4{Filters: 64, Blocks: 4, Channels: 1, Height: 28, Width: 28, Pool: PoolMax, BatchNorm: BatchNormFixed}.CNN(5)
	if err != nil {
		t.Fatal(err)
	}
	paper, _ := NewCNN(28, 28, 1, 64, 4, 5, false)
	paper.Pool = PoolMax
	if omni != paper {
		t.Errorf("Omniglot settings give %+v, NewCNN %+v", omni, paper)
	}
	mini, err := Conv4{Filters: 32, Blocks: 4, Channels: 3, Height: 84, Width: 84, Pool: PoolMax, BatchNorm: BatchNormAdapt}.CNN(5)
	if err != nil {
		t.Fatal(err)
	}
	shapes := mini.ParamShapes()
	if got := shapes[len(shapes)-2]; !got.Eq(tensor.Shape{5 * 5 * 32, 5}) {
		t.Errorf("mini-ImageNet output layer %v, want (800, 5)", got)
	}
	if shapes[0][0] != 27 {
		t.Errorf("first kernel %v, want 27 rows (3x3x3)", shapes[0])
	}
}
