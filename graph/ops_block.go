package graph

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convBlockKernel is a whole CNN block in one op, for the graphs that only
// need its values (an evaluation's query images): relu of maxPoolBN(z,
// bnStats(z), b, gamma, beta) with z = conv(x, K), the composition
// CNN.block builds from four ops. Those write the first block's z (28x28
// pixels at F channels, 10 MB per task of 50 images at F = 64) to memory
// and read it back twice; this op computes z a chunk of images at a time
// into a buffer that stays in the cache, for the pool, and the statistics
// before that: for images of one channel (the CNN's first block) from the
// moments of their 3x3 patches (patchStats), otherwise from z computed an
// extra time. Recomputing is cheap only for thin patches (9 products per
// value at one channel), so the CNN uses the op only there (CNN.fuses).
// Its values are those of the four ops up to rounding: the same chunks,
// the same nine products per value of one channel added in the BLAS's
// order (vec.Conv1; with more channels, or without the SIMD kernels, the
// same im2col product), the affine map and ReLU; the statistics of one
// channel are z's exact moments, not those of the rounded z.
// Its derivative is the four ops' derivatives (it builds z and the
// statistics again), so a graph that differentiates it stays exact but
// gains nothing.
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

// forwardConvBlock computes, per task, the statistics of z, then z for the
// chunks of conv's im2col path, with the statistics, into maxPoolBN's row
// kernel and ReLU. Images of one channel (the CNN's first block) give the
// statistics from their patches' moments (patchStats); with more channels
// z is computed twice, first into the channel sums of bnStats (z minus the
// task's first row, accumulated chunk after chunk).
func forwardConvBlock[T float](k convBlockKernel, out []T, in [][]T, s []tensor.Shape) {
	x, kern, gamma, beta := in[0], in[1], in[3], in[4]
	g, F := k.g, s[1][2]
	H, W, C := g.H, g.W, g.C
	n, per := g.pixelsPerTask()/(H*W), g.chunkImages(F)
	Ho, Wo := H/2, W/2
	st := make([]T, 2*g.x[0]*F)
	cs, ps, zs := per*H*W*9*C, (H+2)*(W+2)*C, per*H*W*F
	parallelTasks(g.x[0], n*H*W*F, func(t int) {
		bp, buf := pooledSlice[T](&scratch, cs+ps+zs, 0)
		cols, pad, z := buf[:cs], buf[cs:cs+ps], buf[cs+ps:]
		clear(pad) // im2col writes only the interior
		xt, kt := x[t*g.perTask():], kern[t*9*C*F:][:9*C*F]
		product := func(img, imgs int) []T {
			rows := imgs * H * W
			if C > 1 || !vec.SIMD() {
				im2colChunk(g.imageGeom, xt, img, imgs, cols, pad)
				gemm(false, false, rows, F, 9*C, cols[:rows*9*C], kt, 0, z)
				return z[:rows*F]
			}
			// One channel: the nine products of every value in registers
			// (the BLAS product of nine columns ran at half its peak at
			// F = 32, and im2col cost a fifth as much again).
			for i := 0; i < imgs; i++ {
				padImage(pad, xt[(img+i)*H*W:][:H*W], H, W)
				vec.Conv1(z[i*H*W*F:][:H*W*F], pad, H, W, kt)
			}
			return z[:rows*F]
		}
		if C == 1 {
			// One channel: the statistics from the moments of the images'
			// patches, without computing z.
			var sums [9]float64
			var prods [81]float64
			pad64 := make([]float64, ps)
			for img := 0; img < n; img++ {
				padImage(pad64, xt[img*H*W:][:H*W], H, W)
				vec.PatchMoments(&sums, &prods, pad64, H, W)
			}
			patchStats(st, t, &sums, &prods, kt, n*H*W, k.eps)
		} else {
			shift, sum, sq := make([]T, F), make([]float64, F), make([]float64, F)
			for img := 0; img < n; img += per {
				zc := product(img, min(per, n-img))
				if img == 0 {
					copy(shift, zc)
				}
				vec.Moments(sum, sq, zc, shift)
			}
			setStats(st, t, sum, sq, shift, n*H*W, k.eps)
		}
		sc, off := bnAffine(st, gamma, beta, t, F)
		for img := 0; img < n; img += per {
			imgs := min(per, n-img)
			zc := product(img, imgs)
			oc := out[(t*n+img)*Ho*Wo*F:][:imgs*Ho*Wo*F]
			for r := 0; r < imgs*Ho; r++ { // rows of windows: image r/Ho, row r%Ho
				p0 := (r/Ho*H + 2*(r%Ho)) * W * F
				vec.MaxAffineRow(oc[r*Wo*F:][:Wo*F], zc[p0:p0+2*Wo*F], zc[p0+W*F:p0+W*F+2*Wo*F], sc, off)
			}
			vec.Relu(oc, oc)
		}
		scratch.Put(bp)
	})
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
	var mu [9]float64
	var c [81]float64
	for i := range mu {
		mu[i] = s[i] / float64(n)
	}
	for i := range c {
		c[i] = m[i]/float64(n) - mu[i/9]*mu[i%9]
	}
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

// grad: the derivatives of relu, maxPoolBN and conv, with z and the
// statistics built again. ReLU's mask may read the output: it is positive
// exactly where ReLU's argument is.
func (k convBlockKernel) grad(in gorgonia.Nodes, out, g *gorgonia.Node) (gorgonia.Nodes, error) {
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
