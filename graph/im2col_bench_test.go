package graph

import "testing"

// BenchmarkIm2colColour lays out the patches of one 84x84x3 image, the
// first block's chunk at the mini-ImageNet shape.
func BenchmarkIm2colColour(b *testing.B) {
	g := imageGeom{H: 84, W: 84, C: 3}
	x := make([]float32, 84*84*3)
	for i := range x {
		x[i] = float32(i%251) / 7
	}
	cols := make([]float32, 84*84*27)
	pad := make([]float32, 86*86*3)
	for b.Loop() {
		im2colChunk(g, x, 0, 1, cols, pad)
	}
}
