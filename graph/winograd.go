package graph

import (
	"bytes"
	"unsafe"

	"github.com/trmaml/trmaml/graph/internal/memory"
	"github.com/trmaml/trmaml/graph/internal/vec"
	"github.com/trmaml/trmaml/graph/internal/wincost"
)

// Winograd's F(2x2, 3x3) convolution (Lavin and Gray, 2016) computes the
// values of conv and convT with 16 products of (tiles x Cin) by (Cin x
// Cout) per 2x2 output tile instead of im2col's 36 multiplications per tile
// and channel pair: 2.25 times fewer FLOPs on even image sizes (1.7 times
// at 7x7, 1.3 at 3x3, where tiles overhang the image). convK, conv's
// adjoint in its kernels, runs the same transforms' adjoints with 16
// products of (Cin x tiles) by (tiles x Cout) (winograd_convk.go). Only
// the values change: the derivatives of the three ops are the same ops as
// before, so the nested finite-difference harness checks each op's values
// against its derivatives, and conv's also against a plain loop.
//
// convT(G, K) is itself a 3x3 convolution of G (F channels) with padding
// 1, by the kernel rotated by 180 degrees with its channel axes swapped
// (rotateKernels), so both ops share one convolution.

// Winograd's F(4x4, 3x3) (same paper) does the same with 6x6 input
// tiles: 36 products per 4x4 output tile, 4 times fewer than im2col on
// image sizes that are multiples of 4 (3.1 times at 14x14 and 7x7,
// 2.25 at 3x3), at the cost of heavier transforms and of rounding: its
// transforms' entries reach 8 (Aᵀ) and 5 (Bᵀ), and its float32 values
// are 10 to 20 times less accurate than F(2x2)'s, at most about 6e-6 of
// the largest output at 64 channels with the SIMD transforms and 7.3e-6
// with the plain loops (TestWinogradRounding). The three ops
// take it where its estimated cost is lowest (winogradTile).

// winogradValues bounds the transformed values of a chunk of images (256 KB
// in float32, in and out, so that they stay in the cache between the
// transforms and the products: one 14x14 image at 64 channels; measured on
// AMD Zen 4, the second block's forward for 8 tasks of 50 images took 38 ms
// on one core with this bound and 45-55 ms with 4 to 16 times more).
const winogradValues = 1 << 16

// winogradScratch holds the buffers of a task's Winograd convolution.
var winogradScratch memory.Scratch

// winogradTile returns the output tile size of the Winograd path that a
// convolution of n images of g from cin to cout channels (per task) takes,
// 2 or 4, or 0 for im2col: the cost model's choice (graph/internal/wincost),
// or tuning.winograd's.
func (g imageGeom) winogradTile(n, cin, cout int) int {
	if g.tune.winograd != 0 {
		return max(0, g.tune.winograd)
	}
	return wincost.Tile(g.H, g.W, n, cin, cout)
}

// winogradKernels sets u (16 or 36 matrices of C x F for tiles of m = 2
// or 4, e = (m+2)a+b, matrix e from u[e*us]) to G k Gᵀ of the 3x3 kernel
// of every channel pair of k (9*C x F, rows in (kh, kw, c) order), a row
// of F filters at a time. The nine rows of a channel are first copied next
// to each other into row (9*F values): read in place, they lie C*F values
// apart, a multiple of 4 KB at 64 channels, and with the 16 or 36 rows
// written (us should not be such a multiple either) they overflow the ways
// of the L1 cache that their addresses map to.
func winogradKernels[T float](m int, k []T, C, F int, u []T, us int, row []T) {
	k, row = k[:9*C*F], row[:9*F]
	var src [9][]T
	var dst [36][]T
	for i := range src {
		src[i] = row[i*F : (i+1)*F]
	}
	for c := 0; c < C; c++ {
		for i := range src {
			copy(src[i], k[(i*C+c)*F:][:F])
		}
		for e := 0; e < (m+2)*(m+2); e++ {
			dst[e] = u[e*us+c*F:][:F]
		}
		if m == 2 {
			vec.WinogradKernel((*[16][]T)(dst[:16]), &src)
		} else {
			vec.Winograd4Kernel(&dst, &src)
		}
	}
}

