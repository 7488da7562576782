package reference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
)

// randCNNParams draws parameters at which the network is well away from
// degenerate cases: kernels and linear weights N(0, 0.5^2), biases and BN
// shifts N(0, 0.3^2), BN scales 1 + N(0, 0.2^2).
func randCNNParams(rng *rand.Rand, m CNN) []float64 {
	w := make([]float64, m.NumParams())
	for _, r := range m.Layout() {
		for k := r.Start; k < r.End; k++ {
			switch {
			case len(r.Shape) > 1:
				w[k] = 0.5 * rng.NormFloat64()
			case strings.HasSuffix(r.Name, "bn_scale"):
				w[k] = 1 + 0.2*rng.NormFloat64()
			default:
				w[k] = 0.3 * rng.NormFloat64()
			}
		}
	}
	return w
}

// randImages draws n images with pixels uniform in [0, 1) and one-hot
// targets with uniformly random labels.
func randImages(rng *rand.Rand, m CNN, n int) (x, y []float64) {
	x = make([]float64, n*m.inDim())
	for i := range x {
		x[i] = rng.Float64()
	}
	y = make([]float64, n*m.Ways)
	for p := 0; p < n; p++ {
		y[p*m.Ways+rng.IntN(m.Ways)] = 1
	}
	return x, y
}

// randImageBatch fills a meta-batch of tasks instances with random images.
func randImageBatch(rng *rand.Rand, m CNN, tasks, support, query int) *metalearn.Batch {
	b := metalearn.NewBatch(tasks, support, query, m.inDim(), m.Ways)
	b.SupportX, b.SupportY = randImages(rng, m, tasks*support)
	b.QueryX, b.QueryY = randImages(rng, m, tasks*query)
	return b
}

func TestCNNValidate(t *testing.T) {
	t.Parallel()
	ok := CNN{H: 28, W: 28, C: 1, Filters: 64, Blocks: 4, Ways: 5, Eps: DefaultBNEps}
	tests := []struct {
		name string
		edit func(*CNN)
		ok   bool
	}{
		{"omniglot conv4", func(*CNN) {}, true},
		{"16x16 just fits 4 blocks", func(m *CNN) { m.H, m.W = 16, 16 }, true},
		{"odd 7x9 with 2 blocks", func(m *CNN) { m.H, m.W, m.Blocks = 7, 9, 2 }, true},
		{"15 rows too few for 4 blocks", func(m *CNN) { m.H = 15 }, false},
		{"5 columns too few for 3 blocks", func(m *CNN) { m.W, m.Blocks = 5, 3 }, false},
		{"huge Blocks", func(m *CNN) { m.Blocks = 64 }, false},
		{"zero H", func(m *CNN) { m.H = 0 }, false},
		{"zero C", func(m *CNN) { m.C = 0 }, false},
		{"zero filters", func(m *CNN) { m.Filters = 0 }, false},
		{"zero blocks", func(m *CNN) { m.Blocks = 0 }, false},
		{"negative ways", func(m *CNN) { m.Ways = -1 }, false},
		{"zero Eps", func(m *CNN) { m.Eps = 0 }, false},
		{"NaN Eps", func(m *CNN) { m.Eps = math.NaN() }, false},
		{"infinite Eps", func(m *CNN) { m.Eps = math.Inf(1) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := ok
			tc.edit(&m)
			if err := m.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestCNNLayout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    CNN
		want int
	}{
		// 9*1*64+3*64 + 3*(9*64*64+3*64) + 64*5+5.
		{"omniglot 5-way", CNN{H: 28, W: 28, C: 1, Filters: 64, Blocks: 4, Ways: 5}, 112261},
		// 9*2*3+9 + 9*3*3+9 + (2*1*3)*2+2 (11x5 -> 5x2 -> 2x1).
		{"11x5 C2 2 blocks", CNN{H: 11, W: 5, C: 2, Filters: 3, Blocks: 2, Ways: 2}, 63 + 90 + 14},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.NumParams(); got != tc.want {
				t.Errorf("NumParams = %d, want %d", got, tc.want)
			}
			layout := tc.m.Layout()
			if len(layout) != 4*tc.m.Blocks+2 {
				t.Fatalf("Layout has %d tensors, want %d", len(layout), 4*tc.m.Blocks+2)
			}
			end := 0
			for _, r := range layout {
				size := 1
				for _, s := range r.Shape {
					size *= s
				}
				if r.Start != end || r.End-r.Start != size {
					t.Errorf("%s: range [%d,%d) shape %v does not follow %d", r.Name, r.Start, r.End, r.Shape, end)
				}
				end = r.End
			}
			lin := layout[len(layout)-2]
			d := (tc.m.H >> tc.m.Blocks) * (tc.m.W >> tc.m.Blocks) * tc.m.Filters
			if lin.Name != "linear.weight" || lin.Shape[0] != d || lin.Shape[1] != tc.m.Ways {
				t.Errorf("linear weight %s %v, want linear.weight [%d %d]", lin.Name, lin.Shape, d, tc.m.Ways)
			}
		})
	}
}

