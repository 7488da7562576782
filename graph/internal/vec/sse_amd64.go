//go:build goexperiment.simd

package vec

// The SSE set: for CPUs without AVX (Westmere and older, and the Pentium
// and Celeron models without AVX), where archsimd has no path (it encodes
// even its 4-lane operations with AVX). It replaces the pooled batch
// norm's window search, its backward and its centred sums, the heaviest
// plain loops there (measured with pprof), with SSE2 assembly
// (sse_amd64.s) that does the plain loops' operations in their order: the
// same values bit for bit (TestSIMDMatchesPlain).

// sseKernels is the plain set with the SSE kernels in place.
func sseKernels() kernels {
	k := plain
	k.maxAffRow, k.backPoolMax, k.gatherDotMax = maxAffineRowSSE, backPoolMaxRowSSE, gatherDotMaxRowSSE
	return k
}

func maxAffineRowSSE(dst, z0, z1, a, c []float32) {
	f := len(a)
	if f == 0 || f%4 != 0 || len(dst) < f {
		maxAffineRowGo(dst, z0, z1, a, c)
		return
	}
	n := len(dst) / f
	_, _, _, _ = dst[n*f-1], z0[2*n*f-1], z1[2*n*f-1], c[f-1] // the kernel's reach
	maxAffineRowSSEKernel(&dst[0], &z0[0], &z1[0], &a[0], &c[0], n, f)
}

//go:noescape
func maxAffineRowSSEKernel(dst, z0, z1, a, c *float32, n, f int)

func backPoolMaxRowSSE(o0, o1, z0, z1, g, u, v, w []float32) {
	c := len(u)
	if c == 0 || c%4 != 0 || len(g) < c {
		backPoolMaxRowGo(o0, o1, z0, z1, g, u, v, w)
		return
	}
	n := len(g) / c
	_, _, _, _, _, _ = o0[2*n*c-1], o1[2*n*c-1], z0[2*n*c-1], z1[2*n*c-1], v[c-1], w[c-1]
	backPoolMaxRowSSEKernel(&o0[0], &o1[0], &z0[0], &z1[0], &g[0], &u[0], &v[0], &w[0], n, c)
}

//go:noescape
func backPoolMaxRowSSEKernel(o0, o1, z0, z1, grad, u, v, w *float32, n, c int)

func gatherDotMaxRowSSE(acc []float64, z0, z1, g, s, mu []float32) {
	f := len(mu)
	if f == 0 || f%4 != 0 || len(g) < f {
		gatherDotMaxRowGo(acc, z0, z1, g, s, mu)
		return
	}
	n := len(g) / f
	_, _, _, _, _ = acc[f-1], z0[2*n*f-1], z1[2*n*f-1], s[f-1], g[n*f-1]
	gatherDotMaxRowSSEKernel(&acc[0], &z0[0], &z1[0], &g[0], &s[0], &mu[0], n, f)
}

//go:noescape
func gatherDotMaxRowSSEKernel(acc *float64, z0, z1, grad, s, mu *float32, n, f int)
