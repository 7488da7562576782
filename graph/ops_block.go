package graph

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/graph/internal/memory"
	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convBlockKernel is a whole CNN block in one op, for the graphs that only
// need its values (an evaluation's query images) or its first derivative
// (a meta-gradient's query images): relu of maxPoolBN(z,
// bnStats(z), b, gamma, beta) with z = conv(x, K), the composition
// CNN.block builds from four ops. Those write the first block's z (28x28
// pixels at F channels, 10 MB per task of 50 images at F = 64) to memory
// and read it back twice; this op computes z a few rows at a time into a
// buffer that stays in the cache (blockRows), for the pool, and the
// statistics before that: for images of one channel (the CNN's first
// block) from the moments of their 3x3 patches (patchStats), otherwise
// from z computed an extra time. Recomputing is cheap only for thin
// patches (9 products per value at one channel); where conv takes the
// Winograd path (blocks of many channels) the op computes z once and
// keeps only its moments and pooled extremes (winogradBlock). The CNN uses
// the op in those two cases (CNN.fusesValues). Its values are those of the four
// ops up to rounding: the same nine products per value of one channel
// added in the BLAS's order (vec.Conv1; with more channels, or without the
// SIMD kernels, the same im2col product on the same chunks, or the same
// Winograd products and transforms), the affine map and ReLU; the
// statistics of one channel are z's exact moments, not those of the
// rounded z, and on the Winograd path z's moments summed in another order.
// Its derivative with respect to the kernels, scale and shift is, for
// images of one channel, convBlockBack: one more pass that computes z
// again, so that a graph that differentiates the block once (the query
// pass of a meta-gradient, CNN.forwardOnce) never stores z or its
// gradient either. Otherwise, and with respect to the images, it is the
// four ops' derivatives (built with z and the statistics again): exact,
// but no cheaper than the four ops.
type convBlockKernel struct {
	g   convGeom
	eps float64
}

// convBlock returns relu(maxPoolBN(z, bnStats(z, eps), b, gamma, beta))
// with z = conv(x, k): the value of CNN.block in one op.
func convBlock(x, k, b, gamma, beta *gorgonia.Node, g imageGeom, eps float64) (*gorgonia.Node, error) {
	return apply(convBlockKernel{convGeom{g, x.Shape().Clone()}, eps}, x, k, b, gamma, beta)
}

func (k convBlockKernel) name() string { return fmt.Sprintf("convBlock(%s,%v)", k.g, k.eps) }

func (k convBlockKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	want := fmt.Sprintf("images %v, kernels (T, %d, F), and bias, scale and shift (T, F)", k.g.x, 9*k.g.C)
	if len(in) != 5 {
		return nil, shapeErr(want, in)
	}
	z, err := convKernel{k.g}.shape(in[:2])
	if err != nil {
		return nil, err
	}
	for _, s := range in[2:] {
		if !s.Eq(tensor.Shape{z[0], z[2]}) {
			return nil, shapeErr(want, in)
		}
	}
	return poolGeom{k.g.H, k.g.W}.outShape(z)
}

func (k convBlockKernel) forward(a *args) {
	call(a, k, forwardConvBlock[float64], forwardConvBlock[float32])
}

// forwardConvBlock computes, per task, the statistics of z, then z a row
// of windows at a time (blockRows), with the statistics, into maxPoolBN's
// row kernel and ReLU. Images of one channel (the CNN's first block) give
// the statistics from their patches' moments (patchStats), and with the
// SIMD kernels the rest in one (vec.ConvPool1, z never leaving the
// registers). Where conv takes the Winograd path (many channels),
// winogradBlock computes z once and keeps only its moments and pooled
// extremes; otherwise z is computed twice, first into the channel sums of
// bnStats (z minus the task's first row, accumulated chunk after chunk).
func forwardConvBlock[T float](k convBlockKernel, out []T, in [][]T, s []tensor.Shape) {
	x, kern, gamma, beta := in[0], in[1], in[3], in[4]
	g, F := k.g, s[1][2]
	H, W, C := g.H, g.W, g.C
	n := g.pixelsPerTask() / (H * W)
	st := make([]T, 2*g.x[0]*F)
	if m := g.winogradBlockTile(n, F); m > 0 {
		winogradBlock(m, g, F, x, kern, gamma, beta, st, out, k.eps)
		return
	}
	per, Ho, Wo := g.chunkImages(F), H/2, W/2
	parallelTasks(g.x[0], n*H*W*F, func(t int) {
		bp, buf := memory.Take[T](&scratch, g.blockScratch(F))
		xt, kt := x[t*g.perTask():], kern[t*9*C*F:][:9*C*F]
		if C == 1 {
			// One channel: the statistics from the moments of the images'
			// patches, without computing z.
			sums, prods := taskPatchMoments(xt, n, H, W)
			patchStats(st, t, &sums, &prods, kt, n*H*W, k.eps)
		} else {
			cs, ps := per*H*W*9*C, (H+2)*(W+2)*C
			cols, pad, z := buf[:cs], buf[cs:cs+ps], buf[cs+ps:]
			clear(pad) // im2col writes only the interior
			shift, sum, sq := make([]T, F), make([]float64, F), make([]float64, F)
			for img := 0; img < n; img += per {
				zc := blockProduct(g, F, xt, kt, img, min(per, n-img), cols, pad, z)
				if img == 0 {
					copy(shift, zc)
				}
				vec.Moments(sum, sq, zc, shift)
			}
			setStats(st, t, sum, sq, shift, n*H*W, k.eps)
		}
		sc, off := bnAffine(st, gamma, beta, t, F)
		if C == 1 && vec.SIMD() {
			// The same values as blockRows' Conv1, MaxAffineRow and ReLU,
			// with z kept in registers.
			paddedRows(g, F, xt, buf, func(i, r int, rows, z []T) {
				vec.ConvPool1(out[((t*n+i)*Ho+r)*Wo*F:][:Wo*F], z, rows, W, kt, sc, off)
			})
		} else {
			blockRows(g, F, xt, kt, buf, func(i, r int, z0, z1, _ []T) {
				o := out[((t*n+i)*Ho+r)*Wo*F:][:Wo*F]
				vec.MaxAffineRow(o, z0, z1, sc, off)
				vec.Relu(o, o)
			})
		}
		scratch.Put(bp)
	})
}