func TestCNNAdaptedMask(t *testing.T) {
	t.Parallel()
	for _, adaptBN := range []bool{false, true} {
		m := CNN{H: 4, W: 4, C: 1, Filters: 2, Blocks: 1, Ways: 2, AdaptBN: adaptBN}
		mask := m.Adapted()
		// kernel 18, bias 2, bn_scale 2, bn_shift 2, linear 4*2*2 = 16, 2.
		for k, a := range mask {
			want := k < 20 || k >= 24 || adaptBN
			if a != want {
				t.Errorf("AdaptBN=%v: Adapted()[%d] = %v, want %v", adaptBN, k, a, want)
			}
		}
		if len(mask) != 42 {
			t.Errorf("mask length %d, want 42", len(mask))
		}
	}
}

func TestCNNLossGradMatchesCentralDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    CNN
		n    int
	}{
		{"8x8 C1 2 blocks 3 filters", CNN{H: 8, W: 8, C: 1, Filters: 3, Blocks: 2, Ways: 3}, 5},
		{"11x9 C2 2 blocks 3 filters (odd, floor pooling)", CNN{H: 11, W: 9, C: 2, Filters: 3, Blocks: 2, Ways: 2}, 4},
		{"7x10 C1 2 blocks 2 filters (odd)", CNN{H: 7, W: 10, C: 1, Filters: 2, Blocks: 2, Ways: 4}, 6},
		{"28x28 C1 4 blocks 2 filters (28-14-7-3-1)", CNN{H: 28, W: 28, C: 1, Filters: 2, Blocks: 4, Ways: 3}, 3},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.Eps = DefaultBNEps
			if err := tc.m.Validate(); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(11, uint64(i)))
			w := randCNNParams(rng, tc.m)
			x, y := randImages(rng, tc.m, tc.n)
			loss, g := tc.m.LossGrad(w, x, y)
			if l := tc.m.Loss(w, x, y); l != loss {
				t.Errorf("LossGrad loss %v != Loss %v", loss, l)
			}
			fd := CentralDiff(func(v []float64) float64 { return tc.m.Loss(v, x, y) }, w, 1e-5)
			e := relErr(g, fd)
			t.Logf("%d params, loss %.4f, relative error %.3g", len(w), loss, e)
			if e > 1e-6 {
				t.Errorf("relative error %.3g between backprop and central differences", e)
			}
		})
	}
}

// metaCase is a small 2-task 2-way meta-batch for the two-level objective.
func metaCase(adaptBN bool, seed uint64) (CNN, []float64, *metalearn.Batch, []float64) {
	m := CNN{H: 6, W: 5, C: 1, Filters: 2, Blocks: 2, Ways: 2, AdaptBN: adaptBN, Eps: DefaultBNEps}
	rng := rand.New(rand.NewPCG(13, seed))
	w := randCNNParams(rng, m)
	b := randImageBatch(rng, m, 2, 4, 6)
	return m, w, b, []float64{0.3, 0.7}
}

