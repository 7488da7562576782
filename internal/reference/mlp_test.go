package reference

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
)

var activations = []string{"relu", "tanh", "sigmoid", "softplus"}

func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// relErr is the norm-wise relative error ||a-b|| / max(||a||, ||b||).
func relErr(a, b []float64) float64 {
	var diff, na, nb float64
	for i := range a {
		diff += (a[i] - b[i]) * (a[i] - b[i])
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	den := math.Sqrt(math.Max(na, nb))
	if den == 0 {
		return math.Sqrt(diff)
	}
	return math.Sqrt(diff) / den
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    MLP
		ok   bool
	}{
		{"sine net", MLP{[]int{1, 40, 40, 1}, "relu"}, true},
		{"linear", MLP{[]int{1, 1}, "tanh"}, true},
		{"one layer", MLP{[]int{3}, "relu"}, false},
		{"zero width", MLP{[]int{1, 0, 1}, "relu"}, false},
		{"bad activation", MLP{[]int{1, 1}, "gelu"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.m.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestNumParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sizes []int
		want  int
	}{
		{[]int{1, 40, 40, 1}, 1761},
		{[]int{1, 1}, 2},
		{[]int{3, 2}, 8},
		{[]int{2, 5, 4, 3}, 54},
	}
	for _, tc := range tests {
		if got := (MLP{Sizes: tc.sizes, Activation: "relu"}).NumParams(); got != tc.want {
			t.Errorf("NumParams(%v) = %d, want %d", tc.sizes, got, tc.want)
		}
	}
}

func TestForwardShapes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sizes := range [][]int{{1, 40, 40, 1}, {2, 5, 4, 3}, {3, 2}} {
		m := MLP{Sizes: sizes, Activation: "tanh"}
		w := randVec(rng, m.NumParams(), 0.5)
		for _, n := range []int{1, 7} {
			x := randVec(rng, n*sizes[0], 1)
			out := m.Forward(w, x, n)
			if want := n * sizes[len(sizes)-1]; len(out) != want {
				t.Errorf("Forward(%v, n=%d) has length %d, want %d", sizes, n, len(out), want)
			}
			_, g := m.LossGrad(w, x, make([]float64, len(out)))
			if len(g) != m.NumParams() {
				t.Errorf("LossGrad(%v) gradient length %d, want %d", sizes, len(g), m.NumParams())
			}
		}
	}
}

// TestForwardLayout pins the flat parameter layout (row-major W, then b) and
// that the output layer is linear.
func TestForwardLayout(t *testing.T) {
	t.Parallel()
	// One linear layer 2->3: W = [[1,2,3],[4,5,6]], b = [10,20,30].
	lin := MLP{Sizes: []int{2, 3}, Activation: "relu"}
	w := []float64{1, 2, 3, 4, 5, 6, 10, 20, 30}
	got := lin.Forward(w, []float64{1, 2, -1, 0}, 2)
	want := []float64{19, 32, 45, 9, 18, 27}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("linear Forward = %v, want %v", got, want)
		}
	}

	// 1->2->1 with W0 = [1,-1], b0 = 0, W1 = [1,1], b1 = 0.5, at x = 2:
	// output = act(2) + act(-2) + 0.5.
	w = []float64{1, -1, 0, 0, 1, 1, 0.5}
	tests := []struct {
		act  string
		want float64
	}{
		{"relu", 2.5},
		{"tanh", 0.5},    // tanh is odd
		{"sigmoid", 1.5}, // sigmoid(z)+sigmoid(-z) = 1
		{"softplus", 2.5 + 2*math.Log1p(math.Exp(-2))}, // sp(z) = z + sp(-z)
	}
	for _, tc := range tests {
		m := MLP{Sizes: []int{1, 2, 1}, Activation: tc.act}
		if got := m.Forward(w, []float64{2}, 1)[0]; math.Abs(got-tc.want) > 1e-14 {
			t.Errorf("%s: Forward = %.17g, want %.17g", tc.act, got, tc.want)
		}
	}
}

func TestLossGradMatchesCentralDiff(t *testing.T) {
	t.Parallel()
	for _, act := range activations {
		t.Run(act, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			m := MLP{Sizes: []int{2, 5, 4, 3}, Activation: act}
			w := randVec(rng, m.NumParams(), 0.7)
			const n = 7
			x := randVec(rng, n*2, 1)
			y := randVec(rng, n*3, 1)
			loss, g := m.LossGrad(w, x, y)
			if l := m.Loss(w, x, y); l != loss {
				t.Errorf("LossGrad loss %v != Loss %v", loss, l)
			}
			fd := CentralDiff(func(v []float64) float64 { return m.Loss(v, x, y) }, w, 1e-6)
			e := relErr(g, fd)
			t.Logf("relative error %.3g", e)
			if e > 1e-6 {
				t.Errorf("relative error %.3g between backprop and central differences", e)
			}
		})
	}
}

// linearAdapted is the closed form of AdaptedLoss for Sizes [1,1] (prediction
// W x + c) on targets y = a x. With d = W - a, support means Sx = mean x and
// Sxx = mean x^2, the loss gradient is dL/dW = 2(d Sxx + c Sx) and
// dL/dc = 2(d Sx + c), so each step maps
//
//	d <- d - 2 alpha (d Sxx + c Sx),   c <- c - 2 alpha (d Sx + c),
//
// and the query loss is d^2 Qxx + 2 d c Qx + c^2 with the query means Qx, Qxx.
func linearAdapted(W, c, a float64, sx, qx []float64, alpha float64, steps int) float64 {
	mean := func(v []float64, p int) float64 {
		s := 0.0
		for _, x := range v {
			s += math.Pow(x, float64(p))
		}
		return s / float64(len(v))
	}
	Sx, Sxx, Qx, Qxx := mean(sx, 1), mean(sx, 2), mean(qx, 1), mean(qx, 2)
	d := W - a
	for s := 0; s < steps; s++ {
		d, c = d-2*alpha*(d*Sxx+c*Sx), c-2*alpha*(d*Sx+c)
	}
	return d*d*Qxx + 2*d*c*Qx + c*c
}

