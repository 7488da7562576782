package graph

import (
	"sync"

	"github.com/trmaml/trmaml/graph/internal/vec"
)

// Winograd's F(2x2, 3x3) convolution (Lavin and Gray, 2016) computes conv
// and convT forward with 16 products of (tiles x Cin) by (Cin x Cout) per
// 2x2 output tile instead of im2col's 36 multiplications per tile and
// channel pair: 2.25 times fewer FLOPs on even image sizes (1.7 times at
// 7x7, 1.3 at 3x3, where tiles overhang the image), the bulk of the
// CNN's forward pass. Only the forward computations change: the derivatives
// of conv and convT are the same ops as before, so the nested
// finite-difference harness checks these forwards against the exact im2col
// ops of their derivatives.
//
// convT(G, K) is itself a 3x3 convolution of G (F channels) with padding
// 1, by the kernel rotated by 180 degrees with its channel axes swapped;
// rotating k turns G k Gᵀ into the same matrix with rows and columns 0 and 3
// swapped, so both ops share one kernel transform.

// winogradMin is the fewest input and output channels for which conv and
// convT take the Winograd path: with fewer (the first block's one channel)
// the products are too thin.
const winogradMin = 16

// winogradAlways makes every conv and convT take the Winograd path, for
// tests on small images and few channels.
var winogradAlways = false

// winogradValues bounds the transformed values of a chunk of images (256 KB
// in float32, in and out, so that they stay in the cache between the
// transforms and the products: one 14x14 image at 64 channels; measured on
// AMD Zen 4, the second block's forward for 8 tasks of 50 images took 38 ms
// on one core with this bound and 45-55 ms with 4 to 16 times more).
const winogradValues = 1 << 16

// winogradScratch holds the buffers of a task's Winograd convolution.
var winogradScratch sync.Pool

// useWinograd reports whether a convolution of n images of H x W from cin
// to cout channels (per task) takes the Winograd path: when its estimated
// cost is below im2col's, in products of a row of cin values by the cin x
// cout kernels. im2col does 9 per pixel; Winograd 16 per tile, about 4 more
// in its transforms, and about 400 for transforming the kernels (measured
// on AMD Zen 4, C = F = 64), which small images (the last block's 3x3)
// do not repay.
func useWinograd(H, W, n, cin, cout int) bool {
	if winogradAlways {
		return true
	}
	tiles := n * ((H + 1) / 2) * ((W + 1) / 2)
	return cin >= winogradMin && cout >= winogradMin && 20*tiles+400 < 9*n*H*W
}

// winogradKernels sets u (16 matrices of C x F, e = 4a+b) to G k Gᵀ of the
// 3x3 kernel of every channel pair of k (9*C x F, rows in (kh, kw, c)
// order), with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], a row of F
// filters at a time.
func winogradKernels[T float](k []T, C, F int, u []T) {
	k, u = k[:9*C*F], u[:16*C*F]
	var src [9][]T
	var dst [16][]T
	for c := 0; c < C; c++ {
		for i := range src {
			src[i] = k[(i*C+c)*F:][:F]
		}
		for e := range dst {
			dst[e] = u[(e*C+c)*F:][:F]
		}
		vec.WinogradKernel(&dst, &src)
	}
}

// rotated maps the index e = 4a+b of a transformed kernel to that of the
// kernel rotated by 180 degrees: a and b with 0 and 3 swapped.
func rotated(e int) int {
	s := [4]int{3, 1, 2, 0}
	return 4*s[e/4] + s[e%4]
}

