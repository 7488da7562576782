//go:build openblas

package graph

// The fast path: build with -tags openblas on a machine with OpenBLAS
// (Debian: apt-get install libopenblas-dev) and the large matrix products go
// to OpenBLAS through gonum's cgo bindings (gonum.org/v1/netlib), behind the
// same blas interface as the pure-Go fallback (blas_gonum.go).

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int);
import "C"

import (
	"os"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// BLAS names the implementation of the large matrix products.
const BLAS = "openblas"

// init routes the products to OpenBLAS, single-threaded unless
// OPENBLAS_NUM_THREADS says otherwise: the ops already run the tasks of a
// batch on GOMAXPROCS goroutines, and threads in both places oversubscribe
// the cores (measured: both ~10% slower than either alone on 2 cores).
func init() {
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" {
		C.openblas_set_num_threads(1)
	}
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}
