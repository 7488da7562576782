package vec

// The small float64 matrix products of few-shot regression (the sine MLP's
// 5x40 by 40x40 per task), where a BLAS call costs more than the
// arithmetic. Matrices are row-major slices with explicit strides; a
// transposed operand is the same slice read with swapped strides.

// matMulRows and matMulDots are the implementations in use: the plain loops
// below, replaced at init by AVX-512 ones where built and supported.
var (
	matMulRows = matMulRowsGo
	matMulDots = matMulDotsGo
	matMulSIMD = false
)

// MatMulSIMD reports whether MatMulRows and MatMulDots run on vector
// instructions (AVX-512, GOEXPERIMENT=simd); otherwise they are plain loops,
// slower than a BLAS.
func MatMulSIMD() bool { return matMulSIMD }

// MatMulRows sets c (m x n, row-major) to A B, where A[i][p] is
// a[i*ars+p*acs] and row p of B is b[p*ldb:p*ldb+n]: each row of c is a
// combination of rows of B, so B must have contiguous rows (A may be
// transposed).
func MatMulRows(m, k, n int, a []float64, ars, acs int, b []float64, ldb int, c []float64) {
	matMulRows(m, k, n, a, ars, acs, b, ldb, c)
}

// MatMulDots sets c (m x n, row-major) to the dot products c[i][j] =
// a[i*lda:i*lda+k] . b[j*ldb:j*ldb+k]: A Bᵀ for row-major A (m x k) and B
// (n x k).
func MatMulDots(m, k, n int, a []float64, lda int, b []float64, ldb int, c []float64) {
	matMulDots(m, k, n, a, lda, b, ldb, c)
}

func matMulRowsGo(m, k, n int, a []float64, ars, acs int, b []float64, ldb int, c []float64) {
	c = c[:m*n]
	clear(c)
	for i := range m {
		ci := c[i*n : (i+1)*n]
		for p := range k {
			s := a[i*ars+p*acs]
			for j, v := range b[p*ldb : p*ldb+n] {
				ci[j] += s * v
			}
		}
	}
}

func matMulDotsGo(m, k, n int, a []float64, lda int, b []float64, ldb int, c []float64) {
	c = c[:m*n]
	for i := range m {
		ai := a[i*lda : i*lda+k]
		for j := range n {
			s := 0.0
			for p, v := range b[j*ldb : j*ldb+k] {
				s += ai[p] * v
			}
			c[i*n+j] = s
		}
	}
}
