package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// directConv is the plain loop of a 3x3 convolution with zero padding 1 of
// n images of h x w x c (x) by the kernel matrix k (9*c x f, rows in (kh,
// kw, c) order), in float64; transposed, it is convT: x holds n images of
// h x w x f and the result has c channels.
func directConv[T float](x, k []T, n, h, w, c, f int, transposed bool) []float64 {
	cin, cout := c, f
	if transposed {
		cin, cout = f, c
	}
	out := make([]float64, n*h*w*cout)
	for i := 0; i < n; i++ {
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				o := out[((i*h+y)*w+xx)*cout:][:cout]
				for kh := 0; kh < 3; kh++ {
					for kw := 0; kw < 3; kw++ {
						// conv reads x at the tap's pixel; convT is the
						// adjoint: the same pixel pairs, kernel transposed.
						ys, xs := y+kh-1, xx+kw-1
						if transposed {
							ys, xs = y-kh+1, xx-kw+1
						}
						if ys < 0 || ys >= h || xs < 0 || xs >= w {
							continue
						}
						px := x[((i*h+ys)*w+xs)*cin:][:cin]
						for a, v := range px {
							for b := range o {
								ki := ((kh*3+kw)*c+a)*f + b
								if transposed {
									ki = ((kh*3+kw)*c+b)*f + a
								}
								kv := k[ki]
								o[b] += float64(v) * float64(kv)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// TestWinogradTask compares winogradTask's conv and convT, with tiles of 2
// and 4, with the plain loop in both float types: images whose sides are
// and are not multiples of the tile (overhanging tiles of one to three
// pixels), channels that are and are not whole vectors of 8 and 16, and
// enough images for several chunks (winogradValues).
func TestWinogradTask(t *testing.T) {
	shapes := []struct{ n, h, w, c, f int }{
		{3, 14, 14, 16, 16}, {2, 7, 7, 24, 17}, {2, 3, 3, 16, 32}, {1, 5, 9, 3, 5},
		{2, 6, 10, 40, 8}, {1, 1, 2, 2, 1}, {70, 4, 4, 64, 64},
	}
	for _, s := range shapes {
		for _, m := range []int{2, 4} {
			for _, transposed := range []bool{false, true} {
				name := fmt.Sprintf("%d images %dx%dx%d, %d filters, F(%dx%d), transposed %v", s.n, s.h, s.w, s.c, s.f, m, m, transposed)
				t.Run(name+", float64", func(t *testing.T) { winogradTaskCheck[float64](t, m, s.n, s.h, s.w, s.c, s.f, transposed, 1e-12) })
				t.Run(name+", float32", func(t *testing.T) { winogradTaskCheck[float32](t, m, s.n, s.h, s.w, s.c, s.f, transposed, 1e-5) })
			}
		}
	}
}

// TestWinogradSharedKernels checks that winogradConv's one transform of
// kernels that every task shares gives each task's values bit for bit, for
// conv and convT, and that sameTasks tells shared kernels from kernels that
// differ in a single value of the last task.
func TestWinogradSharedKernels(t *testing.T) {
	const tasks, n, h, w, c, f = 3, 4, 7, 7, 16, 24
	for _, transposed := range []bool{false, true} {
		for _, differ := range []bool{false, true} {
			t.Run(fmt.Sprintf("transposed %v, last task's kernels differ %v", transposed, differ), func(t *testing.T) {
				cin, cout := c, f
				if transposed {
					cin, cout = f, c
				}
				rng := rand.New(rand.NewPCG(7, 8))
				x, k := make([]float32, tasks*n*h*w*cin), make([]float32, tasks*9*c*f)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				for i := range k[:9*c*f] {
					k[i] = float32(rng.NormFloat64())
				}
				for tk := 1; tk < tasks; tk++ {
					copy(k[tk*9*c*f:], k[:9*c*f])
				}
				if differ {
					k[len(k)-1] += 1
				}
				if got := sameTasks(k, tasks, 9*c*f); got == differ {
					t.Fatalf("sameTasks = %v, want %v", got, !differ)
				}
				g := convGeom{imageGeom{H: h, W: w, C: c}, tensor.Shape{tasks, n * h * w, c}}
				out := make([]float32, tasks*n*h*w*cout)
				winogradConv(4, g, f, x, k, transposed, out)
				for tk := 0; tk < tasks; tk++ {
					want := make([]float32, n*h*w*cout)
					winogradTask(4, h, w, c, f, n, x[tk*n*h*w*cin:], k[tk*9*c*f:], transposed, nil, want)
					for i, v := range want {
						if got := out[tk*n*h*w*cout+i]; math.Float32bits(got) != math.Float32bits(v) {
							t.Fatalf("task %d value %d: %v, want %v as the task's own transform gives", tk, i, got, v)
						}
					}
				}
			})
		}
	}
}

// winogradTaskCheck runs one case of TestWinogradTask: the largest error
// relative to the largest output must stay within tol.
func winogradTaskCheck[T float](t *testing.T, m, n, h, w, c, f int, transposed bool, tol float64) {
	rng := rand.New(rand.NewPCG(uint64(n*h*w), uint64(c*f)))
	cin, cout := c, f
	if transposed {
		cin, cout = f, c
	}
	x, k := make([]T, n*h*w*cin), make([]T, 9*c*f)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	for i := range k {
		k[i] = T(rng.NormFloat64())
	}
	out := make([]T, n*h*w*cout)
	winogradTask(m, h, w, c, f, n, x, k, transposed, nil, out)
	want := directConv(x, k, n, h, w, c, f, transposed)
	if e := maxRelErr(out, want); !(e <= tol) {
		t.Errorf("largest error %.3g of the largest output, want at most %g", e, tol)
	}
	if per := max(1, winogradValues/(((h+m-1)/m)*((w+m-1)/m)*(m+2)*(m+2)*max(c, f))); n == 70 && per >= n {
		t.Errorf("%d images in one chunk: the case does not test several", n)
	}
}

// TestWinogradKTask compares winogradKTask, with tiles of 2 and 4, with
// the plain loop of convK (the sum over pixels of each tap's input pixel
// times the values at the pixel) in both float types, on TestWinogradTask's
// shapes.
func TestWinogradKTask(t *testing.T) {
	shapes := []struct{ n, h, w, c, f int }{
		{3, 14, 14, 16, 16}, {2, 7, 7, 24, 17}, {2, 3, 3, 16, 32}, {1, 5, 9, 3, 5},
		{2, 6, 10, 40, 8}, {1, 1, 2, 2, 1}, {70, 4, 4, 64, 64},
	}
	for _, s := range shapes {
		for _, m := range []int{2, 4} {
			name := fmt.Sprintf("%d images %dx%dx%d, %d filters, F(%dx%d)", s.n, s.h, s.w, s.c, s.f, m, m)
			t.Run(name+", float64", func(t *testing.T) { winogradKTaskCheck[float64](t, m, s.n, s.h, s.w, s.c, s.f, 1e-12) })
			t.Run(name+", float32", func(t *testing.T) { winogradKTaskCheck[float32](t, m, s.n, s.h, s.w, s.c, s.f, 1e-5) })
		}
	}
}

func winogradKTaskCheck[T float](t *testing.T, m, n, h, w, c, f int, tol float64) {
	rng := rand.New(rand.NewPCG(uint64(n*h*w), uint64(c*f+1)))
	x, g := make([]T, n*h*w*c), make([]T, n*h*w*f)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	for i := range g {
		g[i] = T(rng.NormFloat64())
	}
	want := make([]float64, 9*c*f)
	for i := 0; i < n; i++ {
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				for tap := 0; tap < 9; tap++ {
					ys, xs := y+tap/3-1, xx+tap%3-1
					if ys < 0 || ys >= h || xs < 0 || xs >= w {
						continue
					}
					for a, v := range x[((i*h+ys)*w+xs)*c:][:c] {
						for b, gv := range g[((i*h+y)*w+xx)*f:][:f] {
							want[(tap*c+a)*f+b] += float64(v) * float64(gv)
						}
					}
				}
			}
		}
	}
	out := make([]T, 9*c*f)
	winogradKTask(m, h, w, c, f, n, x, g, out)
	if e := maxRelErr(out, want); !(e <= tol) {
		t.Errorf("largest error %.3g of the largest output, want at most %g", e, tol)
	}
}

// maxRelErr is the largest |got - want| over the largest |want|.
func maxRelErr[T float](got []T, want []float64) float64 {
	var e, big float64
	for i, v := range want {
		e, big = max(e, math.Abs(float64(got[i])-v)), max(big, math.Abs(v))
	}
	return e / big
}

// TestWinogradRounding measures the float32 rounding of conv's values
// against the plain loop (float64) on realistic data: N(0, 1) images,
// He-initialized kernels (standard deviation sqrt(2/(9 C))), 64 channels,
// at the CNN's image sizes, for im2col and both Winograd paths. It logs the
// largest error relative to the largest output and to the outputs' RMS
// and bounds the first. Measured on AMD Zen 4 (SIMD build, OpenBLAS; the
// plain build within 1.3 times): im2col 4.6-5.6e-7 of the largest output,
// F(2x2) 2.7-3.3e-7, F(4x4) 1.2e-6 (3x3 images) to 5.7e-6 (14x14; 2.6e-5
// of the RMS), 10 to 20 times F(2x2)'s.
func TestWinogradRounding(t *testing.T) {
	const c, f = 64, 64
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ n, h int }{{4, 14}, {8, 7}, {16, 3}} {
		x, k := make([]float32, s.n*s.h*s.h*c), make([]float32, 9*c*f)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for i := range k {
			k[i] = float32(rng.NormFloat64() * math.Sqrt(2.0/(9*c)))
		}
		want := directConv(x, k, s.n, s.h, s.h, c, f, false)
		rms := 0.0
		for _, v := range want {
			rms += v * v
		}
		rms = math.Sqrt(rms / float64(len(want)))
		for _, m := range []int{-1, 2, 4} { // im2col (forced), F(2x2), F(4x4)
			out := make([]float32, len(want))
			geom := convGeom{imageGeom{H: s.h, W: s.h, C: c, tune: tuning{winograd: m}}, tensor.Shape{1, s.n, s.h * s.h * c}}
			forwardConv(convKernel{geom}, out, [][]float32{x, k}, []tensor.Shape{geom.x, {1, 9 * c, f}})
			e := maxRelErr(out, want)
			eRMS := 0.0
			for i, v := range want {
				eRMS = max(eRMS, math.Abs(float64(out[i])-v)/rms)
			}
			t.Logf("%dx%d images, tiles %d: largest error %.2g of the largest output, %.2g of the RMS", s.h, s.h, m, e, eRMS)
			if bound := map[int]float64{-1: 1e-6, 2: 1e-6, 4: 2e-5}[m]; e > bound {
				t.Errorf("%dx%d images, tiles %d: largest error %.3g of the largest output, want at most %g", s.h, s.h, m, e, bound)
			}
		}
	}
}

// BenchmarkConvPaths times conv's and convK's values of one task on each
// path (im2col, F(2x2), F(4x4)) at the CNN's 64-channel shapes: 5 and 20
// support images and 50 and 200 query images (5- and 20-way) of 14x14, 7x7
// and 3x3, float32. Run with -cpu 1; cpu-ms/op is the process's CPU time,
// the figure to read on a shared machine.
func BenchmarkConvPaths(b *testing.B) {
	const c, f = 64, 64
	rng := rand.New(rand.NewPCG(1, 2))
	for _, h := range []int{14, 7, 3} {
		for _, n := range []int{5, 20, 50, 200} {
			x, k, g := make([]float32, n*h*h*c), make([]float32, 9*c*f), make([]float32, n*h*h*f)
			for _, v := range [][]float32{x, k, g} {
				for i := range v {
					v[i] = float32(rng.NormFloat64())
				}
			}
			out, outK := make([]float32, n*h*h*f), make([]float32, 9*c*f)
			ops := []struct {
				name string
				run  func(geom convGeom)
			}{
				{"conv", func(geom convGeom) {
					forwardConv(convKernel{geom}, out, [][]float32{x, k}, []tensor.Shape{geom.x, {1, 9 * c, f}})
				}},
				{"convK", func(geom convGeom) {
					forwardConvK(convKKernel{geom}, outK, [][]float32{x, g}, []tensor.Shape{geom.x, {1, n * h * h, f}})
				}},
			}
			for _, op := range ops {
				for _, m := range []int{-1, 2, 4} {
					geom := convGeom{imageGeom{H: h, W: h, C: c, tune: tuning{winograd: m}}, tensor.Shape{1, n, h * h * c}}
					b.Run(fmt.Sprintf("%s/%dx%d/n=%d/tiles=%d", op.name, h, h, n, m), func(b *testing.B) {
						cpu := cpuSeconds()
						for b.Loop() {
							op.run(geom)
						}
						b.ReportMetric((cpuSeconds()-cpu)*1e3/float64(b.N), "cpu-ms/op")
					})
				}
			}
		}
	}
}

// BenchmarkIm2colColour lays out the patches of one 84x84x3 image, the
// first block's chunk at the mini-ImageNet shape. Run with -cpu 1.
func BenchmarkIm2colColour(b *testing.B) {
	g := imageGeom{H: 84, W: 84, C: 3}
	x := make([]float32, 84*84*3)
	for i := range x {
		x[i] = float32(i%251) / 7
	}
	cols, pad := make([]float32, 84*84*27), make([]float32, 86*86*3)
	cpu := cpuSeconds()
	for b.Loop() {
		im2colChunk(g, x, 0, 1, cols, pad)
	}
	b.ReportMetric((cpuSeconds()-cpu)*1e3/float64(b.N), "cpu-ms/op")
}
