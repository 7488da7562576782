package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
)

// SIMD reports whether the float32 elementwise loops (batch norm, pooling,
// ReLU, sums; package internal/vec) run on 8-lane vector instructions: in a
// build with GOEXPERIMENT=simd on amd64, on a CPU with AVX2 and FMA. The
// fast build is
//
//	GOEXPERIMENT=simd go build -tags openblas ./cmd/trmaml
//
// and without the experiment the same loops run as plain Go.
func SIMD() bool { return vec.SIMD() }

// Engine describes what runs this build's arithmetic, for timings that are
// read later: the BLAS and its kernels, and the elementwise loops.
func Engine() string {
	loops := "plain Go loops"
	if SIMD() {
		loops = "SIMD loops"
	}
	if core := BLASCore(); core != "" {
		return fmt.Sprintf("BLAS %s (%s kernels), %s", BLAS, core, loops)
	}
	return fmt.Sprintf("BLAS %s, %s", BLAS, loops)
}