// TestCNNFirstOrderMetaGradDefinition checks CNNFirstOrderMetaGrad against
// its definition: the central-difference gradient of
// v -> sum_t weights[t] * Loss(v + delta_t; query t), where the inner-loop
// displacement delta_t = Adapt(w) - w is held constant.
func TestCNNFirstOrderMetaGradDefinition(t *testing.T) {
	t.Parallel()
	for _, adaptBN := range []bool{false, true} {
		for _, steps := range []int{0, 1, 2} {
			m, w, b, weights := metaCase(adaptBN, uint64(steps))
			const alpha = 0.4
			deltas := make([][]float64, b.Tasks)
			for i := range deltas {
				sx, sy, _, _ := b.Row(i)
				deltas[i] = m.Adapt(w, sx, sy, alpha, steps)
				for k := range w {
					deltas[i][k] -= w[k]
				}
			}
			f := func(v []float64) float64 {
				total := 0.0
				for i, d := range deltas {
					_, _, qx, qy := b.Row(i)
					shifted := make([]float64, len(v))
					for k := range v {
						shifted[k] = v[k] + d[k]
					}
					total += weights[i] * m.Loss(shifted, qx, qy)
				}
				return total
			}
			g := CNNFirstOrderMetaGrad(m, w, b, weights, alpha, steps)
			e := relErr(g, CentralDiff(f, w, 1e-5))
			t.Logf("AdaptBN=%v steps=%d: relative error %.3g", adaptBN, steps, e)
			if e > 1e-6 {
				t.Errorf("AdaptBN=%v steps=%d: relative error %.3g", adaptBN, steps, e)
			}
		}
	}
}

// TestCNNMetaGrad checks the exact meta-gradient CNNMetaGrad against central
// differences of the full two-level objective CNNMetaObjective, and shows that
// this check tells first from second order: CNNFirstOrderMetaGrad equals it
// without inner steps and differs measurably with them.
func TestCNNMetaGrad(t *testing.T) {
	t.Parallel()
	for _, adaptBN := range []bool{false, true} {
		for _, steps := range []int{0, 1, 2} {
			m, w, b, weights := metaCase(adaptBN, uint64(steps))
			const alpha = 0.4
			f := func(v []float64) float64 {
				total, _, _ := CNNMetaObjective(m, v, b, weights, alpha, steps)
				return total
			}
			fd := CentralDiff(f, w, 1e-5)
			exact := relErr(CNNMetaGrad(m, w, b, weights, alpha, steps), fd)
			first := relErr(CNNFirstOrderMetaGrad(m, w, b, weights, alpha, steps), fd)
			t.Logf("AdaptBN=%v steps=%d: relative error to two-level central differences: exact %.3g, first order %.3g", adaptBN, steps, exact, first)
			if exact > 1e-6 {
				t.Errorf("AdaptBN=%v steps=%d: CNNMetaGrad relative error %.3g", adaptBN, steps, exact)
			}
			if steps == 0 && first > 1e-6 {
				t.Errorf("steps=0: first order and exact gradient differ by %.3g, want equal", first)
			}
			if steps > 0 && first < 1e-2 {
				t.Errorf("AdaptBN=%v steps=%d: first order within %.3g of the exact gradient: the check cannot tell them apart", adaptBN, steps, first)
			}
		}
	}
}

