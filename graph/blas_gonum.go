//go:build !openblas

package graph

// Without the openblas build tag, matrix products use gonum's pure-Go BLAS:
// it builds and runs anywhere, several times slower on the CNN's products
// than OpenBLAS (see blas_openblas.go and the README).

// BLAS names the implementation of the large matrix products.
const BLAS = "gonum (pure Go)"

// BLASCore is empty: gonum's pure-Go BLAS has one set of kernels.
func BLASCore() string { return "" }
