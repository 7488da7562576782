package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/memory"
	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Convolution on task-batched images stored as (T, N*H*W, C)
// (equivalently (T, N, H*W*C): N images of H x W pixels with C channels,
// row-major (h, w, c)). A 3x3 convolution with padding 1 is a product of the
// patch matrix (im2col) with the (9*C, F) kernel matrix; its adjoints use
// col2im, the adjoint of im2col. Max-pooling is in ops_pool.go.

// imageGeom is the size of the images of a task-batched tensor, and the
// engine's choices for the ops on them.
type imageGeom struct {
	H, W, C int
	tune    tuning
}

// images returns the number of images per task in a tensor of shape s whose
// per-task size is a multiple of H*W*C.
func (g imageGeom) images(s tensor.Shape) (int, error) {
	if len(s) != 3 || g.H < 1 || g.W < 1 || g.C < 1 {
		return 0, fmt.Errorf("needs a (T, ., .) input and positive image sizes, got %v for %dx%dx%d images", s, g.H, g.W, g.C)
	}
	per := s[1] * s[2]
	if per%(g.H*g.W*g.C) != 0 {
		return 0, fmt.Errorf("input %v does not hold whole %dx%dx%d images", s, g.H, g.W, g.C)
	}
	return per / (g.H * g.W * g.C), nil
}

// The convolution ops work on whole images and never hold the patch matrix
// of a full batch: each lays out the 3x3 neighbourhoods (zero padded) of a
// chunk of images at a time (im2col, columns in (kh, kw, c) order, the order
// of the rows of the (3, 3, C, F) kernel) in a scratch buffer and multiplies
// it with the registered BLAS. With x the images (T, ., .), K the kernels
// (T, 9*C, F) and G values at every pixel (T, N*H*W, F):
//
//	conv(x, K)  = im2col(x) K            -> (T, N*H*W, F)
//	convT(G, K) = col2im(G Kᵀ)           -> the shape of x
//	convK(x, G) = im2col(x)ᵀ G           -> (T, 9*C, F)
//
// Each is bilinear and the derivatives of each are the other two, so the
// family is closed under differentiation. All three compute their values
// with Winograd's F(2x2, 3x3) or F(4x4, 3x3) instead where it is cheaper
// (winograd.go); their derivatives are the same ops either way.

// convGeom is the image size of a convolution and the shape of its image
// tensor.
type convGeom struct {
	imageGeom
	x tensor.Shape // shape of the image tensor (T, ., .)
}

func (g convGeom) String() string {
	return fmt.Sprintf("%dx%dx%d,%v", g.H, g.W, g.C, g.x)
}

// conv returns the 3x3 convolution (stride 1, zero padding 1) of the images
// x (geometry g) with per-task kernels k (T, 9*C, F).
func conv(x, k *gorgonia.Node, g imageGeom) (*gorgonia.Node, error) {
	return apply(convKernel{convGeom{g, x.Shape().Clone()}}, x, k)
}

// convKernel is conv(x, K).
type convKernel struct{ g convGeom }

func (k convKernel) name() string { return "conv(" + k.g.String() + ")" }

// pixels checks the image tensor shape and returns the pixels per task.
func (g convGeom) pixels(x tensor.Shape) (int, error) {
	n, err := g.images(x)
	if err != nil {
		return 0, err
	}
	if !x.Eq(g.x) {
		return 0, fmt.Errorf("images %v, the op was built for %v", x, g.x)
	}
	return n * g.H * g.W, nil
}

func (k convKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || len(in[1]) != 3 || in[1][0] != k.g.x[0] || in[1][1] != 9*k.g.C {
		return nil, shapeErr(fmt.Sprintf("images %v and kernels (T, %d, F)", k.g.x, 9*k.g.C), in)
	}
	p, err := k.g.pixels(in[0])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{in[1][0], p, in[1][2]}, nil
}

func (k convKernel) forward(a *args) { call(a, k, forwardConv[float64], forwardConv[float32]) }

