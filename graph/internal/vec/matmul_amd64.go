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

// matMulDots512 computes c = A Bᵀ as its transpose B Aᵀ with
// matMulRows512, which needs the rows of its right operand contiguous: A
// (few rows in few-shot learning) is transposed into a scratch buffer
// first, and the result back out of one.
func matMulDots512(m, k, n int, a []float64, lda int, b []float64, ldb int, c []float64) {
	var scratch [512]float64
	s := scratch[:]
	if k*m+n*m > len(s) {
		s = make([]float64, k*m+n*m)
	}
	at, ct := s[:k*m], s[k*m:k*m+n*m]
	for i := range m {
		for p, v := range a[i*lda : i*lda+k] {
			at[p*m+i] = v
		}
	}
	matMulRows512(n, k, m, b, ldb, 1, at, m, ct)
	for j := range n {
		for i, v := range ct[j*m : (j+1)*m] {
			c[i*n+j] = v
		}
	}
}
