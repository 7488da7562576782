// Package wincost is the cost model that chooses between the 3x3
// convolution's im2col product and Winograd's F(2x2, 3x3) and F(4x4, 3x3)
// in graph's convolution ops: estimated costs per output tile and for the
// kernels' transforms, fitted to the kernels of this build and CPU.
package wincost

import (
	"sync"

	"github.com/trmaml/trmaml/graph/internal/blas"
	"github.com/trmaml/trmaml/graph/internal/vec"
)

// MinChannels is the fewest input and output channels for which a
// convolution takes the Winograd path: with fewer (the first block's one
// channel) the products are too thin.
const MinChannels = 16

// Tile returns the output tile size of the Winograd path that a
// convolution of n images of H x W from cin to cout channels (per task)
// should take, 2 or 4, or 0 for im2col: the one of least estimated cost
// (costs), in products of a row of cin values by the cin x cout kernels;
// im2col does 9 per pixel.
func Tile(H, W, n, cin, cout int) int {
	if cin < MinChannels || cout < MinChannels {
		return 0
	}
	return cheapest(H, W, n, costs())
}

// cheapest returns the tile size of least cost for n images of H x W
// under the given costs, 0 for im2col.
func cheapest(H, W, n int, costs []cost) int {
	best, cost := 0, 9*n*H*W
	for _, c := range costs {
		tiles := n * ((H + c.m - 1) / c.m) * ((W + c.m - 1) / c.m)
		if k := c.perTile*tiles + c.kernels; k < cost {
			best, cost = c.m, k
		}
	}
	return best
}

// cost is the estimated cost of the Winograd path with output
// tiles of m: per tile (its products and its transforms) and for
// transforming the kernels, in Tile's units.
type cost struct{ m, perTile, kernels int }

// costs returns the costs for this build and CPU. With the SIMD
// kernels: F(2x2) 16 products per tile and about 4 more in its
// transforms, about 400 for the kernels, which small images (the last
// block's 3x3) do not repay; F(4x4) 36 per tile, about 6 more, and about
// 800 (measured on AMD Zen 4 with AVX-512, C = F = 64, BenchmarkConvPaths:
// F(4x4)'s for conv and convK, which cost about the same on every path).
// With the plain loops and OpenBLAS the transforms cost several times
// more than the products they save: F(4x4) 141 per tile and about 4000
// for its kernels, F(2x2) 35-40 (AMD Zen 5 with AVX2 switched off,
// OpenBLAS's Sandybridge kernels: F(4x4) lost at every shape; F(2x2) tied
// im2col at 14x14 in conv and convK alone and lost in the whole 5-way
// iteration, whose convT takes the same path: im2col there took 3-6% less
// CPU, so 40; plain loops run on other architectures than amd64). The AVX
// and SSE sets (the SSE set is that of every amd64 CPU without
// GOEXPERIMENT=simd) do every transform in SSE2 assembly, the kernels'
// included: F(2x2) about 20 per tile and 150 for the kernels, F(4x4) 50
// and 400 (fitted to BenchmarkConvPaths on Zen 5 with AVX2 and FMA off and
// OpenBLAS's Sandybridge kernels, and with AVX off too and its Nehalem
// kernels, which ranked the paths alike in these units; the default
// build's SSE set with OpenBLAS's own AVX-512 kernels ranks them so too,
// or ties: F(2x2) and F(4x4) at 14x14 and 7x7 with 5 images, all three at
// 3x3 with 20). With gonum's pure-Go products,
// five times slower than OpenBLAS's, the SIMD constants still rank the
// paths as measured. The kernels and the BLAS do not change while the
// process runs, so the choice is made once (Tile runs at every
// convolution).
var costs = sync.OnceValue(func() []cost {
	switch {
	case vec.SIMD() || blas.Name != "openblas":
		return simdCosts
	case vec.ISA() == "AVX" || vec.ISA() == "SSE":
		return sse2Costs
	}
	return plainCosts
})

var (
	simdCosts  = []cost{{2, 20, 400}, {4, 42, 800}}
	sse2Costs  = []cost{{2, 20, 150}, {4, 50, 400}}
	plainCosts = []cost{{2, 40, 400}, {4, 141, 4000}}
)
