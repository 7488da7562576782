package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Linear algebra: the task-batched matrix product (the scaled sums of the
// inner SGD step are in ops_sums.go).

// bmmKernel multiplies per task: out[t] = op(a[t]) op(b[t]) with op the
// identity or the transpose, for a and b of shape (T, rows, cols). With
// tiledB, b is a tile (the same matrix for every task, as the meta-weights
// at the support pass) and a is not transposed: only b[0] is read, and a
// product too small to run on several goroutines is one product of the
// stacked (T*rows)-row a by b[0], which keeps the kernels' row blocks full
// where each task has only a few rows.
type bmmKernel struct{ transA, transB, tiledB bool }

// bmm returns the task-batched product op(a) op(b). A b that is an
// adapted inner step x + k y with a thin y (adaptedStep) is distributed,
// a op(x) + k a op(y), so that neither b nor y is computed. A b that is a thin
// product (thinProduct: x[t]ᵀ y[t] over few rows, such as a per-task weight
// gradient from a few points) is not read as a matrix: a b[t] = (a[t]
// x[t]ᵀ) y[t] and a b[t]ᵀ = (a[t] y[t]ᵀ) x[t], products through the few
// rows, cost less than the product by b, and b itself then need not be
// computed (MAML's second-order terms of the inner step are such products).
func bmm(a, b *gorgonia.Node, transA, transB bool) (*gorgonia.Node, error) {
	if x, y, k, ok := adaptedStep(b); ok && !transA {
		p, err := bmm(a, x, false, transB)
		if err != nil {
			return nil, err
		}
		q, err := bmm(a, y, false, transB)
		if err != nil {
			return nil, err
		}
		return axpy(p, q, k)
	}
	if x, y, ok := thinProduct(b); ok && !transA {
		if transB {
			x, y = y, x
		}
		p, err := bmm(a, x, false, true)
		if err != nil {
			return nil, err
		}
		return bmm(p, y, false, false)
	}
	return apply(bmmKernel{transA, transB, !transA && isTile(b)}, a, b)
}

// isTile reports whether n is a tile node, whose tasks' values are equal.
func isTile(n *gorgonia.Node) bool {
	o, ok := n.Op().(*op)
	if !ok {
		return false
	}
	_, ok = o.k.(tileKernel)
	return ok
}

func (k bmmKernel) name() string {
	b := map[bool]string{false: "B", true: "Bᵀ"}[k.transB]
	if k.tiledB {
		b = "tiled " + b
	}
	return fmt.Sprintf("bmm(%s,%s)", map[bool]string{false: "A", true: "Aᵀ"}[k.transA], b)
}

// dims returns m, kk, n of op(a) (m, kk) times op(b) (kk, n).
func (k bmmKernel) dims(a, b tensor.Shape) (m, kk, n int) {
	m, kk = a[1], a[2]
	if k.transA {
		m, kk = kk, m
	}
	n = b[2]
	if k.transB {
		n = b[1]
	}
	return m, kk, n
}

func (k bmmKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || len(in[0]) != 3 || len(in[1]) != 3 || in[0][0] != in[1][0] {
		return nil, shapeErr("two (T, rows, cols) inputs", in)
	}
	m, kk, n := k.dims(in[0], in[1])
	kb := in[1][1]
	if k.transB {
		kb = in[1][2]
	}
	if kk != kb {
		return nil, fmt.Errorf("inner sizes of %v and %v differ", in[0], in[1])
	}
	return tensor.Shape{in[0][0], m, n}, nil
}

func (k bmmKernel) forward(a *args) {
	s := a.s
	m, kk, n := k.dims(s[0], s[1])
	sa, sb, sc := s[0][1]*s[0][2], s[1][1]*s[1][2], m*n
	sy := sb // where task t's b starts: t*sy
	if k.tiledB {
		if !largeTasks(s[0][0], m*kk*n) { // one product of all tasks' rows by b[0]
			rows := s[0][0] * m
			if a.o32 != nil {
				gemm(false, k.transB, rows, n, kk, a.i32[0], a.i32[1][:sb], 0, a.o32)
				return
			}
			k.gemm(rows, kk, n, a.i64[0], s[0][2], a.i64[1][:sb], s[1][2], a.o64)
			return
		}
		sy = 0 // large products keep a goroutine per task, all reading b[0]
	}
	if a.o32 != nil {
		x, y, out := a.i32[0], a.i32[1], a.o32
		parallelTasks(s[0][0], m*kk*n, func(t int) {
			gemm(k.transA, k.transB, m, n, kk, x[t*sa:(t+1)*sa], y[t*sy:t*sy+sb], 0, out[t*sc:(t+1)*sc])
		})
		return
	}
	x, y, out := a.i64[0], a.i64[1], a.o64
	if !parallel(s[0][0], m*kk*n) { // no closure: the MLP's small graphs allocate nothing
		for t := 0; t < s[0][0]; t++ {
			k.gemm(m, kk, n, x[t*sa:(t+1)*sa], s[0][2], y[t*sy:t*sy+sb], s[1][2], out[t*sc:(t+1)*sc])
		}
		return
	}
	parallelTasks(s[0][0], m*kk*n, func(t int) {
		k.gemm(m, kk, n, x[t*sa:(t+1)*sa], s[0][2], y[t*sy:t*sy+sb], s[1][2], out[t*sc:(t+1)*sc])
	})
}

// gemm sets c (m, n) to op(a) op(b) for one task, where a and b are stored
// row-major with lda and ldb columns. Large products go to the registered
// BLAS (blas64.Use). The small shapes of few-shot regression (5x40x40 and
// smaller) cost less than a BLAS call: with AVX-512 they run on vec's
// kernels (c as combinations of the rows of op(b), or as dot products of
// rows when b is transposed), else on gonum's matrix-vector and rank-one
// kernels (twice as fast as a general Dgemm at 5x40x40).
func (k bmmKernel) gemm(m, kk, n int, a []float64, lda int, b []float64, ldb int, c []float64) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if k.transA {
		ta = blas.Trans
	}
	if k.transB {
		tb = blas.Trans
	}
	if m*kk*n >= bigProduct {
		blas64.Implementation().Dgemm(ta, tb, m, n, kk, 1, a, lda, b, ldb, 0, c, n)
		return
	}
	if vec.MatMulSIMD() && k.smallSIMD(m, kk, n, a, lda, b, ldb, c) {
		return
	}
	var impl gonum.Implementation
	switch {
	case n == 1: // c = op(a) times the vector b
		ar, ac := m, kk
		if k.transA {
			ar, ac = kk, m
		}
		impl.Dgemv(ta, ar, ac, 1, a, lda, b, 1, 0, c, 1)
	case kk < m: // c = sum over p of column p of op(a) times row p of op(b)
		clear(c)
		for p := 0; p < kk; p++ {
			// Slice only where the stored layout puts column p of op(a)
			// and row p of op(b): p*ldb is past the end of a transposed b
			// with fewer rows (n) than kk.
			x, incX := a[p:], lda
			if k.transA {
				x, incX = a[p*lda:], 1
			}
			y, incY := b[p:], ldb
			if !k.transB {
				y, incY = b[p*ldb:], 1
			}
			impl.Dger(m, n, 1, x, incX, y, incY, c, n)
		}
	default: // row i of c = op(b)ᵀ times row i of op(a)
		tb, br, bc := blas.Trans, kk, n
		if k.transB {
			tb, br, bc = blas.NoTrans, n, kk
		}
		for i := 0; i < m; i++ {
			x, incX := a[i:], lda
			if !k.transA {
				x, incX = a[i*lda:], 1
			}
			impl.Dgemv(tb, br, bc, 1, b, ldb, x, incX, 0, c[i*n:(i+1)*n], 1)
		}
	}
}

