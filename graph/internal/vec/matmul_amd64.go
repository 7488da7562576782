//go:build goexperiment.simd

package vec

import "simd/archsimd"

func init() {
	if archsimd.X86.AVX512() {
		matMulRows, matMulDots, matMulSIMD = matMulRows512, matMulDots512, true
	}
}

// rowsKernel (matmul_amd64.s) sets 6 rows of 16 columns of c to the
// product of 6 rows of A (a[r] points at row r's first value) and k rows of
// B, in registers; see the assembly for the layout.
//
//go:noescape
func rowsKernel(k int, a *[6]*float64, acs int, b *float64, ldb int, mask0, mask1 uint8, c *float64, ldc int)

// matMulRows512 computes c in blocks of 6 rows by 16 columns (masked at
// the right edge) with rowsKernel: per row of B, two loads, six broadcasts
// and twelve fused multiply-adds. A last block of fewer rows repeats its
// first row in the others and goes through a scratch block.
func matMulRows512(m, k, n int, a []float64, ars, acs int, b []float64, ldb int, c []float64) {
	if k == 0 {
		clear(c[:m*n])
		return
	}
	_ = a[(m-1)*ars+(k-1)*acs] // the last value of A the kernel reads
	_ = b[(k-1)*ldb+n-1]       // of B
	_ = c[m*n-1]               // and of c it writes
	var rows [6]*float64
	var out [6 * 16]float64
	for i := 0; i < m; i += 6 {
		nr := min(6, m-i)
		for r := range rows {
			rows[r] = &a[(i+min(r, nr-1))*ars]
		}
		for j := 0; j < n; j += 16 {
			w := min(16, n-j)
			m0, m1 := uint8(1<<min(w, 8)-1), uint8(1<<max(w-8, 0)-1)
			if nr == 6 {
				rowsKernel(k, &rows, acs, &b[j], ldb, m0, m1, &c[i*n+j], n)
				continue
			}
			rowsKernel(k, &rows, acs, &b[j], ldb, m0, m1, &out[0], 16)
			for r := range nr {
				copy(c[(i+r)*n+j:(i+r)*n+j+w], out[16*r:])
			}
		}
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
