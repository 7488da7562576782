package vec

import (
	"math/rand/v2"
	"testing"
)

// The kernels of the evaluation's first block (a 28x28 one-channel
// Omniglot image, 64 filters) and of the Winograd F(4x4) convolutions (a
// 14x14 image of 64 channels), per image, for profiling one kernel at a
// time: go test -bench . ./graph/internal/vec (GOEXPERIMENT=simd for the
// SIMD kernels).

const benchH, benchW, benchF = 28, 28, 64

func benchImage(h, w int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	pad := make([]float32, (h+2)*(w+2))
	for y := 1; y <= h; y++ {
		for x := 1; x <= w; x++ {
			pad[y*(w+2)+x] = r.Float32()
		}
	}
	return pad
}

func BenchmarkConv1(b *testing.B) {
	pad, k := benchImage(benchH, benchW), benchImage(3, 3*benchF)[:9*benchF]
	dst := make([]float32, benchH*benchW*benchF)
	for b.Loop() {
		Conv1(dst, pad, benchH, benchW, k)
	}
}

// BenchmarkConvPool1 times the first block's pooled rows of an image,
// fused and as its three kernels.
func BenchmarkConvPool1(b *testing.B) {
	pad, k := benchImage(benchH, benchW), benchImage(3, 3*benchF)[:9*benchF]
	a, c := k[:benchF], k[benchF:2*benchF]
	dst, z := make([]float32, benchW/2*benchF), make([]float32, 2*benchW*benchF)
	n := benchW / 2 * benchF
	b.Run("fused", func(b *testing.B) {
		for b.Loop() {
			for y := 0; y < benchH; y += 2 {
				ConvPool1(dst, z, pad[y*(benchW+2):], benchW, k, a, c)
			}
		}
	})
	b.Run("parts", func(b *testing.B) {
		for b.Loop() {
			for y := 0; y < benchH; y += 2 {
				Conv1(z, pad[y*(benchW+2):], 2, benchW, k)
				MaxAffineRow(dst, z[:2*n], z[benchW*benchF:][:2*n], a, c)
				Relu(dst, dst)
			}
		}
	})
}

// BenchmarkConvBack1 times the first block's backward sums over an image,
// fused and as its two kernels.
func BenchmarkConvBack1(b *testing.B) {
	pad, k := benchImage(benchH, benchW), benchImage(3, 3*benchF)[:9*benchF]
	s, mu := k[:benchF], k[benchF:2*benchF]
	n := benchW / 2 * benchF
	out, g := benchImage(benchH/2, n)[:n], benchImage(benchH/2, n)[n:2*n]
	acc, z := make([]float64, 11*benchF), make([]float32, 2*benchW*benchF)
	b.Run("fused", func(b *testing.B) {
		for b.Loop() {
			for y := 0; y < benchH; y += 2 {
				ConvBack1(acc, z, pad[y*(benchW+2):], benchW, k, out, g, s, mu)
			}
		}
	})
	b.Run("parts", func(b *testing.B) {
		for b.Loop() {
			for y := 0; y < benchH; y += 2 {
				Conv1(z, pad[y*(benchW+2):], 2, benchW, k)
				BlockBackRow(acc, z[:2*n], z[benchW*benchF:][:2*n], pad[y*(benchW+2):], benchW+2, out, g, s, mu)
			}
		}
	})
}

func BenchmarkPatchMoments(b *testing.B) {
	pad := make([]float64, (benchH+2)*(benchW+2))
	for i, v := range benchImage(benchH, benchW) {
		pad[i] = float64(v)
	}
	var s [9]float64
	var m [81]float64
	for b.Loop() {
		PatchMoments(&s, &m, pad, benchH, benchW)
	}
}

func BenchmarkMaxAffineRow(b *testing.B) {
	z := benchImage(benchH, benchW*benchF) // rows of 28 pixels of 64 channels
	a, c := z[:benchF], z[benchF:2*benchF]
	dst := make([]float32, benchW/2*benchF)
	row := (benchW + 2) * benchF
	for b.Loop() {
		for y := 0; y < benchH; y += 2 {
			MaxAffineRow(dst, z[y*row:][:benchW*benchF], z[(y+1)*row:][:benchW*benchF], a, c)
		}
	}
}

func BenchmarkWinograd4(b *testing.B) {
	const h, w, c = 14, 14, 64
	pw := w + 2 + 2 // padded and rounded up to whole 4x4 tiles: 18x18
	d := benchImage(pw-2, pw*c-2)
	tiles := (w + 3) / 4
	m := make([]float32, 36*c)
	y := make([]float32, 4*4*c)
	b.Run("in", func(b *testing.B) {
		for b.Loop() {
			for ty := 0; ty < tiles; ty++ {
				for tx := 0; tx < tiles; tx++ {
					Winograd4In(m, c, d[(4*ty*pw+4*tx)*c:], pw*c, c)
				}
			}
		}
	})
	b.Run("out", func(b *testing.B) {
		for b.Loop() {
			for t := 0; t < tiles*tiles; t++ {
				Winograd4Out(y, 4*c, m, c, c)
			}
		}
	})
	b.Run("grad", func(b *testing.B) {
		for b.Loop() {
			for t := 0; t < tiles*tiles; t++ {
				Winograd4Grad(m, c, y, 4*c, c)
			}
		}
	})
}

// BenchmarkAddScaledLarge streams AddScaled over one mini-ImageNet task's
// first-block activations (100 images of 84x84x32 in float32, 90 MB per
// operand, far beyond the caches): the bytes per second it reports (two
// read and one written) are one core's memory bandwidth as the
// elementwise and batch-norm passes see it.
func BenchmarkAddScaledLarge(b *testing.B) {
	n := 100 * 84 * 84 * 32
	dst, x, y := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%97), float32(i%89)
	}
	b.SetBytes(int64(3 * 4 * n))
	for b.Loop() {
		AddScaled(dst, x, y, 1)
	}
}