// winogradStride is the distance between the transformed matrices (of the
// kernels, the input tiles or the products) of n values each: n and 16
// more, so that their rows do not lie a multiple of 4 KB apart at 64
// channels (see winogradKernels; the transforms read or write a row of
// every matrix per tile: at 14x14, F(4x4) on matrices 4 KB apart ran its
// transforms 2.5 times slower, measured on AMD Zen 4).
func winogradStride(n int) int { return n + 16 }

// rotateKernels sets kr (9*F x C) to the kernel matrix of convT as a
// convolution: k (9*C x F) rotated by 180 degrees with its channel axes
// swapped, kr[(8-i)*F+f][c] = k[i*C+c][f].
func rotateKernels[T float](k []T, C, F int, kr []T) {
	k, kr = k[:9*C*F], kr[:9*C*F]
	for i := 0; i < 9; i++ {
		for c := 0; c < C; c++ {
			for f, v := range k[(i*C+c)*F:][:F] {
				kr[((8-i)*F+f)*C+c] = v
			}
		}
	}
}

// winogradTask sets out (n images of H x W x cout, one task) to the 3x3
// convolution with zero padding 1 of x (n images of H x W x cin) by the
// kernel matrix k (9*C x F, one task), with output tiles of m = 2 or 4
// (F(m x m, 3x3)): conv with cin = C and cout = F, or, if transposed, convT
// with cin = F and cout = C, a convolution by rotateKernels of k. If u is
// not nil it holds k's transformed kernels already (winogradTransform), and
// k is not read.
func winogradTask[T float](m, H, W, C, F, n int, x, k []T, transposed bool, u []T, out []T) {
	cout := F
	if transposed {
		cout = C
	}
	winogradProducts(m, H, W, C, F, n, x, k, transposed, u, m*m*cout, func(img int, mm []T, ms int, tmp []T) {
		winogradImage(m, H, W, cout, out[img*H*W*cout:][:H*W*cout], mm, ms, tmp)
	})
}

// winogradImage writes an image's output tiles (their products mm, ms
// apart, as winogradProducts gives them) into o, H x W x cout, a tile that
// overhangs the image through tmp (m*m*cout values).
func winogradImage[T float](m, H, W, cout int, o []T, mm []T, ms int, tmp []T) {
	tw := (W + m - 1) / m
	for ty := 0; ty < (H+m-1)/m; ty++ {
		for tx := 0; tx < tw; tx++ {
			mt := mm[(ty*tw+tx)*cout:]
			y, xx := m*ty, m*tx
			if y+m <= H && xx+m <= W {
				winogradOut(m, o[(y*W+xx)*cout:], W*cout, mt, ms, cout)
				continue
			}
			// A tile overhanging the image: keep its pixels inside.
			winogradOut(m, tmp, m*cout, mt, ms, cout)
			for dy := 0; dy < m && y+dy < H; dy++ {
				w := min(m, W-xx)
				copy(o[((y+dy)*W+xx)*cout:][:w*cout], tmp[dy*m*cout:])
			}
		}
	}
}

