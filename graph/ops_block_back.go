package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/memory"
	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The derivative of convBlockKernel for images of one channel
// (convBlockBack): z computed once more, never stored.

// blockBackFast reports whether convBlockBack runs on the SIMD kernels
// (float32, built with GOEXPERIMENT=simd, on a CPU with AVX2): in plain
// Go its per-window sums and the convolution it computes again cost more
// than the unfused backward pass (measured, cnnbench -ways 5 -order
// second at 64 filters on one core: 16% more CPU per iteration in the
// plain build, 5-30% more in float64), so CNN.forwardOnce fuses only then.
// tuning.blockBack makes it true, so that tests run the fused query pass
// in float64 and in the plain build too.
func (g imageGeom) blockBackFast(dt tensor.Dtype) bool {
	return g.tune.blockBack || dt == tensor.Float32 && vec.SIMD()
}

// convBlockBackKernel is the gradient of convBlock(x, k, b, gamma, beta)
// with respect to k, gamma and beta for images of one channel, given the
// block's output y and its gradient G: (T, 11, F) with dk in rows 0-8,
// dgamma in row 9 and dbeta in row 10 (the bias's is 0). The four ops'
// backward pass writes z's gradient dz (28x28 pixels at F channels per
// image) and reads it back with z; this op computes z again as convBlock
// does (blockRows, a few rows at a time) and keeps only per-channel sums.
// With gp = G where y > 0 (ReLU's mask), q each window's first maximum of
// gamma*zhat, N the task's pixels and inv = (var+eps)^(-1/2):
//
//	dbeta  = sum of gp,  dgamma = sum of gp*zhat at q,
//	dz     = gamma*inv*(gp at q - dbeta/N - zhat*dgamma/N)   (bnBackMax),
//	dk[i]  = sum over pixels of patch value i times dz
//	       = gamma*inv*(S[i] - dbeta*m[i] - dgamma*inv*(Cov k)[i]),
//
// with S[i] the sum of gp times patch value i at q (vec.BlockBackRow), m
// and Cov the mean and covariance of the nine patch values (patchCov): the
// sum over the pixels of patch value i times zhat is N*inv*(Cov k)[i].
// Its derivative is that of the four ops' backward pass, built from their
// kernels (conv, bnStats, mask, bnDotMax, bnBackMax, convK), so that
// differentiating it again stays exact.
type convBlockBackKernel convBlockKernel

func (k convBlockBackKernel) name() string {
	return fmt.Sprintf("convBlockBack(%s,%v)", k.g, k.eps)
}

// differentiable: all but the output y, read only for ReLU's mask.
func (k convBlockBackKernel) differentiable() []bool { return []bool{true, true, true, false, true} }

func (k convBlockBackKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	want := fmt.Sprintf("images %v of one channel, kernels (T, 9, F), scale (T, F), and the output and its gradient", k.g.x)
	if len(in) != 5 || k.g.C != 1 {
		return nil, shapeErr(want, in)
	}
	z, err := convKernel{k.g}.shape(in[:2])
	if err != nil {
		return nil, err
	}
	o, err := poolGeom{k.g.H, k.g.W}.outShape(z)
	if err != nil {
		return nil, err
	}
	if !in[2].Eq(tensor.Shape{z[0], z[2]}) || !in[3].Eq(o) || !in[4].Eq(o) {
		return nil, shapeErr(want, in)
	}
	return tensor.Shape{z[0], 11, z[2]}, nil
}

func (k convBlockBackKernel) forward(a *args) {
	call(a, k, forwardConvBlockBack[float64], forwardConvBlockBack[float32])
}