// smallSIMD runs gemm's small product on vec's kernels and reports whether
// it could: every case but both operands transposed, which the MLP's
// graphs never have. A column c (n = 1) is stored as the row cᵀ = op(b)ᵀ
// op(a)ᵀ, a vector-matrix product when a is transposed and otherwise the dot
// products of b with 8 rows of a at a time; b with one row per
// inner index (not transposed, or kk = 1) gives c's rows as combinations of
// b's; a transposed b makes c the dot products of rows of a and b.
func (k bmmKernel) smallSIMD(m, kk, n int, a []float64, lda int, b []float64, ldb int, c []float64) bool {
	ars, acs := lda, 1
	if k.transA {
		ars, acs = 1, lda
	}
	switch {
	case n == 1 && k.transA: // b is a vector either way (ldb 1, or one row)
		vec.MatMulRows(1, kk, m, b, 0, 1, a, lda, c)
	case n == 1: // the dot products of b with the rows of a, 8 at a time
		vec.MatMulDots(1, kk, m, b, 0, a, lda, c)
	case !k.transB || kk == 1:
		vec.MatMulRows(m, kk, n, a, ars, acs, b, ldb, c)
	case !k.transA:
		vec.MatMulDots(m, kk, n, a, lda, b, ldb, c)
	default:
		return false
	}
	return true
}

// gemm sets c (m, n) to op(a) op(b) + beta c with the registered BLAS, for
// row-major a and b with the columns their transposition implies.
func gemm[T float](transA, transB bool, m, n, k int, a, b []T, beta T, c []T) {
	ta, tb, lda, ldb := blas.NoTrans, blas.NoTrans, k, n
	if transA {
		ta, lda = blas.Trans, m
	}
	if transB {
		tb, ldb = blas.Trans, k
	}
	switch a := any(a).(type) {
	case []float64:
		blas64.Implementation().Dgemm(ta, tb, m, n, k, 1, a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), n)
	case []float32:
		blas32.Implementation().Sgemm(ta, tb, m, n, k, 1, a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), n)
	}
}

// bigProduct is the size m*k*n from which a product goes to Dgemm.
const bigProduct = 1 << 16

// grad: for C = op(A) op(B) with upstream G, the input gradients are again
// batched products with other transpose flags.
func (k bmmKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	a, b := in[0], in[1]
	var da, db *gorgonia.Node
	var err error
	switch {
	case !k.transA && !k.transB: // C = A B
		if da, err = bmm(g, b, false, true); err == nil {
			db, err = bmm(a, g, true, false)
		}
	case k.transA && !k.transB: // C = Aᵀ B
		if da, err = bmm(b, g, false, true); err == nil {
			db, err = bmm(a, g, false, false)
		}
	case !k.transA && k.transB: // C = A Bᵀ
		if da, err = bmm(g, b, false, false); err == nil {
			db, err = bmm(g, a, true, false)
		}
	default: // C = Aᵀ Bᵀ
		if da, err = bmm(b, g, true, true); err == nil {
			db, err = bmm(g, a, true, true)
		}
	}
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{da, db}, nil
}