func TestAdaptedLossLinearClosedForm(t *testing.T) {
	t.Parallel()
	m := MLP{Sizes: []int{1, 1}, Activation: "relu"}
	targets := func(a float64, x []float64) []float64 {
		y := make([]float64, len(x))
		for i := range x {
			y[i] = a * x[i]
		}
		return y
	}
	tests := []struct {
		name    string
		W, c, a float64
		sx, qx  []float64
		alpha   float64
		steps   int
		want    float64 // by hand; NaN means "use linearAdapted"
	}{
		// d = -2, Sxx = 1, Sx = 0: d' = -2(1-0.5) = -1, c' = 0; loss = 1*2^2.
		{"hand symmetric", 0, 0, 2, []float64{1, -1}, []float64{2}, 0.25, 1, 4},
		// d = -2, Sx = 2, Sxx = 5: grads (-16, -6), d' = -1.2, c' = 1.3;
		// query errors 1.3 (x=0) and 0.1 (x=1): loss (1.69+0.01)/2.
		{"hand with bias", 1, 1, 3, []float64{1, 3}, []float64{0, 1}, 0.05, 1, 0.85},
		{"no step", 0.3, -0.2, 1.5, []float64{0.4}, []float64{-1, 2}, 0.1, 0, math.NaN()},
		{"one step", 0.3, -0.2, 1.5, []float64{0.4, -2, 3.1}, []float64{-1, 2, 0.5}, 0.07, 1, math.NaN()},
		{"three steps", -0.8, 0.6, 4.2, []float64{0.4, -2, 3.1, 1}, []float64{-1, 2, 0.5}, 0.03, 3, math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if math.IsNaN(want) {
				want = linearAdapted(tc.W, tc.c, tc.a, tc.sx, tc.qx, tc.alpha, tc.steps)
			} else if f := linearAdapted(tc.W, tc.c, tc.a, tc.sx, tc.qx, tc.alpha, tc.steps); math.Abs(f-want) > 1e-12 {
				t.Fatalf("closed form %v disagrees with hand value %v", f, want)
			}
			got := m.AdaptedLoss([]float64{tc.W, tc.c}, tc.sx, targets(tc.a, tc.sx), tc.qx, targets(tc.a, tc.qx), tc.alpha, tc.steps)
			if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("AdaptedLoss = %.17g, want %.17g", got, want)
			}
		})
	}
}

func TestMetaObjective(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	m := MLP{Sizes: []int{1, 8, 1}, Activation: "softplus"}
	w := randVec(rng, m.NumParams(), 0.5)
	b := metalearn.NewBatch(3, 4, 5, 1, 1)
	for _, s := range [][]float64{b.SupportX, b.SupportY, b.QueryX, b.QueryY} {
		copy(s, randVec(rng, len(s), 1))
	}
	weights := []float64{0.2, 0.5, 0.3}
	const alpha = 0.1

	w0 := append([]float64(nil), w...)
	total, losses := MetaObjective(m, w, b, weights, alpha, 2)
	if len(losses) != b.Tasks {
		t.Fatalf("got %d losses, want %d", len(losses), b.Tasks)
	}
	want := 0.0
	for i := range losses {
		sx, sy, qx, qy := b.Row(i)
		l := m.AdaptedLoss(w, sx, sy, qx, qy, alpha, 2)
		if losses[i] != l {
			t.Errorf("losses[%d] = %v, want %v", i, losses[i], l)
		}
		want += weights[i] * l
	}
	if math.Abs(total-want) > 1e-15 {
		t.Errorf("total = %v, want %v", total, want)
	}
	for i := range w {
		if w[i] != w0[i] {
			t.Fatal("MetaObjective modified w")
		}
	}

	// Without adaptation the losses are the plain query losses.
	_, losses = MetaObjective(m, w, b, weights, alpha, 0)
	for i := range losses {
		_, _, qx, qy := b.Row(i)
		if l := m.Loss(w, qx, qy); losses[i] != l {
			t.Errorf("steps=0: losses[%d] = %v, want query loss %v", i, losses[i], l)
		}
	}
}

func TestCentralDiffQuadratic(t *testing.T) {
	t.Parallel()
	// f(w) = w0^2 + 3 w0 w1 - w1^3 has gradient (2 w0 + 3 w1, 3 w0 - 3 w1^2).
	f := func(w []float64) float64 { return w[0]*w[0] + 3*w[0]*w[1] - w[1]*w[1]*w[1] }
	w := []float64{0.7, -1.3}
	g := CentralDiff(f, w, 1e-5)
	want := []float64{2*0.7 + 3*-1.3, 3*0.7 - 3*1.3*1.3}
	if e := relErr(g, want); e > 1e-9 {
		t.Errorf("CentralDiff = %v, want %v", g, want)
	}
	if w[0] != 0.7 || w[1] != -1.3 {
		t.Errorf("CentralDiff modified w: %v", w)
	}
}