func forwardConv[T float](k convKernel, out []T, in [][]T, s []tensor.Shape) {
	F := s[1][2]
	if m := k.g.winogradTile(k.g.pixelsPerTask()/(k.g.H*k.g.W), k.g.C, F); m > 0 {
		winogradConv(m, k.g, F, in[0], in[1], false, out)
		return
	}
	eachChunk(k.g, F, true, func(t, img, imgs int, cols, pad []T) {
		x := in[0][t*k.g.perTask():]
		im2colChunk(k.g.imageGeom, x, img, imgs, cols, pad)
		rows := imgs * k.g.H * k.g.W
		o := out[(t*k.g.pixelsPerTask()+img*k.g.H*k.g.W)*F:]
		gemm(false, false, rows, F, 9*k.g.C, cols, in[1][t*9*k.g.C*F:], 0, o)
	})
}

func (k convKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := apply(convTKernel{k.g}, g, in[1])
	if err != nil {
		return nil, err
	}
	dk, err := convKOf(k.g, in[0], g)
	return gorgonia.Nodes{dx, dk}, err
}

// convTKernel is convT(G, K): the adjoint of conv in its images.
type convTKernel struct{ g convGeom }

func (k convTKernel) name() string { return "convT(" + k.g.String() + ")" }

func (k convTKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || len(in[0]) != 3 || len(in[1]) != 3 || in[1][1] != 9*k.g.C || in[0][2] != in[1][2] ||
		in[0][0] != k.g.x[0] || in[1][0] != k.g.x[0] || in[0][1] != k.g.pixelsPerTask() {
		return nil, shapeErr(fmt.Sprintf("values (T, %d, F) and kernels (T, %d, F)", k.g.pixelsPerTask(), 9*k.g.C), in)
	}
	return k.g.x.Clone(), nil
}

func (k convTKernel) forward(a *args) { call(a, k, forwardConvT[float64], forwardConvT[float32]) }

func forwardConvT[T float](k convTKernel, out []T, in [][]T, s []tensor.Shape) {
	F := s[1][2]
	if m := k.g.winogradTile(k.g.pixelsPerTask()/(k.g.H*k.g.W), F, k.g.C); m > 0 {
		winogradConv(m, k.g, F, in[0], in[1], true, out)
		return
	}
	eachChunk(k.g, F, true, func(t, img, imgs int, cols, pad []T) {
		rows := imgs * k.g.H * k.g.W
		g := in[0][(t*k.g.pixelsPerTask()+img*k.g.H*k.g.W)*F:]
		gemm(false, true, rows, 9*k.g.C, F, g, in[1][t*9*k.g.C*F:], 0, cols)
		col2imChunk(k.g.imageGeom, cols, img, imgs, out[t*k.g.perTask():], pad)
	})
}

func (k convTKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dg, err := apply(convKernel{k.g}, g, in[1])
	if err != nil {
		return nil, err
	}
	dk, err := apply(convKKernel{k.g}, g, in[0])
	return gorgonia.Nodes{dg, dk}, err
}

// convKKernel is convK(x, G): the adjoint of conv in its kernels.
type convKKernel struct{ g convGeom }

func (k convKKernel) name() string { return "convK(" + k.g.String() + ")" }

func (k convKKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || len(in[1]) != 3 || in[1][0] != k.g.x[0] || in[1][1] != k.g.pixelsPerTask() {
		return nil, shapeErr(fmt.Sprintf("images %v and values (T, %d, F)", k.g.x, k.g.pixelsPerTask()), in)
	}
	if _, err := k.g.pixels(in[0]); err != nil {
		return nil, err
	}
	return tensor.Shape{k.g.x[0], 9 * k.g.C, in[1][2]}, nil
}

func (k convKKernel) forward(a *args) { call(a, k, forwardConvK[float64], forwardConvK[float32]) }

// forwardConvK accumulates the products of the chunks of one task in order
// (eachChunk runs the chunks of a task on one goroutine, in order).
func forwardConvK[T float](k convKKernel, out []T, in [][]T, s []tensor.Shape) {
	F := s[1][2]
	if m := k.g.winogradTile(k.g.pixelsPerTask()/(k.g.H*k.g.W), k.g.C, F); m > 0 {
		winogradConvK(m, k.g, F, in[0], in[1], out)
		return
	}
	eachChunk(k.g, F, false, func(t, img, imgs int, cols, pad []T) {
		im2colChunk(k.g.imageGeom, in[0][t*k.g.perTask():], img, imgs, cols, pad)
		rows := imgs * k.g.H * k.g.W
		g := in[1][(t*k.g.pixelsPerTask()+img*k.g.H*k.g.W)*F:]
		var beta T
		if img > 0 {
			beta = 1
		}
		gemm(true, false, 9*k.g.C, F, rows, cols, g, beta, out[t*9*k.g.C*F:])
	})
}