// winogradProducts computes winogradTask's products a chunk of images at a
// time and calls image(img, mm, ms, tmp) for every image img, in order,
// for winogradOut: mm holds the image's tiles' (m+2)^2 transformed
// products, ms apart, tile (ty, tx)'s cout values from
// mm[(ty*tw+tx)*cout]; tmp is scratch of the given length.
func winogradProducts[T float](m, H, W, C, F, n int, x, k []T, transposed bool, u []T, tmpLen int, image func(img int, mm []T, ms int, tmp []T)) {
	cin, cout := C, F
	if transposed {
		cin, cout = F, C
	}
	th, tw := (H+m-1)/m, (W+m-1)/m // tiles per column and row
	nn := (m + 2) * (m + 2)        // transformed values per tile and channel
	per := winogradChunk(m, H, W, cin, cout, n)
	pw := (m*tw + 2) * cin // a padded row
	us, vs, ms := winogradStride(cin*cout), winogradStride(per*th*tw*cin), winogradStride(per*th*tw*cout)
	own := 0 // the buffers of winogradTransform, if this task transforms k
	if u == nil {
		own = winogradTransformSize(m, C, F, transposed)
	}
	sizes := []int{own, (m*th + 2) * pw, nn * vs, nn * ms, tmpLen}
	var parts [5][]T
	bp := winogradBuffers(sizes, parts[:])
	pad, v, mm, tmp := parts[1], parts[2], parts[3], parts[4]
	clear(pad) // the border stays zero; each image overwrites the interior
	if u == nil {
		u = winogradTransform(m, k, C, F, transposed, parts[0])
	}
	for img := 0; img < n; img += per {
		imgs := min(per, n-img)
		rows := imgs * th * tw
		// v and mm hold nn matrices of rows x cin and rows x cout.
		winogradInputs(m, H, W, cin, x[img*H*W*cin:], imgs, pad, v, vs)
		for e := 0; e < nn; e++ {
			gemm(false, false, rows, cout, cin, v[e*vs:], u[e*us:], 0, mm[e*ms:])
		}
		for i := 0; i < imgs; i++ {
			image(img+i, mm[i*th*tw*cout:], ms, tmp)
		}
	}
	winogradScratch.Put(bp)
}

// winogradChunk is the number of images of n that winogradProducts
// transforms and multiplies at once.
func winogradChunk(m, H, W, cin, cout, n int) int {
	th, tw := (H+m-1)/m, (W+m-1)/m
	return max(1, min(n, winogradValues/(th*tw*(m+2)*(m+2)*max(cin, cout))))
}

// winogradTransformSize is the length of the buffer that winogradTransform
// needs.
func winogradTransformSize(m, C, F int, transposed bool) int {
	n := (m+2)*(m+2)*winogradStride(C*F) + 9*max(C, F)
	if transposed {
		n += 9 * C * F
	}
	return n
}

// winogradTransform returns the transformed kernels (winogradKernels, us =
// winogradStride(C*F) apart) of the kernel matrix k (9*C x F) for conv or,
// if transposed, of rotateKernels of k for convT, in buf
// (winogradTransformSize values).
func winogradTransform[T float](m int, k []T, C, F int, transposed bool, buf []T) []T {
	nn, us := (m+2)*(m+2), winogradStride(C*F)
	u, buf := buf[:nn*us], buf[nn*us:]
	cin, cout := C, F
	if transposed {
		cin, cout = F, C
		rotateKernels(k, C, F, buf[:9*C*F])
		k, buf = buf[:9*C*F], buf[9*C*F:]
	}
	winogradKernels(m, k, cin, cout, u, us, buf[:9*cout])
	return u
}

// winogradOut sets the m x m output tile whose row r holds m pixels of c
// channels from y[r*yw] to Aᵀ mt A, mt being (m+2)^2 rows of c values,
// stride apart.
func winogradOut[T float](m int, y []T, yw int, mt []T, stride, c int) {
	if m == 2 {
		vec.WinogradOut(y, y[yw:], mt, stride, c)
	} else {
		vec.Winograd4Out(y, yw, mt, stride, c)
	}
}