func TestCNNMetaObjective(t *testing.T) {
	t.Parallel()
	m, w, b, weights := metaCase(false, 7)
	const alpha, steps = 0.4, 2
	w0 := append([]float64(nil), w...)
	total, losses, accs := CNNMetaObjective(m, w, b, weights, alpha, steps)
	want := 0.0
	for i := range losses {
		sx, sy, qx, qy := b.Row(i)
		if l := m.AdaptedLoss(w, sx, sy, qx, qy, alpha, steps); losses[i] != l {
			t.Errorf("losses[%d] = %v, want AdaptedLoss %v", i, losses[i], l)
		}
		if a := m.AdaptedAccuracy(w, sx, sy, qx, qy, alpha, steps); accs[i] != a {
			t.Errorf("accuracies[%d] = %v, want AdaptedAccuracy %v", i, accs[i], a)
		}
		want += weights[i] * losses[i]
	}
	if math.Abs(total-want) > 1e-15 {
		t.Errorf("total = %v, want %v", total, want)
	}
	for k := range w {
		if w[k] != w0[k] {
			t.Fatal("CNNMetaObjective modified w")
		}
	}
	// Without steps the losses are the plain query losses.
	_, losses, _ = CNNMetaObjective(m, w, b, weights, alpha, 0)
	for i := range losses {
		_, _, qx, qy := b.Row(i)
		if l := m.Loss(w, qx, qy); losses[i] != l {
			t.Errorf("steps=0: losses[%d] = %v, want %v", i, losses[i], l)
		}
	}
}

// TestCNNAdaptTouchesOnlyAdapted checks that the inner loop leaves the
// parameters not marked Adapted unchanged and moves every adapted tensor,
// except the conv biases: batch norm subtracts the channel mean, so the loss
// does not depend on them and their gradient is zero up to rounding.
func TestCNNAdaptTouchesOnlyAdapted(t *testing.T) {
	t.Parallel()
	for _, adaptBN := range []bool{false, true} {
		m, w, b, _ := metaCase(adaptBN, 3)
		sx, sy, _, _ := b.Row(0)
		adapted := m.Adapt(w, sx, sy, 0.4, 2)
		_, g := m.LossGrad(w, sx, sy)
		for _, r := range m.Layout() {
			moved, maxGrad := 0, 0.0
			for k := r.Start; k < r.End; k++ {
				if adapted[k] != w[k] {
					moved++
				}
				maxGrad = math.Max(maxGrad, math.Abs(g[k]))
			}
			convBias := r.Name != "linear.bias" && strings.HasSuffix(r.Name, ".bias")
			switch {
			case convBias && maxGrad > 1e-14:
				t.Errorf("AdaptBN=%v %s: gradient up to %.3g, want 0 (removed by batch norm)", adaptBN, r.Name, maxGrad)
			case !r.Adapted && moved > 0:
				t.Errorf("AdaptBN=%v %s: %d values moved though not adapted", adaptBN, r.Name, moved)
			case r.Adapted && !convBias && moved != r.End-r.Start:
				t.Errorf("AdaptBN=%v %s: only %d of %d values moved", adaptBN, r.Name, moved, r.End-r.Start)
			}
		}
	}
}

// TestCNNZeroKernels: with every conv kernel zero, each block's conv output
// is its bias, constant per channel, so batch norm maps it to beta and the
// features are relu(beta of the last block) at every position, whatever the
// input: logits[j] = b_lin[j] + sum_{pos,f} relu(beta[f]) * W_lin[pos*F+f][j].
func TestCNNZeroKernels(t *testing.T) {
	t.Parallel()
	m := CNN{H: 9, W: 12, C: 2, Filters: 3, Blocks: 2, Ways: 3, Eps: DefaultBNEps}
	rng := rand.New(rand.NewPCG(17, 1))
	w := randCNNParams(rng, m)
	layout := m.Layout()
	for _, r := range layout {
		if len(r.Shape) == 4 {
			clear(w[r.Start:r.End])
		}
	}
	beta := w[layout[4*m.Blocks-1].Start:layout[4*m.Blocks-1].End]
	linW, linB := w[layout[4*m.Blocks].Start:layout[4*m.Blocks].End], w[layout[4*m.Blocks+1].Start:]
	positions := (m.H >> m.Blocks) * (m.W >> m.Blocks)
	want := append([]float64(nil), linB...)
	for pos := 0; pos < positions; pos++ {
		for f := 0; f < m.Filters; f++ {
			for j := range want {
				want[j] += math.Max(beta[f], 0) * linW[(pos*m.Filters+f)*m.Ways+j]
			}
		}
	}
	const n = 4
	x, _ := randImages(rng, m, n)
	got := m.Forward(w, x, n)
	for p := 0; p < n; p++ {
		for j := range want {
			if d := math.Abs(got[p*m.Ways+j] - want[j]); d > 1e-12 {
				t.Errorf("point %d logit %d = %.17g, want %.17g", p, j, got[p*m.Ways+j], want[j])
			}
		}
	}
}

