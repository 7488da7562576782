//go:build openblas

package graph

// The fast path: build with -tags openblas on a machine with OpenBLAS
// (Debian: apt-get install libopenblas-dev) and the large matrix products go
// to OpenBLAS through gonum's cgo bindings (gonum.org/v1/netlib), behind the
// same blas interface as the pure-Go fallback (blas_gonum.go).

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// BLAS names the implementation of the large matrix products.
const BLAS = "openblas"

func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}
