// Package vec holds the loops that dominate the CNN engine's time
// outside the matrix products: per-channel affine maps, batch-norm moments,
// 2x2 max-pool windows, ReLU and sums over rows. Activations are stored as
// rows of f channels (one row per pixel), and the per-channel operands are
// vectors of length f.
//
// Go does not vectorise loops, and at about 1 ns per element these loops
// cost as much as the convolutions' matrix products (measured with pprof on
// the Omniglot CNN). Built with GOEXPERIMENT=simd on amd64 and run on a CPU
// with AVX2 and FMA, every function uses 8-lane vectors from the standard
// library's simd/archsimd package; otherwise, for the tails of the
// elementwise kernels that do not fill a vector, and for the whole of a row
// kernel whose rows are not a multiple of 8 channels, it runs the plain Go
// loops of generic.go, which the tests use as the reference. Float64 runs
// the plain loops except for the float64 graphs of small models (the sine
// MLP): the small matrix products (matmul.go, an assembly micro-kernel) and
// a few elementwise loops (f64.go) use AVX-512 where the CPU has it.
// Results agree with the plain loops up to the rounding of fused
// multiply-adds and of the order of float64 sums; the float64 elementwise
// loops agree bit for bit.
//
// Five float32 kernels are in assembly on AVX-512 (Go's compiler gives
// SIMD code 15 vector registers and spilled their working sets): the first
// block's convolution with its pooling and ReLU (convpool_amd64.s) and
// with its backward sums (convback_amd64.s), and the F(4x4) input, output
// and gradient transforms (winograd4_amd64.s). Each does the operations
// of its Go counterparts in the same order, and the tests ask for the same
// bits (TestConvPool1IsItsParts, TestConvBack1IsItsParts,
// TestWinogradTransformsAgree).
package vec