// TestCNNUniformLogits: with a zero linear layer every logit is 0, so the
// cross-entropy is log N and the prediction is class 0 (first maximum).
func TestCNNUniformLogits(t *testing.T) {
	t.Parallel()
	for _, ways := range []int{2, 5, 20} {
		m := CNN{H: 8, W: 8, C: 1, Filters: 2, Blocks: 3, Ways: ways, Eps: DefaultBNEps}
		rng := rand.New(rand.NewPCG(19, uint64(ways)))
		w := randCNNParams(rng, m)
		layout := m.Layout()
		clear(w[layout[4*m.Blocks].Start:])
		const n = 6
		x, y := randImages(rng, m, n)
		if l := m.Loss(w, x, y); math.Abs(l-math.Log(float64(ways))) > 1e-14 {
			t.Errorf("%d ways: loss %.17g, want log N = %.17g", ways, l, math.Log(float64(ways)))
		}
		zeros := 0
		for p := 0; p < n; p++ {
			if y[p*ways] == 1 {
				zeros++
			}
		}
		if a := m.Accuracy(w, x, y); a != float64(zeros)/n {
			t.Errorf("%d ways: accuracy %v, want fraction of label 0 = %v", ways, a, float64(zeros)/n)
		}
	}
}

// TestCNNForwardLayout pins the flatten order (h, w, c) of the last block
// output and the row-major (D, Ways) linear weight on a one-block net whose
// two filters copy the image (centre tap +1) and its negation (centre tap -1):
// batch norm is then an increasing map of +-pixel, so channel 0 pools the
// window maximum and channel 1 minus the window minimum, normalised with the
// image's own mean and biased variance.
func TestCNNForwardLayout(t *testing.T) {
	t.Parallel()
	m := CNN{H: 4, W: 4, C: 1, Filters: 2, Blocks: 1, Ways: 8, Eps: DefaultBNEps}
	img := []float64{
		0.1, 0.9, 0.4, 0.3,
		0.5, 0.2, 0.8, 0.6,
		0.7, 0.0, 0.25, 0.35,
		0.15, 0.45, 0.95, 0.05,
	}
	mean, variance := 0.0, 0.0
	for _, v := range img {
		mean += v / 16
	}
	for _, v := range img {
		variance += (v - mean) * (v - mean) / 16
	}
	inv := 1 / math.Sqrt(variance+m.Eps)
	// Window maxima and minima in (py, px) order.
	maxima := []float64{0.9, 0.8, 0.7, 0.95}
	minima := []float64{0.1, 0.3, 0.0, 0.05}

	w := make([]float64, m.NumParams())
	layout := m.Layout()
	kernel, gamma := layout[0], layout[2]
	w[kernel.Start+(1*3+1)*2+0] = 1  // [kh=1][kw=1][cin=0][f=0]
	w[kernel.Start+(1*3+1)*2+1] = -1 // [kh=1][kw=1][cin=0][f=1]
	w[gamma.Start], w[gamma.Start+1] = 1, 1
	linW, linB := layout[4], layout[5]
	for i := 0; i < 8; i++ {
		w[linW.Start+i*8+(i+3)%8] = 1 // feature i feeds logit (i+3) mod 8
		w[linB.Start+i] = float64(i) / 10
	}
	got := m.Forward(w, img, 1)
	for pos := 0; pos < 4; pos++ {
		feats := []float64{math.Max((maxima[pos]-mean)*inv, 0), math.Max((mean-minima[pos])*inv, 0)}
		for f, v := range feats {
			j := ((pos*2 + f) + 3) % 8
			want := v + float64(j)/10
			if math.Abs(got[j]-want) > 1e-13 {
				t.Errorf("logit %d (position %d, channel %d) = %.17g, want %.17g", j, pos, f, got[j], want)
			}
		}
	}
}

