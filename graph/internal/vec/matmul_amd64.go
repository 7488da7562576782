//go:build goexperiment.simd

package vec

import "simd/archsimd"

func init() {
	if archsimd.X86.AVX512() {
		matMulRows, matMulDots, matMulSIMD = matMulRows512, matMulDots512, true
	}
}

// rowsKernel (matmul_amd64.s) sets 6 rows of c (c[r] points at row r's
// first value) to the product of 6 rows of A (likewise) and k rows of n
// columns of B; see the assembly.
//
//go:noescape
func rowsKernel(k int, a *[6]*float64, acs int, b *float64, ldb, n int, c *[6]*float64)

// matMulRows512 computes c in blocks of 6 rows with rowsKernel: per row of
// B and 16 columns, two loads, six broadcasts and twelve fused
// multiply-adds. A last block of fewer rows repeats its last row, which
// then stores the same values twice.
func matMulRows512(m, k, n int, a []float64, ars, acs int, b []float64, ldb int, c []float64) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c[:m*n])
		return
	}
	_ = a[(m-1)*ars+(k-1)*acs] // the last value of A the kernel reads
	_ = b[(k-1)*ldb+n-1]       // of B
	_ = c[m*n-1]               // and of c it writes
	var ar, cr [6]*float64
	for i := 0; i < m; i += 6 {
		for r := range ar {
			ir := min(i+r, m-1)
			ar[r], cr[r] = &a[ir*ars], &c[ir*n]
		}
		rowsKernel(k, &ar, acs, &b[0], ldb, n, &cr)
	}
}

// dotsKernel (matmul_amd64.s) sets c[i*ldc+q] to the dot product of row i
// of A and b[q] for i < m and the 8 rows q, stored where bit q of mask is
// set; see the assembly.
//
//go:noescape
func dotsKernel(m, k int, a *float64, lda int, b *[8]*float64, mask uint8, c *float64, ldc int)

// matMulDots512 computes c = A Bᵀ in blocks of 8 columns of c (8 rows of
// B) with dotsKernel; a last block of fewer repeats its last row of B and
// stores only its own columns.
func matMulDots512(m, k, n int, a []float64, lda int, b []float64, ldb int, c []float64) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c[:m*n])
		return
	}
	_ = a[(m-1)*lda+k-1] // the last value of A the kernel reads
	_ = b[(n-1)*ldb+k-1] // of B
	_ = c[m*n-1]         // and of c it writes
	var rows [8]*float64
	for j := 0; j < n; j += 8 {
		w := min(8, n-j)
		for q := range rows {
			rows[q] = &b[(j+min(q, w-1))*ldb]
		}
		dotsKernel(m, k, &a[0], lda, &rows, uint8(1<<w-1), &c[j], n)
	}
}
