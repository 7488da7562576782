package graph

import (
	"sync"

	"github.com/trmaml/trmaml/graph/internal/vec"
)

// Winograd's F(2x2, 3x3) convolution (Lavin and Gray, 2016) computes the
// values of conv and convT with 16 products of (tiles x Cin) by (Cin x
// Cout) per 2x2 output tile instead of im2col's 36 multiplications per tile
// and channel pair: 2.25 times fewer FLOPs on even image sizes (1.7 times
// at 7x7, 1.3 at 3x3, where tiles overhang the image). convK, conv's
// adjoint in its kernels, runs the same transforms' adjoints with 16
// products of (Cin x tiles) by (tiles x Cout). Only the values change: the
// derivatives of the three ops are the same ops as before, so the nested
// finite-difference harness checks each op's values against its
// derivatives, and conv's also against a plain loop.
//
// convT(G, K) is itself a 3x3 convolution of G (F channels) with padding
// 1, by the kernel rotated by 180 degrees with its channel axes swapped;
// rotating k turns G k Gᵀ into the same matrix with rows and columns 0 and 3
// swapped, so both ops share one kernel transform.

// winogradMin is the fewest input and output channels for which conv,
// convT and convK take the Winograd path: with fewer (the first block's one channel)
// the products are too thin.
const winogradMin = 16

// winogradAlways makes every conv, convT and convK take the Winograd path, for
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

// winogradKernels sets u (16 matrices of C x F, e = 4a+b, matrix e from
// u[e*us]) to G k Gᵀ of the 3x3 kernel of every channel pair of k (9*C x F,
// rows in (kh, kw, c) order), with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2;
// 0 0 1], a row of F filters at a time. The nine rows of a channel are
// first copied next to each other into row (9*F values): read in place,
// they lie C*F values apart, a multiple of 4 KB at 64 channels, and with
// the sixteen rows written (us should not be such a multiple either) they
// overflow the ways of the L1 cache that their addresses map to.
func winogradKernels[T float](k []T, C, F int, u []T, us int, row []T) {
	k, row = k[:9*C*F], row[:9*F]
	var src [9][]T
	var dst [16][]T
	for i := range src {
		src[i] = row[i*F : (i+1)*F]
	}
	for c := 0; c < C; c++ {
		for i := range src {
			copy(src[i], k[(i*C+c)*F:][:F])
		}
		for e := range dst {
			dst[e] = u[e*us+c*F:][:F]
		}
		vec.WinogradKernel(&dst, &src)
	}
}

