package reference

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestConv3x3DeltaKernels pins the kernel index order [kh][kw][cin][f] and
// the zero padding: a kernel with a single 1 at (kh, kw, i, o) copies input
// channel i shifted by (kh-1, kw-1) into output channel o, with zeros where
// the shifted pixel lies outside the image.
func TestConv3x3DeltaKernels(t *testing.T) {
	t.Parallel()
	const n, h, w, cin, f = 2, 4, 5, 2, 3
	rng := rand.New(rand.NewPCG(21, 1))
	in := randVec(rng, n*h*w*cin, 1)
	bias := []float64{0.5, -1, 2}
	for kh := 0; kh < 3; kh++ {
		for kw := 0; kw < 3; kw++ {
			for i := 0; i < cin; i++ {
				for o := 0; o < f; o++ {
					kernel := make([]float64, 9*cin*f)
					kernel[((kh*3+kw)*cin+i)*f+o] = 1
					z := conv3x3(in, n, h, w, cin, kernel, bias, f)
					for p := 0; p < n; p++ {
						for y := 0; y < h; y++ {
							for x := 0; x < w; x++ {
								for oo := 0; oo < f; oo++ {
									want := bias[oo]
									sy, sx := y+kh-1, x+kw-1
									if oo == o && sy >= 0 && sy < h && sx >= 0 && sx < w {
										want += in[((p*h+sy)*w+sx)*cin+i]
									}
									if got := z[((p*h+y)*w+x)*f+oo]; got != want {
										t.Fatalf("delta at (%d,%d,%d,%d): z[%d][%d][%d][%d] = %v, want %v", kh, kw, i, o, p, y, x, oo, got, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestMaxPool2TiesAndFloor pins the tie rule (first maximum in window order
// (dy, dx) row-major, also for the gradient) and the floor: the odd last row
// and column of a 3x5 image are dropped even where they hold the largest
// values.
func TestMaxPool2TiesAndFloor(t *testing.T) {
	t.Parallel()
	in := []float64{
		2, 1, 3, 5, 9,
		2, 2, 3, 4, 9,
		9, 9, 9, 9, 9,
	}
	out, from := maxPool2(in, 1, 3, 5, 1)
	wantOut := []float64{2, 5}
	wantFrom := []int{0, 3} // window 0: 2 at (0,0) ties (1,0) and (1,1); window 1: 5 at (0,3)
	for k := range wantOut {
		if out[k] != wantOut[k] || from[k] != wantFrom[k] {
			t.Errorf("output %d = %v from %d, want %v from %d", k, out[k], from[k], wantOut[k], wantFrom[k])
		}
	}
	// A window with all four values equal picks its first, (0, 0).
	_, from = maxPool2([]float64{7, 7, 7, 7}, 1, 2, 2, 1)
	if from[0] != 0 {
		t.Errorf("all-equal window: from %d, want 0", from[0])
	}
	din := maxPool2Backward([]float64{10, 20}, wantFrom, len(in))
	for k, v := range din {
		want := map[int]float64{0: 10, 3: 20}[k]
		if v != want {
			t.Errorf("gradient[%d] = %v, want %v", k, v, want)
		}
	}
	// Channels are pooled separately: 2x2x2 with channel 1 = -channel 0.
	out, from = maxPool2([]float64{1, -1, 4, -4, 3, -3, 2, -2}, 1, 2, 2, 2)
	if out[0] != 4 || from[0] != 2 || out[1] != -1 || from[1] != 1 {
		t.Errorf("two channels: out %v from %v, want [4 -1] from [2 1]", out, from)
	}
}

// TestBatchNormStatistics: with scale 1 and shift 0 every channel of the
// output has mean 0 and biased variance var/(var+eps), i.e. 1 up to eps;
// with scale g and shift b the mean is b and the variance g^2 times that.
func TestBatchNormStatistics(t *testing.T) {
	t.Parallel()
	const m, f = 13, 3
	rng := rand.New(rand.NewPCG(23, 1))
	z := make([]float64, m*f)
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			z[r*f+o] = float64(o+1)*3*rng.NormFloat64() + float64(10*o) // channel o: offset 10 o, scale 3(o+1)
		}
	}
	stats := func(v []float64, o int) (mean, variance float64) {
		for r := 0; r < m; r++ {
			mean += v[r*f+o]
		}
		mean /= m
		for r := 0; r < m; r++ {
			variance += (v[r*f+o] - mean) * (v[r*f+o] - mean)
		}
		return mean, variance / m
	}
	tests := []struct {
		name        string
		gamma, beta []float64
		eps         float64
	}{
		{"unit", []float64{1, 1, 1}, []float64{0, 0, 0}, DefaultBNEps},
		{"unit large eps", []float64{1, 1, 1}, []float64{0, 0, 0}, 4},
		{"scaled shifted", []float64{2, -0.5, 1.5}, []float64{1, 0, -3}, DefaultBNEps},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, _ := batchNorm(z, m, f, tc.gamma, tc.beta, tc.eps)
			for o := 0; o < f; o++ {
				_, zVar := stats(z, o)
				mean, variance := stats(out, o)
				wantVar := tc.gamma[o] * tc.gamma[o] * zVar / (zVar + tc.eps)
				if math.Abs(mean-tc.beta[o]) > 1e-14 || math.Abs(variance-wantVar) > 1e-13 {
					t.Errorf("channel %d: mean %.17g variance %.17g, want %v and %.17g", o, mean, variance, tc.beta[o], wantVar)
				}
			}
		})
	}
}

func TestSoftmaxCrossEntropy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		classes   int
		logits, y []float64
		want      float64
	}{
		{"uniform 4 ways", 4, []float64{0.3, 0.3, 0.3, 0.3}, []float64{0, 0, 1, 0}, math.Log(4)},
		{"large right", 2, []float64{1000, 0}, []float64{1, 0}, math.Log1p(math.Exp(-1000))},
		{"large wrong", 2, []float64{1000, 0}, []float64{0, 1}, 1000},
		{"large negative uniform", 2, []float64{-1000, -1000}, []float64{0, 1}, math.Log(2)},
		{"two rows, mean", 2, []float64{0, 0, 0, math.Log(3)}, []float64{1, 0, 0, 1}, (math.Log(2) + math.Log(4.0/3)) / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			classes := tc.classes
			n := len(tc.y) / classes
			loss, d := softmaxCrossEntropy(tc.logits, tc.y, n, classes)
			if math.Abs(loss-tc.want) > 1e-14*math.Max(1, tc.want) {
				t.Errorf("loss %.17g, want %.17g", loss, tc.want)
			}
			for p := 0; p < n; p++ {
				s := 0.0
				for j := 0; j < classes; j++ {
					s += d[p*classes+j]
				}
				if math.Abs(s) > 1e-15 {
					t.Errorf("row %d: gradient sums to %v, want 0 for a one-hot target", p, s)
				}
			}
		})
	}
}

// TestLayerAdjoints checks every layer's backward pass on its own against
// central differences of s(v) = sum_k c_k * layer(v)_k for random weights c,
// with respect to each input of the layer.
func TestLayerAdjoints(t *testing.T) {
	t.Parallel()
	const n, h, w, cin, f = 2, 5, 3, 2, 3
	rng := rand.New(rand.NewPCG(29, 1))
	in := randVec(rng, n*h*w*cin, 1)
	kernel := randVec(rng, 9*cin*f, 0.5)
	bias := randVec(rng, f, 0.5)
	z := randVec(rng, n*h*w*f, 1)
	gamma := []float64{1.2, -0.7, 0.9}
	beta := randVec(rng, f, 0.5)
	c := randVec(rng, n*h*w*f, 1)
	dot := func(a []float64) float64 {
		s := 0.0
		for k := range a {
			s += c[k] * a[k]
		}
		return s
	}

	dIn, dKernel, dBias := make([]float64, len(in)), make([]float64, len(kernel)), make([]float64, f)
	conv3x3Backward(in, n, h, w, cin, kernel, f, c, dKernel, dBias, dIn)
	_, xhat, inv := batchNorm(z, n*h*w, f, gamma, beta, DefaultBNEps)
	dGamma, dBeta := make([]float64, f), make([]float64, f)
	dZ := batchNormBackward(c, xhat, inv, n*h*w, f, gamma, dGamma, dBeta)
	pooled, from := maxPool2(z, n, h, w, f)
	cPool := c[:len(pooled)]
	dPool := maxPool2Backward(cPool, from, len(z))
	logits := randVec(rng, 4*3, 2)
	y := []float64{0, 1, 0, 1, 0, 0, 0.2, 0.3, 0.5, 0, 0, 1} // one row a soft target
	_, dLogits := softmaxCrossEntropy(logits, y, 4, 3)

	tests := []struct {
		name string
		at   []float64
		f    func(v []float64) float64
		grad []float64
	}{
		{"conv input", in, func(v []float64) float64 { return dot(conv3x3(v, n, h, w, cin, kernel, bias, f)) }, dIn},
		{"conv kernel", kernel, func(v []float64) float64 { return dot(conv3x3(in, n, h, w, cin, v, bias, f)) }, dKernel},
		{"conv bias", bias, func(v []float64) float64 { return dot(conv3x3(in, n, h, w, cin, kernel, v, f)) }, dBias},
		{"batch norm input", z, func(v []float64) float64 {
			out, _, _ := batchNorm(v, n*h*w, f, gamma, beta, DefaultBNEps)
			return dot(out)
		}, dZ},
		{"batch norm scale", gamma, func(v []float64) float64 {
			out, _, _ := batchNorm(z, n*h*w, f, v, beta, DefaultBNEps)
			return dot(out)
		}, dGamma},
		{"batch norm shift", beta, func(v []float64) float64 {
			out, _, _ := batchNorm(z, n*h*w, f, gamma, v, DefaultBNEps)
			return dot(out)
		}, dBeta},
		{"max-pool input", z, func(v []float64) float64 {
			out, _ := maxPool2(v, n, h, w, f)
			s := 0.0
			for k := range out {
				s += cPool[k] * out[k]
			}
			return s
		}, dPool},
		{"softmax cross-entropy logits", logits, func(v []float64) float64 {
			l, _ := softmaxCrossEntropy(v, y, 4, 3)
			return l
		}, dLogits},
	}
	for _, tc := range tests {
		e := relErr(tc.grad, CentralDiff(tc.f, tc.at, 1e-5))
		t.Logf("%s: relative error %.3g", tc.name, e)
		if e > 1e-8 {
			t.Errorf("%s: relative error %.3g between backward and central differences", tc.name, e)
		}
	}
}