func (k convKKernel) grad(in gorgonia.Nodes, _, g *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := apply(convTKernel{k.g}, in[1], g)
	if err != nil {
		return nil, err
	}
	dg, err := apply(convKernel{k.g}, in[0], g)
	return gorgonia.Nodes{dx, dg}, err
}

// perTask is the number of image values of one task.
func (g convGeom) perTask() int { return g.x[1] * g.x[2] }

// pixelsPerTask is the number of pixels of one task.
func (g convGeom) pixelsPerTask() int { return g.perTask() / g.C }

// chunkValues bounds the patch values laid out at once (about 1 MB in
// float32): enough rows for an efficient product, small enough for the
// cache (tuning.chunkValues overrides it).
const chunkValues = 1 << 18

// eachChunk calls f(t, img, imgs, cols, pad) for every task t and every
// chunk of imgs images starting at img, with cols a scratch buffer of
// imgs*H*W*9*C values and pad one of (H+2)*(W+2)*C (a zero-padded image).
// The chunks are bounded by chunkValues in patch values, and for thin
// patches (9*C below 2*F, the first block's one channel) in twice the F
// values per pixel of the product's other side: measured on AMD Zen 4 at
// 28x28 images, C = 1 and F = 64, chunks of 2 images ran the first block's
// conv and convK in 7.5-8 ms for 8 tasks of 50 images, chunks of 3 to 37
// in 10-16 ms. Tasks run on several goroutines; the chunks of one task run
// in order on one goroutine, unless disjoint (each chunk writes its own
// part of the output) and there are fewer tasks than goroutines
// (splitTasks): then the chunks run on several goroutines too. The chunks
// are the same either way, so the values do not depend on the cores.
func eachChunk[T float](g convGeom, F int, disjoint bool, fn func(t, img, imgs int, cols, pad []T)) {
	eachChunkWith(g, F, disjoint, 0, func(t, img, imgs int, cols, pad, _ []T) { fn(t, img, imgs, cols, pad) })
}

// eachChunkWith is eachChunk with a third scratch buffer of extra values
// per chunk, taken with the others (one scratch buffer per goroutine).
func eachChunkWith[T float](g convGeom, F int, disjoint bool, extra int, fn func(t, img, imgs int, cols, pad, more []T)) {
	n, per := g.pixelsPerTask()/(g.H*g.W), g.chunkImages(F)
	size, padSize := per*g.H*g.W*9*g.C, (g.H+2)*(g.W+2)*g.C
	tasks, chunks := g.x[0], 1
	if disjoint && splitTasks(tasks) {
		chunks = (n + per - 1) / per
	}
	parallelTasks(tasks*chunks, 1<<20, func(i int) {
		t, first := i/chunks, i%chunks*per
		last := n
		if chunks > 1 {
			last = min(n, first+per)
		}
		bp, buf := memory.Take[T](&scratch, size+padSize+extra)
		cols, pad, more := buf[:size], buf[size:size+padSize], buf[size+padSize:]
		// im2col writes only pad's interior and relies on a zero border;
		// col2im writes the border too and clears pad itself per image. An
		// op uses one of the two, so clearing once per call suffices.
		clear(pad)
		for img := first; img < last; img += per {
			imgs := min(per, last-img)
			fn(t, img, imgs, cols[:imgs*g.H*g.W*9*g.C], pad, more)
		}
		scratch.Put(bp)
	})
}

// chunkImages is the number of images of eachChunk's chunks of a
// convolution to F channels.
func (g convGeom) chunkImages(F int) int {
	n := g.pixelsPerTask() / (g.H * g.W)
	return max(1, min(n, or(g.tune.chunkValues, chunkValues)/(g.H*g.W*max(9*g.C, 2*F))))
}

// scratch holds the patch buffers of the convolutions for reuse across
// calls.
var scratch memory.Scratch