// winogradStride is the distance between the 16 transformed kernel
// matrices of C x F values: C*F and 16 more, so that at 64 channels
// their rows do not lie a multiple of 4 KB apart (see winogradKernels).
func winogradStride(C, F int) int { return C*F + 16 }

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
		rot = 16 * winogradStride(C, F)
	}
	us := winogradStride(C, F)
	sizes := []int{16 * us, (2*th + 2) * pw, per * th * tw * 16 * cin, per * th * tw * 16 * cout, max(4*cout, 9*F), rot}
	var parts [6][]T
	bp := winogradBuffers(sizes, parts[:])
	u, pad, v, m, tmp := parts[0], parts[1], parts[2], parts[3], parts[4]
	clear(pad) // the border stays zero; each image overwrites the interior
	winogradKernels(k, C, F, u, us, tmp)
	if transposed {
		// The products take the kernels as cin x cout = F x C matrices:
		// NN products run faster than NT ones (measured).
		ut := parts[5]
		for e := 0; e < 16; e++ {
			src, dst := u[rotated(e)*us:][:C*F], ut[e*us:][:C*F]
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
		winogradInputs(H, W, cin, x[img*H*W*cin:], imgs, pad, v)
		for e := 0; e < 16; e++ {
			ve, me := v[e*tiles*cin:], m[e*tiles*cout:]
			gemm(false, false, tiles, cout, cin, ve, u[e*us:], 0, me)
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

// winogradInputs sets v (16 matrices of tiles x c, tiles = imgs * the
// tiles of an image) to the transformed input tiles of imgs images of H x W
// x c in x, through pad, a zero-bordered image of (2*th+2) rows of
// (2*tw+2)*c values whose border is zero.
func winogradInputs[T float](H, W, c int, x []T, imgs int, pad, v []T) {
	th, tw := (H+1)/2, (W+1)/2
	pw := (2*tw + 2) * c
	tiles := imgs * th * tw
	for i := 0; i < imgs; i++ {
		im := x[i*H*W*c:][:H*W*c]
		for y := 0; y < H; y++ {
			copy(pad[(y+1)*pw+c:], im[y*W*c:(y+1)*W*c])
		}
		for ty := 0; ty < th; ty++ {
			for tx := 0; tx < tw; tx++ {
				t := (i*th+ty)*tw + tx
				p := 2*ty*pw + 2*tx*c
				vec.WinogradIn(v[t*c:], tiles*c, pad[p:], pad[p+pw:], pad[p+2*pw:], pad[p+3*pw:], c)
			}
		}
	}
}

// winogradBuffers returns scratch slices of the given sizes from
// winogradScratch and the pointer to put back.
func winogradBuffers[T float](sizes []int, parts [][]T) *[]T {
	total := 0
	for _, s := range sizes {
		total += s
	}
	// One size for every layer (the chunks' values are bounded), so that a
	// buffer from the pool fits the next call.
	bp, buf := pooledSlice[T](&winogradScratch, total, 2*winogradValues+1<<17+1<<14)
	for i, s := range sizes {
		parts[i], buf = buf[:s:s], buf[s:]
	}
	return bp
}

// winogradKTask sets out (9*C x F, one task) to convK(x, g): the sum over
// the pixels of n images of H x W of the 3x3 patches of x (C channels, zero
// padding 1) times g (F channels), as the adjoint of the Winograd forward:
// with V the transformed input tiles and A g Aᵀ the 4x4 transforms of the
// 2x2 tiles of g, the 16 sums S = sum over tiles of Vᵀ (A g Aᵀ) are 16
// products of (C x tiles) by (tiles x F), and out = Gᵀ S G per channel
// pair.
func winogradKTask[T float](H, W, C, F, n int, x, g []T, out []T) {
	th, tw := (H+1)/2, (W+1)/2
	per := max(1, min(n, winogradValues/(th*tw*16*max(C, F))))
	us := winogradStride(C, F)
	sizes := []int{16 * us, (2*th + 2) * (2*tw + 2) * C, per * th * tw * 16 * C, per * th * tw * 16 * F, 9 * F}
	var parts [5][]T
	bp := winogradBuffers(sizes, parts[:])
	s, pad, v, gt, tmp := parts[0], parts[1], parts[2], parts[3], parts[4]
	clear(pad)
	for img := 0; img < n; img += per {
		imgs := min(per, n-img)
		tiles := imgs * th * tw
		winogradInputs(H, W, C, x[img*H*W*C:], imgs, pad, v)
		for i := 0; i < imgs; i++ {
			gi := g[(img+i)*H*W*F:][:H*W*F]
			for ty := 0; ty < th; ty++ {
				for tx := 0; tx < tw; tx++ {
					t := (i*th+ty)*tw + tx
					y, xx := 2*ty, 2*tx
					if y+1 < H && xx+1 < W {
						vec.WinogradGrad(gt[t*F:], tiles*F, gi[(y*W+xx)*F:], gi[((y+1)*W+xx)*F:], F)
						continue
					}
					// A tile overhanging the image: zeros outside.
					clear(tmp[:4*F])
					for dy := 0; dy < 2 && y+dy < H; dy++ {
						for dx := 0; dx < 2 && xx+dx < W; dx++ {
							copy(tmp[(2*dy+dx)*F:][:F], gi[((y+dy)*W+xx+dx)*F:])
						}
					}
					vec.WinogradGrad(gt[t*F:], tiles*F, tmp, tmp[2*F:], F)
				}
			}
		}
		var beta T
		if img > 0 {
			beta = 1
		}
		for e := 0; e < 16; e++ {
			gemm(true, false, C, F, tiles, v[e*tiles*C:], gt[e*tiles*F:], beta, s[e*us:])
		}
	}
	// Gᵀ S G per channel into tmp, then to out's rows (as in
	// winogradKernels, for the cache).
	out = out[:9*C*F]
	var src [16][]T
	var dst [9][]T
	for i := range dst {
		dst[i] = tmp[i*F : (i+1)*F]
	}
	for c := 0; c < C; c++ {
		for e := range src {
			src[e] = s[e*us+c*F:][:F]
		}
		vec.WinogradKernelT(&dst, &src)
		for i := range dst {
			copy(out[(i*C+c)*F:][:F], dst[i])
		}
	}
	winogradScratch.Put(bp)
}

// winogradConvK runs winogradKTask for every task of a convK of geometry g
// (x the images, gr the values at every pixel, F channels), on several
// goroutines.
func winogradConvK[T float](g convGeom, F int, x, gr []T, out []T) {
	n := g.pixelsPerTask() / (g.H * g.W)
	parallelTasks(g.x[0], 1<<20, func(t int) {
		winogradKTask(g.H, g.W, g.C, F, n, x[t*n*g.H*g.W*g.C:], gr[t*n*g.H*g.W*F:], out[t*9*g.C*F:])
	})
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