// TestCNNHessVec checks HessVec against central differences of LossGrad along
// v, (grad(w + h v) - grad(w - h v)) / 2h, for random directions, AdaptBN
// irrelevant (the Hessian is of the plain loss).
func TestCNNHessVec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    CNN
		n    int
	}{
		{"8x8 C1 2 blocks 3 filters", CNN{H: 8, W: 8, C: 1, Filters: 3, Blocks: 2, Ways: 3}, 5},
		{"11x9 C2 2 blocks 3 filters", CNN{H: 11, W: 9, C: 2, Filters: 3, Blocks: 2, Ways: 2}, 4},
		{"28x28 C1 4 blocks 2 filters", CNN{H: 28, W: 28, C: 1, Filters: 2, Blocks: 4, Ways: 3}, 3},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.Eps = DefaultBNEps
			rng := rand.New(rand.NewPCG(31, uint64(i)))
			w := randCNNParams(rng, tc.m)
			x, y := randImages(rng, tc.m, tc.n)
			for trial := 0; trial < 3; trial++ {
				v := randVec(rng, len(w), 1)
				const h = 1e-5
				plus, minus := make([]float64, len(w)), make([]float64, len(w))
				for k := range w {
					plus[k], minus[k] = w[k]+h*v[k], w[k]-h*v[k]
				}
				_, gp := tc.m.LossGrad(plus, x, y)
				_, gm := tc.m.LossGrad(minus, x, y)
				fd := make([]float64, len(w))
				for k := range fd {
					fd[k] = (gp[k] - gm[k]) / (2 * h)
				}
				e := relErr(tc.m.HessVec(w, x, y, v), fd)
				t.Logf("direction %d: relative error %.3g", trial, e)
				if e > 1e-6 {
					t.Errorf("direction %d: relative error %.3g between HessVec and central differences of LossGrad", trial, e)
				}
			}
		})
	}
}

// TestCNNSetStatistics: batch norm pools its statistics over the whole set,
// symmetrically, so permuting the points permutes the logits (to rounding),
// while a point's logits change when the rest of the set changes.
func TestCNNSetStatistics(t *testing.T) {
	t.Parallel()
	m := CNN{H: 7, W: 6, C: 2, Filters: 3, Blocks: 2, Ways: 3, Eps: DefaultBNEps}
	rng := rand.New(rand.NewPCG(37, 1))
	w := randCNNParams(rng, m)
	const n = 5
	x, _ := randImages(rng, m, n)
	perm := []int{3, 0, 4, 1, 2}
	px := make([]float64, len(x))
	for i, p := range perm {
		copy(px[i*m.inDim():(i+1)*m.inDim()], x[p*m.inDim():(p+1)*m.inDim()])
	}
	logits, plogits := m.Forward(w, x, n), m.Forward(w, px, n)
	for i, p := range perm {
		for j := 0; j < m.Ways; j++ {
			if d := math.Abs(plogits[i*m.Ways+j] - logits[p*m.Ways+j]); d > 1e-12 {
				t.Errorf("permuted point %d logit %d differs by %.3g", i, j, d)
			}
		}
	}
	alone := m.Forward(w, x[:2*m.inDim()], 2)
	if relErr(alone, logits[:2*m.Ways]) < 1e-3 {
		t.Errorf("logits of points 0 and 1 hardly depend on the rest of the set: %v vs %v", alone, logits[:2*m.Ways])
	}
}