// winogradTask sets out (n images of H x W x cout, one task) to the 3x3
// convolution with zero padding 1 of x (n images of H x W x cin) by the
// kernel matrix k (9*C x F, one task): conv with cin = C and cout = F, or,
// if transposed, convT with cin = F and cout = C.
func winogradTask[T float](H, W, C, F, n int, x, k []T, transposed bool, out []T) {
	cin, cout := C, F
	if transposed {
		cin, cout = F, C
	}
	th, tw := (H+1)/2, (W+1)/2 // tiles per column and row
	per := max(1, min(n, winogradValues/(th*tw*16*max(cin, cout))))
	pw := (2*tw + 2) * cin // a padded row
	rot := 0               // convT's rotated, transposed kernels
	if transposed {
		rot = 16 * C * F
	}
	sizes := [...]int{16 * C * F, (2*th + 2) * pw, per * th * tw * 16 * cin, per * th * tw * 16 * cout, 4 * cout, rot}
	total := 0
	for _, s := range sizes {
		total += s
	}
	bp, ok := winogradScratch.Get().(*[]T)
	if !ok || cap(*bp) < total {
		// One size for every layer (the chunks' values are bounded), so
		// that a buffer from the pool fits the next call.
		buf := make([]T, max(total, 2*winogradValues+1<<17+1<<14))
		bp = &buf
	}
	buf := (*bp)[:total]
	var parts [len(sizes)][]T
	for i, s := range sizes {
		parts[i], buf = buf[:s:s], buf[s:]
	}
	u, pad, v, m, tmp := parts[0], parts[1], parts[2], parts[3], parts[4]
	clear(pad) // the border stays zero; each image overwrites the interior
	winogradKernels(k, C, F, u)
	if transposed {
		// The products take the kernels as cin x cout = F x C matrices:
		// NN products run faster than NT ones (measured).
		ut := parts[5]
		for e := 0; e < 16; e++ {
			src, dst := u[rotated(e)*C*F:][:C*F], ut[e*C*F:][:C*F]
			for c := 0; c < C; c++ {
				for f, v := range src[c*F : (c+1)*F] {
					dst[f*C+c] = v
				}
			}
		}
		u = ut
	}
	for img := 0; img < n; img += per {
		imgs := min(per, n-img)
		tiles := imgs * th * tw
		// v and m hold 16 matrices of tiles x cin and tiles x cout.
		for i := 0; i < imgs; i++ {
			im := x[(img+i)*H*W*cin:][:H*W*cin]
			for y := 0; y < H; y++ {
				copy(pad[(y+1)*pw+cin:], im[y*W*cin:(y+1)*W*cin])
			}
			for ty := 0; ty < th; ty++ {
				for tx := 0; tx < tw; tx++ {
					t := (i*th+ty)*tw + tx
					p := 2*ty*pw + 2*tx*cin
					vec.WinogradIn(v[t*cin:], tiles*cin, pad[p:], pad[p+pw:], pad[p+2*pw:], pad[p+3*pw:], cin)
				}
			}
		}
		for e := 0; e < 16; e++ {
			ve, me := v[e*tiles*cin:], m[e*tiles*cout:]
			gemm(false, false, tiles, cout, cin, ve, u[e*C*F:], 0, me)
		}
		for i := 0; i < imgs; i++ {
			o := out[(img+i)*H*W*cout:][:H*W*cout]
			for ty := 0; ty < th; ty++ {
				for tx := 0; tx < tw; tx++ {
					mt := m[((i*th+ty)*tw+tx)*cout:]
					y, xx := 2*ty, 2*tx
					if y+1 < H && xx+1 < W {
						vec.WinogradOut(o[(y*W+xx)*cout:], o[((y+1)*W+xx)*cout:], mt, tiles*cout, cout)
						continue
					}
					// A tile overhanging the image: keep its pixels inside.
					vec.WinogradOut(tmp, tmp[2*cout:], mt, tiles*cout, cout)
					for dy := 0; dy < 2 && y+dy < H; dy++ {
						for dx := 0; dx < 2 && xx+dx < W; dx++ {
							copy(o[((y+dy)*W+xx+dx)*cout:][:cout], tmp[(2*dy+dx)*cout:])
						}
					}
				}
			}
		}
	}
	winogradScratch.Put(bp)
}

// winogradConv runs winogradTask for every task of a conv (x the images,
// k the kernels) or convT (x the values at every pixel) of geometry g, on
// several goroutines.
func winogradConv[T float](g convGeom, F int, x, k []T, transposed bool, out []T) {
	n := g.pixelsPerTask() / (g.H * g.W)
	cin, cout := g.C, F
	if transposed {
		cin, cout = F, g.C
	}
	parallelTasks(g.x[0], 1<<20, func(t int) {
		winogradTask(g.H, g.W, g.C, F, n, x[t*n*g.H*g.W*cin:], k[t*9*g.C*F:], transposed, out[t*n*g.H*g.W*cout:])
	})
}
