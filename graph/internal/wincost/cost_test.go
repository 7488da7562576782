package wincost

import "testing"

// TestWinogradTile pins the paths chosen at the CNN's shapes (5- and
// 20-way support and query images per task, 64 channels), those
// BenchmarkConvPaths measured fastest, or within its noise, on AMD Zen 4.
func TestWinogradTile(t *testing.T) {
	for _, c := range []struct {
		h, n, cin int
		costs     []cost
		want      int
	}{
		// With the SIMD kernels (Zen 4, AVX-512, OpenBLAS; conv's ms):
		{28, 50, 1, simdCosts, 0},  // the first block: one input channel
		{14, 5, 64, simdCosts, 4},  // F(4x4) 0.41-0.43 ms, F(2x2) 0.41-0.45 (conv)
		{14, 50, 64, simdCosts, 4}, // 3.4-4.4 against 4.1-4.9
		{7, 5, 64, simdCosts, 4},   // 0.16-0.17 against 0.16-0.17
		{7, 200, 64, simdCosts, 4}, // 3.5-4.2 against 5.5-5.9
		{3, 5, 64, simdCosts, 0},   // im2col 0.046-0.048, F(2x2) 0.06, F(4x4) 0.11
		{3, 20, 64, simdCosts, 0},  // 0.17 against 0.16 and 0.16-0.17
		{3, 50, 64, simdCosts, 4},  // 0.28-0.29 against 0.43-0.48 and 0.34-0.36
		{3, 200, 64, simdCosts, 4}, // 0.90-0.91 against 1.55-1.75 and 1.28-1.39
		// With the plain loops and OpenBLAS (Zen 5, AVX2 off, Sandybridge
		// kernels; im2col, F(2x2), F(4x4) in ms for conv / convK):
		{14, 5, 64, plainCosts, 0},   // 2.3 / 1.2, 2.8 / 1.2, 3.9 / 1.9
		{14, 50, 64, plainCosts, 0},  // 10.6 / 10.5, 10.6 / 10.0, 13.7 / 15.1
		{14, 200, 64, plainCosts, 0}, // 44.4 / 43.7, 42.7 / 38.4, 55.0 / 59.8 (F(2x2) lost in the whole iteration)
		{7, 50, 64, plainCosts, 0},   // 2.6 / 2.5, 3.1 / 3.1, 3.6 / 4.0
		{7, 200, 64, plainCosts, 0},  // 10.8 / 10.4, 12.0 / 13.4, 13.6 / 14.9
		{3, 200, 64, plainCosts, 0},  // 1.9 / 1.8, 3.2 / 3.7, 3.6 / 4.5
		// With the AVX and SSE sets (every transform in SSE2 assembly) and
		// OpenBLAS (Zen 5, AVX2 and FMA off, Sandybridge kernels / AVX off
		// too, Nehalem kernels; conv / convK in ms for im2col, F(2x2),
		// F(4x4), AVX mode; SSE mode where it ranks otherwise):
		{14, 5, 64, sse2Costs, 4},   // 1.29 / 1.14, 0.73 / 0.64, 0.60 / 0.62; SSE 2.82 / 2.54, 1.46 / 1.54, 1.26 / 1.23
		{14, 50, 64, sse2Costs, 4},  // 11.9 / 14.2, 6.77 / 6.73, 6.31 / 6.54
		{14, 200, 64, sse2Costs, 4}, // 59.2 / 51.4, 32.8 / 24.2, 28.1 / 21.0
		{7, 5, 64, sse2Costs, 4},    // 0.29 / 0.27, 0.23 / 0.25, 0.19 / 0.25; SSE 0.62 / 0.62, 0.47 / 0.45, 0.35 / 0.34
		{7, 20, 64, sse2Costs, 4},   // 1.15 / 1.19, 0.85 / 0.95, 0.59 / 0.69
		{7, 200, 64, sse2Costs, 4},  // 11.9 / 11.7, 8.62 / 7.76, 5.75 / 5.01
		{3, 5, 64, sse2Costs, 0},    // 0.058 / 0.059, 0.076 / 0.112, 0.107 / 0.175; SSE 0.12 / 0.13, 0.13 / 0.15, 0.14 / 0.17
		{3, 20, 64, sse2Costs, 4},   // 0.22 / 0.21, 0.22 / 0.25, 0.18 / 0.25; SSE 0.62 / 0.48, 0.61 / 0.47, 0.44 / 0.34
		{3, 50, 64, sse2Costs, 4},   // 0.54 / 0.54, 0.53 / 0.51, 0.37 / 0.41
		{3, 200, 64, sse2Costs, 4},  // 2.09 / 2.17, 2.03 / 1.83, 1.40 / 1.22
	} {
		if c.cin < MinChannels {
			if got := Tile(c.h, c.h, c.n, c.cin, 64); got != c.want {
				t.Errorf("%d images %dx%dx%d: tile %d, want %d", c.n, c.h, c.h, c.cin, got, c.want)
			}
			continue
		}
		if got := cheapest(c.h, c.h, c.n, c.costs); got != c.want {
			t.Errorf("%d images %dx%dx%d, costs %v: tile %d, want %d", c.n, c.h, c.h, c.cin, c.costs, got, c.want)
		}
	}
}
