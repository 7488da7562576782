package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// TestConvKBNBackSameBits: the fused op's values are convK(x, bnBackMax(...))'s
// bit for bit, in both float types, with chunks of all three images, of
// one and of two (the last one short), on the kernels of the build (the
// SIMD rows at 32 channels).
func TestConvKBNBackSameBits(t *testing.T) {
	const tasks, n, h, w, c, f = 2, 3, 8, 6, 3, 32
	for _, tc := range []struct{ chunk, per int }{{0, n}, {1, 1}, {2 * h * w * 2 * f, 2}} { // 2*f values per pixel
		chunk := tc.chunk
		g := convGeom{imageGeom{H: h, W: w, C: c, tune: tuning{chunkValues: chunk}}, tensor.Shape{tasks, n, h * w * c}}
		if per := g.chunkImages(f); per != tc.per {
			t.Fatalf("chunk bound %d: chunks of %d images, want %d", chunk, per, tc.per)
		}
		rng := rand.New(rand.NewPCG(7, uint64(chunk)))
		x := randomFloats(rng, tasks*n*h*w*c)
		z := randomFloats(rng, tasks*n*h*w*f)
		st := randomFloats(rng, tasks*2*f)
		for i := range st {
			st[i] = math.Abs(st[i]) + 0.5 // the inverse deviations must be positive; the means may be anything
		}
		gamma, a, cc := randomFloats(rng, tasks*f), randomFloats(rng, tasks*f), randomFloats(rng, tasks*f)
		gp := randomFloats(rng, tasks*n*(h/2)*(w/2)*f)
		zs, xs := tensor.Shape{tasks, n * h * w, f}, g.x
		shapes := []tensor.Shape{xs, zs, {tasks, 2, f}, {tasks, f}, {tasks, n * (h / 2) * (w / 2), f}, {tasks, f}, {tasks, f}}
		check := func(name string, want, got []float64) {
			t.Helper()
			for i := range want {
				if math.Float64bits(want[i]) != math.Float64bits(got[i]) {
					t.Fatalf("chunk bound %d, %s: value %d is %v, convK of bnBackMax gives %v", chunk, name, i, got[i], want[i])
				}
			}
		}
		{ // float64
			dz := make([]float64, len(z))
			forwardBNBackMax(bnBackMaxKernel{poolGeom{h, w}}, dz, [][]float64{z, st, gamma, gp, a, cc}, shapes[1:])
			want := make([]float64, tasks*9*c*f)
			forwardConvK(convKKernel{g}, want, [][]float64{x, dz}, []tensor.Shape{xs, zs})
			got := make([]float64, len(want))
			forwardConvKBNBack(convKBNBackKernel{g}, got, [][]float64{x, z, st, gamma, gp, a, cc}, shapes)
			check("float64", want, got)
		}
		{ // float32
			in := make([][]float32, 7)
			for i, v := range [][]float64{x, z, st, gamma, gp, a, cc} {
				in[i] = make([]float32, len(v))
				for j := range v {
					in[i][j] = float32(v[j])
				}
			}
			dz := make([]float32, len(z))
			forwardBNBackMax(bnBackMaxKernel{poolGeom{h, w}}, dz, in[1:], shapes[1:])
			want := make([]float32, tasks*9*c*f)
			forwardConvK(convKKernel{g}, want, [][]float32{in[0], dz}, []tensor.Shape{xs, zs})
			got := make([]float32, len(want))
			forwardConvKBNBack(convKBNBackKernel{g}, got, in, shapes)
			w64, g64 := make([]float64, len(want)), make([]float64, len(got))
			for i := range want {
				w64[i], g64[i] = float64(want[i]), float64(got[i])
			}
			check("float32", w64, g64)
		}
	}
}

// TestFirstBlockFusesConvKBNBack: the gradient of a CNN's first block (its
// images take none) runs as convKBNBack, the other blocks' as convK of
// bnBackMax, in first and second order.
func TestFirstBlockFusesConvKBNBack(t *testing.T) {
	m, err := Conv4{Filters: 8, Blocks: 2, Channels: 3, Height: 12, Width: 12, Pool: PoolMax, BatchNorm: BatchNormAdapt}.CNN(3)
	if err != nil {
		t.Fatal(err)
	}
	m.tune.winograd = -1 // every convolution on the im2col path
	for _, first := range []bool{true, false} {
		obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Tasks: 2, Support: 3, Query: 6,
			InShape: m.InShape(), OutDim: 3, Steps: 2, Alpha: 0.1, FirstOrder: first, MetaGradient: true, Dtype: tensor.Float32})
		if err != nil {
			t.Fatal(err)
		}
		fused, back := count[convKBNBackKernel](obj.prog), count[bnBackMaxKernel](obj.prog)
		// Each differentiated pass of the support (2 steps) and the query
		// (1) runs one fused op at the first block.
		if fused != 3 {
			t.Errorf("first order %v: %d convKBNBack ops, want 3 (one per differentiated pass)", first, fused)
		}
		if first && back != 3 {
			t.Errorf("first order: %d bnBackMax ops, want 3 (the second block's)", back)
		}
	}
}

// randomFloats draws n values in [-1, 1).
func randomFloats(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

// BenchmarkConvKBNBack times the fused op against bnBackMax then convK at
// the first block of 5-shot mini-ImageNet (one task of 25 84x84x3 images,
// 32 filters), float32, on one goroutine, in CPU time (cpu-ms/op): the
// fused op saves writing dz to memory and reading it back.
func BenchmarkConvKBNBack(b *testing.B) {
	const tasks, n, h, w, c, f = 1, 25, 84, 84, 3, 32
	g := convGeom{imageGeom{H: h, W: w, C: c}, tensor.Shape{tasks, n, h * w * c}}
	rng := rand.New(rand.NewPCG(1, 1))
	f32 := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(2*rng.Float64() - 1)
		}
		return v
	}
	x, z, st, gamma, gp, a, cc := f32(tasks*n*h*w*c), f32(tasks*n*h*w*f), f32(tasks*2*f), f32(tasks*f), f32(tasks*n*h*w*f/4), f32(tasks*f), f32(tasks*f)
	for i := range st {
		st[i] = float32(math.Abs(float64(st[i]))) + 0.5
	}
	zs := tensor.Shape{tasks, n * h * w, f}
	shapes := []tensor.Shape{g.x, zs, {tasks, 2, f}, {tasks, f}, {tasks, n * h * w / 4, f}, {tasks, f}, {tasks, f}}
	out, dz := make([]float32, tasks*9*c*f), make([]float32, len(z))
	b.Run("two ops", func(b *testing.B) {
		cpu := cpuSeconds()
		for range b.N {
			forwardBNBackMax(bnBackMaxKernel{poolGeom{h, w}}, dz, [][]float32{z, st, gamma, gp, a, cc}, shapes[1:])
			forwardConvK(convKKernel{g}, out, [][]float32{x, dz}, []tensor.Shape{g.x, zs})
		}
		b.ReportMetric((cpuSeconds()-cpu)*1e3/float64(b.N), "cpu-ms/op")
	})
	b.Run("fused", func(b *testing.B) {
		cpu := cpuSeconds()
		for range b.N {
			forwardConvKBNBack(convKBNBackKernel{g}, out, [][]float32{x, z, st, gamma, gp, a, cc}, shapes)
		}
		b.ReportMetric((cpuSeconds()-cpu)*1e3/float64(b.N), "cpu-ms/op")
	})
}