// forwardConvBlockBack computes, per task, the statistics from the patch
// moments (as convBlock), then z a row of windows at a time (blockRows)
// and the sums of every row with vec.BlockBackRow (with the SIMD kernels
// both in vec.ConvBack1), and last the gradients from the sums.
func forwardConvBlockBack[T float](k convBlockBackKernel, out []T, in [][]T, s []tensor.Shape) {
	x, kern, gamma, y, g := in[0], in[1], in[2], in[3], in[4]
	geo, F := k.g, s[1][2]
	H, W := geo.H, geo.W
	n, Ho, Wo := geo.pixelsPerTask()/(H*W), H/2, W/2
	st := make([]T, 2*geo.x[0]*F)
	parallelTasks(geo.x[0], n*H*W*F, func(t int) {
		bp, buf := memory.Take[T](&scratch, geo.blockScratch(F))
		xt, kt := x[t*geo.perTask():], kern[t*9*F:][:9*F]
		sums, prods := taskPatchMoments(xt, n, H, W)
		patchStats(st, t, &sums, &prods, kt, n*H*W, k.eps)
		mu, inv := taskStats(st, t, F)
		sc := channelScale(st, gamma, t, F)
		acc := make([]float64, 11*F)
		if vec.SIMD() {
			// The same sums as blockRows' Conv1 and BlockBackRow, with z
			// kept in registers.
			paddedRows(geo, F, xt, buf, func(i, r int, rows, z []T) {
				o := ((t*n+i)*Ho + r) * Wo * F
				vec.ConvBack1(acc, z, rows, W, kt, y[o:o+Wo*F], g[o:o+Wo*F], sc, mu)
			})
		} else {
			blockRows(geo, F, xt, kt, buf, func(i, r int, z0, z1, im []T) {
				o := ((t*n+i)*Ho + r) * Wo * F
				vec.BlockBackRow(acc, z0, z1, im[2*r*(W+2):], W+2, y[o:o+Wo*F], g[o:o+Wo*F], sc, mu)
			})
		}
		m, c := patchCov(&sums, &prods, n*H*W)
		dst := out[t*11*F:][:11*F]
		for f := 0; f < F; f++ {
			iv, u := float64(inv[f]), float64(gamma[t*F+f])*float64(inv[f])
			dBeta, dGamma := acc[10*F+f], iv*acc[9*F+f]
			for i := 0; i < 9; i++ {
				ck := 0.0 // (Cov k)[i]
				for j := 0; j < 9; j++ {
					ck += c[9*i+j] * float64(kt[j*F+f])
				}
				dst[i*F+f] = T(u * (acc[i*F+f] - dBeta*m[i] - dGamma*iv*ck))
			}
			dst[9*F+f], dst[10*F+f] = T(dGamma), T(dBeta)
		}
		scratch.Put(bp)
	})
}

// grad: the four ops' backward pass, with gp = mask(y, G),
//
//	dgamma = bnDotMax(z, st, gamma, gp), dbeta = sumMid(gp),
//	dk = convK(x, bnBackMax(z, st, gamma, gp, dbeta, dgamma)),
//
// z = conv(x, k) and st = bnStats(z), differentiated with the adjoint h
// split into its three parts: each node's kernel gradient, in reverse
// order, the terms of a node read twice added.
func (k convBlockBackKernel) grad(in gorgonia.Nodes, _, h *gorgonia.Node) (gorgonia.Nodes, error) {
	x, kern, gamma, y, g := in[0], in[1], in[2], in[3], in[4]
	p := poolGeom{k.g.H, k.g.W}
	b := &chain{}
	hk, hGamma, hBeta := b.do(midRows(h, 0, 9)), b.do(midRow(h, 9)), b.do(midRow(h, 10))
	z := b.do(conv(x, kern, k.g.imageGeom))
	st := b.do(bnStats(z, k.eps))
	gp := b.do(mask(y, g))
	dGamma := b.do(apply(bnDotMaxKernel{p}, z, st, gamma, gp))
	dBeta := b.do(sumMid(gp))
	dz := b.do(apply(bnBackMaxKernel{p}, z, st, gamma, gp, dBeta, dGamma))
	if b.err != nil {
		return nil, b.err
	}
	// Each from* lists the gradients of a kernel's inputs, in order.
	fromK, err := convKKernel{k.g}.grad(gorgonia.Nodes{x, dz}, nil, hk)
	if err != nil {
		return nil, err
	}
	fromDZ, err := bnBackMaxKernel{p}.grad(gorgonia.Nodes{z, st, gamma, gp, dBeta, dGamma}, dz, fromK[1])
	if err != nil {
		return nil, err
	}
	hGamma = b.do(sumTerms(gorgonia.Nodes{hGamma, fromDZ[5]}))
	hBeta = b.do(sumTerms(gorgonia.Nodes{hBeta, fromDZ[4]}))
	if b.err != nil {
		return nil, b.err
	}
	fromGamma, err := bnDotMaxKernel{p}.grad(gorgonia.Nodes{z, st, gamma, gp}, dGamma, hGamma)
	if err != nil {
		return nil, err
	}
	fromBeta, err := sumMidKernel{}.grad(gorgonia.Nodes{gp}, dBeta, hBeta)
	if err != nil {
		return nil, err
	}
	hgp := b.do(sumTerms(gorgonia.Nodes{fromDZ[3], fromGamma[3], fromBeta[0]}))
	hz := b.do(sumTerms(gorgonia.Nodes{fromDZ[0], fromGamma[0]}))
	if b.err != nil {
		return nil, b.err
	}
	fromGP, err := maskKernel{}.grad(gorgonia.Nodes{y, g}, gp, hgp)
	if err != nil {
		return nil, err
	}
	fromZ, err := convKernel{k.g}.grad(gorgonia.Nodes{x, kern}, z, hz)
	if err != nil {
		return nil, err
	}
	dx := b.do(sumTerms(gorgonia.Nodes{fromK[0], fromZ[0]}))
	dg := b.do(sumTerms(gorgonia.Nodes{fromDZ[2], fromGamma[2]}))
	return gorgonia.Nodes{dx, fromZ[1], dg, nil, fromGP[1]}, b.err
}
