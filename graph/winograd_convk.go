package graph

import (
	"github.com/trmaml/trmaml/graph/internal/vec"
)

// convK on the Winograd path: the adjoint, in the kernels, of winograd.go's
// forward transforms, with the same tiles and buffers.

// winogradKTask sets out (9*C x F, one task) to convK(x, g): the sum over
// the pixels of n images of H x W of the 3x3 patches of x (C channels, zero
// padding 1) times g (F channels), as the adjoint of the Winograd forward
// with output tiles of m = 2 or 4: with V the transformed input tiles and
// A g Aᵀ the (m+2)x(m+2) transforms of the m x m tiles of g, the (m+2)^2
// sums S = sum over tiles of Vᵀ (A g Aᵀ) are as many products of (C x
// tiles) by (tiles x F), and out = Gᵀ S G per channel pair.
func winogradKTask[T float](m, H, W, C, F, n int, x, g []T, out []T) {
	th, tw := (H+m-1)/m, (W+m-1)/m
	nn := (m + 2) * (m + 2)
	per := max(1, min(n, winogradValues/(th*tw*nn*max(C, F))))
	us, vs, gs := winogradStride(C*F), winogradStride(per*th*tw*C), winogradStride(per*th*tw*F)
	sizes := []int{nn * us, (m*th + 2) * (m*tw + 2) * C, nn * vs, nn * gs, max(m*m, 9) * F}
	var parts [5][]T
	bp := winogradBuffers(sizes, parts[:])
	s, pad, v, gt, tmp := parts[0], parts[1], parts[2], parts[3], parts[4]
	clear(pad)
	for img := 0; img < n; img += per {
		imgs := min(per, n-img)
		tiles := imgs * th * tw
		winogradInputs(m, H, W, C, x[img*H*W*C:], imgs, pad, v, vs)
		for i := 0; i < imgs; i++ {
			gi := g[(img+i)*H*W*F:][:H*W*F]
			for ty := 0; ty < th; ty++ {
				for tx := 0; tx < tw; tx++ {
					t := (i*th+ty)*tw + tx
					y, xx := m*ty, m*tx
					if y+m <= H && xx+m <= W {
						winogradGrad(m, gt[t*F:], gs, gi[(y*W+xx)*F:], W*F, F)
						continue
					}
					// A tile overhanging the image: zeros outside.
					clear(tmp[:m*m*F])
					for dy := 0; dy < m && y+dy < H; dy++ {
						w := min(m, W-xx)
						copy(tmp[dy*m*F:][:w*F], gi[((y+dy)*W+xx)*F:])
					}
					winogradGrad(m, gt[t*F:], gs, tmp, m*F, F)
				}
			}
		}
		var beta T
		if img > 0 {
			beta = 1
		}
		for e := 0; e < nn; e++ {
			gemm(true, false, C, F, tiles, v[e*vs:], gt[e*gs:], beta, s[e*us:])
		}
	}
	// Gᵀ S G per channel into tmp, then to out's rows (as in
	// winogradKernels, for the cache).
	out = out[:9*C*F]
	var src [36][]T
	var dst [9][]T
	for i := range dst {
		dst[i] = tmp[i*F : (i+1)*F]
	}
	for c := 0; c < C; c++ {
		for e := 0; e < nn; e++ {
			src[e] = s[e*us+c*F:][:F]
		}
		if m == 2 {
			vec.WinogradKernelT(&dst, (*[16][]T)(src[:16]))
		} else {
			vec.Winograd4KernelT(&dst, &src)
		}
		for i := range dst {
			copy(out[(i*C+c)*F:][:F], dst[i])
		}
	}
	winogradScratch.Put(bp)
}

// winogradGrad sets dst ((m+2)^2 rows of c values, stride apart) to A g
// Aᵀ for the m x m tile g whose row r holds m pixels of c channels from
// g[r*gw]: the adjoint of winogradOut.
func winogradGrad[T float](m int, dst []T, stride int, g []T, gw, c int) {
	if m == 2 {
		vec.WinogradGrad(dst, stride, g, g[gw:], c)
	} else {
		vec.Winograd4Grad(dst, stride, g, gw, c)
	}
}

// winogradConvK runs winogradKTask with tiles of m for every task of a
// convK of geometry g (x the images, gr the values at every pixel, F
// channels), on several goroutines.
func winogradConvK[T float](m int, g convGeom, F int, x, gr []T, out []T) {
	n := g.pixelsPerTask() / (g.H * g.W)
	parallelTasks(g.x[0], 1<<20, func(t int) {
		winogradKTask(m, g.H, g.W, g.C, F, n, x[t*n*g.H*g.W*g.C:], gr[t*n*g.H*g.W*F:], out[t*9*g.C*F:])
	})
}