// im2colChunk writes the patches of images img..img+imgs-1 of x (one task)
// into cols, one row of 9*C values per pixel. Each image is first copied
// into the interior of pad, the image with a border of zeros, so that the
// patch of pixel (y, x) is three contiguous runs of 3*C values, rows
// y..y+2 and columns x..x+2 of pad, copied without bounds tests (ten times
// faster than per-tap copies at C = 1: 0.08 against 0.77 ms for 37 28x28
// images, measured); at C = 1 and C = 3 (colour) as single assignments,
// without a call to copy per run.
func im2colChunk[T float](g imageGeom, x []T, img, imgs int, cols, pad []T) {
	H, W, C := g.H, g.W, g.C
	pw := (W + 2) * C // a padded row
	for i := 0; i < imgs; i++ {
		im := x[(img+i)*H*W*C : (img+i+1)*H*W*C]
		for y := 0; y < H; y++ {
			copy(pad[(y+1)*pw+C:(y+2)*pw-C], im[y*W*C:(y+1)*W*C])
		}
		for y := 0; y < H; y++ {
			if C == 1 { // the first block: nine single values per pixel
				r0, r1, r2 := pad[y*pw:(y+1)*pw], pad[(y+1)*pw:(y+2)*pw], pad[(y+2)*pw:(y+3)*pw]
				for xx := 0; xx < W; xx++ {
					row := cols[((i*H+y)*W+xx)*9:][:9]
					a, b, c := r0[xx:xx+3], r1[xx:xx+3], r2[xx:xx+3]
					row[0], row[1], row[2] = a[0], a[1], a[2]
					row[3], row[4], row[5] = b[0], b[1], b[2]
					row[6], row[7], row[8] = c[0], c[1], c[2]
				}
				continue
			}
			if C == 3 { // colour images: three runs of nine values
				r0, r1, r2 := pad[y*pw:(y+1)*pw], pad[(y+1)*pw:(y+2)*pw], pad[(y+2)*pw:(y+3)*pw]
				im2colRow3(cols[(i*H+y)*W*27:(i*H+y+1)*W*27], r0, r1, r2)
				continue
			}
			for xx := 0; xx < W; xx++ {
				row := cols[((i*H+y)*W+xx)*9*C:][:9*C]
				for kh := 0; kh < 3; kh++ {
					copy(row[kh*3*C:(kh+1)*3*C], pad[(y+kh)*pw+xx*C:])
				}
			}
		}
	}
}

// im2colRow3 writes the 27 patch values of each pixel of one row of a
// 3-channel image, from the three padded rows r0, r1, r2 around it, as
// single assignments: the compiler turns a copy of nine values (an array
// assignment or copy) into a call to memmove, which took twice as long (one
// core, CPU time: 0.075-0.085 against 0.038-0.045 ms per 84x84 image,
// BenchmarkIm2colColour).
func im2colRow3[T float](cols, r0, r1, r2 []T) {
	for xx := 0; xx < len(cols)/27; xx++ {
		row := cols[27*xx : 27*xx+27 : 27*xx+27]
		a, b, c := r0[3*xx:3*xx+9:3*xx+9], r1[3*xx:3*xx+9:3*xx+9], r2[3*xx:3*xx+9:3*xx+9]
		row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8] = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]
		row[9], row[10], row[11], row[12], row[13], row[14], row[15], row[16], row[17] = b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]
		row[18], row[19], row[20], row[21], row[22], row[23], row[24], row[25], row[26] = c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
	}
}

// col2imChunk sets images img..img+imgs-1 of out (one task) to the sum of
// the patch entries of cols that came from each pixel: the adjoint of
// im2colChunk, accumulated in pad (border included, then dropped) with
// three contiguous runs per pixel.
func col2imChunk[T float](g imageGeom, cols []T, img, imgs int, out, pad []T) {
	H, W, C := g.H, g.W, g.C
	pw := (W + 2) * C
	for i := 0; i < imgs; i++ {
		clear(pad)
		for y := 0; y < H; y++ {
			for xx := 0; xx < W; xx++ {
				row := cols[((i*H+y)*W+xx)*9*C:][:9*C]
				for kh := 0; kh < 3; kh++ {
					vec.AddTo(pad[(y+kh)*pw+xx*C:(y+kh)*pw+(xx+3)*C], row[kh*3*C:])
				}
			}
		}
		im := out[(img+i)*H*W*C : (img+i+1)*H*W*C]
		for y := 0; y < H; y++ {
			copy(im[y*W*C:(y+1)*W*C], pad[(y+1)*pw+C:])
		}
	}
}
