package graph

import "github.com/trmaml/trmaml/graph/internal/vec"

// SIMD reports whether the float32 elementwise loops (batch norm, pooling,
// ReLU, sums; package internal/vec) run on 8-lane vector instructions: in a
// build with GOEXPERIMENT=simd on amd64, on a CPU with AVX2 and FMA. The
// fast build is
//
//	GOEXPERIMENT=simd go build -tags openblas ./cmd/trmaml
//
// and without the experiment the same loops run as plain Go.
func SIMD() bool { return vec.SIMD() }
