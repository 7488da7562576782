package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/blas"
	"github.com/trmaml/trmaml/graph/internal/cpu"
	"github.com/trmaml/trmaml/graph/internal/vec"
)

// BLAS names the implementation of the large matrix products: gonum's pure
// Go BLAS, or OpenBLAS in a build with -tags openblas.
const BLAS = blas.Name

// BLASCore names the kernels OpenBLAS runs (detected for the CPU, or forced
// by OPENBLAS_CORETYPE); it is empty with gonum's BLAS.
func BLASCore() string { return blas.Core() }

// BLASNote warns, in one sentence, when OpenBLAS runs kernels for an older
// instruction set than the CPU has (OPENBLAS_CORETYPE set below it, or a
// CPU OpenBLAS does not know), which halves the products' speed or worse;
// it is empty otherwise.
func BLASNote() string { return blas.Note() }

// SIMD reports whether the float32 elementwise loops (batch norm, pooling,
// ReLU, sums; package internal/vec) run on the full vector set: in a build
// with GOEXPERIMENT=simd on amd64, on a CPU with AVX2 and FMA (8 lanes) or
// AVX-512 (16 lanes, and the assembly kernels). Elsewhere on amd64 the
// heaviest of them run an SSE2 (or, with AVX alone, an AVX) set that
// computes the plain loops' values bit for bit (Engine names the set), and
// SIMD is false; other architectures run the plain loops. The fast build
// is
//
//	GOEXPERIMENT=simd go build -tags openblas ./cmd/trmaml
func SIMD() bool { return vec.SIMD() }

// Engine describes what runs this build's arithmetic, for timings that are
// read later: the machine (its CPU model, vector extensions and CPU count)
// and its Kernels. The same config runs at very different speeds on
// different CPUs and kernel sets, so a figure without them cannot be
// compared.
func Engine() string { return cpu.Machine() + "; " + Kernels() }

// Kernels names the arithmetic a run's numbers depend on: the BLAS and its
// kernels, and the set of elementwise loops. Two processes with the same
// Kernels compute the same values bit for bit, whatever the machine and its
// core count; with different ones they may differ in rounding.
func Kernels() string {
	loops := "plain Go loops"
	if isa := vec.ISA(); isa != "" {
		loops = "SIMD loops (" + isa + ")"
	}
	if core := BLASCore(); core != "" {
		return fmt.Sprintf("BLAS %s (%s kernels), %s", BLAS, core, loops)
	}
	return fmt.Sprintf("BLAS %s, %s", BLAS, loops)
}