// winogradInputs sets v ((m+2)^2 matrices of tiles x c, vs apart, tiles =
// imgs * the tiles of an image) to the transformed input tiles of imgs
// images of H x W x c in x, through pad, a zero-bordered image of (m*th+2)
// rows of (m*tw+2)*c values whose border is zero.
func winogradInputs[T float](m, H, W, c int, x []T, imgs int, pad, v []T, vs int) {
	th, tw := (H+m-1)/m, (W+m-1)/m
	pw := (m*tw + 2) * c
	for i := 0; i < imgs; i++ {
		im := x[i*H*W*c:][:H*W*c]
		for y := 0; y < H; y++ {
			copy(pad[(y+1)*pw+c:], im[y*W*c:(y+1)*W*c])
		}
		for ty := 0; ty < th; ty++ {
			for tx := 0; tx < tw; tx++ {
				t := (i*th+ty)*tw + tx
				p := m*ty*pw + m*tx*c
				if m == 2 {
					vec.WinogradIn(v[t*c:], vs, pad[p:], pad[p+pw:], pad[p+2*pw:], pad[p+3*pw:], c)
				} else {
					vec.Winograd4In(v[t*c:], vs, pad[p:], pw, c)
				}
			}
		}
	}
}

// winogradBuffers returns scratch slices of the given sizes from
// winogradScratch and the buffer to put back.
func winogradBuffers[T float](sizes []int, parts [][]T) *memory.Buf[T] {
	total := 0
	for _, s := range sizes {
		total += s
	}
	bp, buf := memory.Take[T](&winogradScratch, total)
	for i, s := range sizes {
		parts[i], buf = buf[:s:s], buf[s:]
	}
	return bp
}

// winogradConv runs winogradTask with output tiles of m for every task of
// a conv (x the images, k the kernels) or convT (x the values at every
// pixel) of geometry g, on several goroutines: a task each, or with fewer
// tasks than goroutines (splitTasks) a chunk of winogradProducts' images
// each, the same chunks it multiplies in turn on one goroutine, so that
// the values do not depend on the cores. When every task has the same
// kernels (the tiled meta-parameters of the passes at the meta-weights: the
// support pass and its derivatives), they are transformed once for all.
func winogradConv[T float](m int, g convGeom, F int, x, k []T, transposed bool, out []T) {
	n := g.pixelsPerTask() / (g.H * g.W)
	cin, cout := g.C, F
	if transposed {
		cin, cout = F, g.C
	}
	u, done := sharedKernels(m, g, F, k, transposed)
	defer done()
	per := n
	if splitTasks(g.x[0]) {
		per = winogradChunk(m, g.H, g.W, cin, cout, n)
	}
	chunks := (n + per - 1) / per
	parallelTasks(g.x[0]*chunks, 1<<20, func(i int) {
		t, img := i/chunks, i%chunks*per
		imgs := min(per, n-img)
		o := (t*n + img) * g.H * g.W
		winogradTask(m, g.H, g.W, g.C, F, imgs, x[o*cin:], k[t*9*g.C*F:], transposed, u, out[o*cout:])
	})
}

// sharedKernels returns the transformed kernels (winogradTransform) of
// the kernel matrices k of geometry g's tasks when every task has the
// same ones, in a buffer that done gives back; otherwise nil, and every
// task transforms its own.
func sharedKernels[T float](m int, g convGeom, F int, k []T, transposed bool) (u []T, done func()) {
	if !sameTasks(k, g.x[0], 9*g.C*F) {
		return nil, func() {}
	}
	bp, buf := memory.Take[T](&winogradShared, winogradTransformSize(m, g.C, F, transposed))
	return winogradTransform(m, k, g.C, F, transposed, buf), func() { winogradShared.Put(bp) }
}

// winogradShared holds the kernels that winogradConv transforms once for
// all tasks.
var winogradShared memory.Scratch

// sameTasks reports whether the n blocks of size values at the start of v
// (one per task) are the same bit for bit. It stops at the first byte that
// differs, so tasks with their own values cost next to nothing.
func sameTasks[T float](v []T, n, size int) bool {
	if n < 2 {
		return false
	}
	v = v[:n*size] // bounds-checked before the bytes are read unchecked
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), n*size*int(unsafe.Sizeof(v[0])))
	per := len(b) / n
	for t := 1; t < n; t++ {
		if !bytes.Equal(b[:per], b[t*per:(t+1)*per]) {
			return false
		}
	}
	return true
}