// paddedRows calls fn(i, r, rows, z) for every row r of pooling windows
// of every image i, in order, of one task (images xt of one channel), with
// rows the image with a border of zeros from the windows' first padded row
// on and z scratch of 2*W*F values, from buf (g.blockScratch(F) values):
// what vec.ConvPool1 and vec.ConvBack1 take.
func paddedRows[T float](g convGeom, F int, xt, buf []T, fn func(i, r int, rows, z []T)) {
	H, W := g.H, g.W
	pad, z := buf[:(H+2)*(W+2)], buf[(H+2)*(W+2):][:2*W*F]
	clear(pad) // padImage writes only the interior
	for i := 0; i < g.pixelsPerTask()/(H*W); i++ {
		padImage(pad, xt[i*H*W:][:H*W], H, W)
		for r := 0; r < H/2; r++ {
			fn(i, r, pad[2*r*(W+2):], z)
		}
	}
}

// blockRows calls fn(i, r, z0, z1, im) for every row r of pooling windows
// of every image i, in order, of one task (images xt, kernels kt), with
// z0 and z1 the windows' top and bottom rows of z = conv(x, k) (2*(W/2)
// pixels of F channels each) and, for one channel, im the image with a
// border of zeros ((H+2) x (W+2)); buf is scratch of g.blockScratch(F)
// values: conv's im2col product a chunk of images at a time
// (blockProduct). convBlock and convBlockBack find the windows' maxima in
// these values, so both compute them here. With the SIMD kernels, one
// channel takes vec.ConvPool1 and vec.ConvBack1 instead, which compute a
// row of windows' z in registers, the nine products of every value there
// (the BLAS product of nine columns ran at half its peak at F = 32, and
// im2col cost a fifth as much again), the same values in both.
func blockRows[T float](g convGeom, F int, xt, kt, buf []T, fn func(i, r int, z0, z1, im []T)) {
	H, W, C := g.H, g.W, g.C
	n, per := g.pixelsPerTask()/(H*W), g.chunkImages(F)
	Ho, Wo, ps := H/2, W/2, (H+2)*(W+2)*C
	pad, im, buf := buf[:ps], buf[ps:2*ps], buf[2*ps:]
	clear(pad) // im2col and padImage write only the interior
	if C == 1 {
		clear(im)
	} else {
		im = nil
	}
	cols, z := buf[:per*H*W*9*C], buf[per*H*W*9*C:]
	for i0 := 0; i0 < n; i0 += per {
		zc := blockProduct(g, F, xt, kt, i0, min(per, n-i0), cols, pad, z)
		for i := 0; i < min(per, n-i0); i++ {
			if im != nil {
				padImage(im, xt[(i0+i)*H*W:][:H*W], H, W)
			}
			for r := 0; r < Ho; r++ {
				p0 := (i*H + 2*r) * W * F
				fn(i0+i, r, zc[p0:p0+2*Wo*F], zc[p0+W*F:p0+W*F+2*Wo*F], im)
			}
		}
	}
}

// blockScratch is the scratch of blockRows (and of convBlock's statistics
// of several channels) for F channels: two padded images and two rows of
// z, or with im2col a chunk's patches and z.
func (g convGeom) blockScratch(F int) int {
	pads := 2 * (g.H + 2) * (g.W + 2) * g.C
	if g.C == 1 && vec.SIMD() {
		return pads + 2*g.W*F
	}
	return pads + g.chunkImages(F)*g.H*g.W*(9*g.C+F)
}

// blockProduct sets z to conv's values at images img..img+imgs-1 of one
// task (images xt, kernels kt) and returns them, with cols and pad
// scratch for im2col (pad's border zero): conv's im2col product.
func blockProduct[T float](g convGeom, F int, xt, kt []T, img, imgs int, cols, pad, z []T) []T {
	rows := imgs * g.H * g.W
	im2colChunk(g.imageGeom, xt, img, imgs, cols, pad)
	gemm(false, false, rows, F, 9*g.C, cols[:rows*9*g.C], kt, 0, z)
	return z[:rows*F]
}

