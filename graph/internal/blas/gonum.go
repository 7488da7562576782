//go:build !openblas

package blas

// Without the openblas build tag, matrix products use gonum's pure-Go BLAS:
// it builds and runs anywhere, several times slower on the CNN's products
// than OpenBLAS (see openblas.go and the README).

// Name names the implementation of the large matrix products.
const Name = "gonum (pure Go)"

// Core is empty: gonum's pure-Go BLAS has one set of kernels.
func Core() string { return "" }
