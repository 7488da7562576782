//go:build openblas

package blas

// The fast path: build with -tags openblas on a machine with OpenBLAS
// (Debian: apt-get install libopenblas-dev) and the large matrix products go
// to OpenBLAS through gonum's cgo bindings (gonum.org/v1/netlib), behind the
// same blas interface as the pure-Go fallback (gonum.go).

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int);
// char* openblas_get_corename(void);
import "C"

import (
	"os"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// Name names the implementation of the large matrix products.
const Name = "openblas"

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

// Core names the kernels OpenBLAS runs: the ones it detected for the CPU
// when it was loaded, or those OPENBLAS_CORETYPE forced. They matter: on
// this project's AVX-512 machines (AMD EPYC), the AVX2 "Haswell" kernels
// that an OPENBLAS_CORETYPE=Haswell in the environment selects run the CNN's
// convolution products at 88-96 GFLOP/s on one core, the detected
// "Cooperlake"/"SkylakeX" AVX-512 ones at 147-180 (README, CNN engine).
func Core() string { return C.GoString(C.openblas_get_corename()) }