// taskPatchMoments returns the sums and products of the nine values of
// the 3x3 patches of the n one-channel h x w images xt
// (vec.PatchMoments).
func taskPatchMoments[T float](xt []T, n, h, w int) (s [9]float64, m [81]float64) {
	pad := make([]float64, (h+2)*(w+2))
	for img := 0; img < n; img++ {
		padImage(pad, xt[img*h*w:][:h*w], h, w)
		vec.PatchMoments(&s, &m, pad, h, w)
	}
	return s, m
}

// padImage copies the h x w image im into the interior of pad, whose
// border of zeros stays as it is.
func padImage[D, S float](pad []D, im []S, h, w int) {
	for y := 0; y < h; y++ {
		row := pad[(y+1)*(w+2)+1:][:w]
		for x, v := range im[y*w : (y+1)*w] {
			row[x] = D(v)
		}
	}
}

// patchStats sets task t's statistics in st to bnStats's of z = conv(x, k)
// for images of one channel, from the sums s and products m of the nine
// values of their n patches (vec.PatchMoments): z's channel f has mean
// k_f.mu and variance k_f' C k_f, with mu = s/n and C = m/n - mu mu', k_f
// the nine kernel values of channel f. 90 numbers per task replace z's
// F-channel sums (a pass over z at 9 products per value); the moments are
// z's exact ones (those of the values before rounding to T) in float64,
// where bnStats sums the rounded z, so the two differ in the last bits of
// T.
func patchStats[T float](st []T, t int, s *[9]float64, m *[81]float64, k []T, n int, eps float64) {
	f := len(k) / 9
	mu, c := patchCov(s, m, n)
	mean, inv := taskStats(st, t, f)
	var kf [9]float64
	for ch := 0; ch < f; ch++ {
		e := 0.0
		for i := range kf {
			kf[i] = float64(k[i*f+ch])
			e += kf[i] * mu[i]
		}
		v := 0.0
		for i := range c {
			v += kf[i/9] * c[i] * kf[i%9]
		}
		mean[ch] = T(e)
		inv[ch] = T(1 / math.Sqrt(max(v, 0)+eps))
	}
}

// patchCov returns the mean s/n and the covariance m/n - mu mu' of the
// nine values of n patches from their sums s and products m.
func patchCov(s *[9]float64, m *[81]float64, n int) (mu [9]float64, c [81]float64) {
	for i := range mu {
		mu[i] = s[i] / float64(n)
	}
	for i := range c {
		c[i] = m[i]/float64(n) - mu[i/9]*mu[i%9]
	}
	return mu, c
}

// grad: for images of one channel, the kernel, scale and shift gradients
// from convBlockBack, which computes z again instead of reading it, and a
// zero bias gradient; otherwise, and for the images, unfusedGrad's. For one
// channel unfusedGrad's other nodes are built too but never run: only the
// images' gradient reads them, and the graphs that fuse the block take
// none (the compiled program keeps only the nodes its outputs need).
func (k convBlockKernel) grad(in gorgonia.Nodes, out, g *gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := k.unfusedGrad(in, out, g)
	if err != nil || k.g.C != 1 {
		return d, err
	}
	b := &chain{}
	back := b.do(apply(convBlockBackKernel(k), in[0], in[1], in[3], out, g))
	d[1] = b.do(midRows(back, 0, 9))
	d[3] = b.do(midRow(back, 9))
	d[4] = b.do(midRow(back, 10))
	d[2] = b.do(scale(d[4], 0))
	return d, b.err
}

// midRow returns row i of x (T, R, F) as (T, F).
func midRow(x *gorgonia.Node, i int) (*gorgonia.Node, error) {
	r, err := midRows(x, i, 1)
	if err != nil {
		return nil, err
	}
	return reshape(r, tensor.Shape{x.Shape()[0], x.Shape()[2]})
}

// unfusedGrad: the derivatives of relu, maxPoolBN and conv, with z and the
// statistics built again. ReLU's mask may read the output: it is positive
// exactly where ReLU's argument is.
func (k convBlockKernel) unfusedGrad(in gorgonia.Nodes, out, g *gorgonia.Node) (gorgonia.Nodes, error) {
	b := &chain{}
	z := b.do(conv(in[0], in[1], k.g.imageGeom))
	st := b.do(bnStats(z, k.eps))
	gp := b.do(mask(out, g))
	if b.err != nil {
		return nil, b.err
	}
	d, err := maxPoolBNKernel{poolGeom{k.g.H, k.g.W}}.grad(gorgonia.Nodes{z, st, in[2], in[3], in[4]}, nil, gp)
	if err != nil {
		return nil, err
	}
	dxk, err := convKernel{k.g}.grad(in[:2], z, d[0])
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dxk[0], dxk[1], d[2], d[3], d[4]}, nil
}
