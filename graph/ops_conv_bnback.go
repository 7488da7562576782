package graph

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/exec"
	"github.com/trmaml/trmaml/graph/internal/vec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convKBNBackKernel is convK(x, bnBackMax(z, st, gamma, g, a, c)) in one
// op: the kernels' gradient of a CNN block whose images carry no gradient
// (the first block: the input images), where the batch norm's and
// max-pool's backward pass dz is read by convK alone. bnBackMax writes dz
// (the first block's full-size activations, 90 MB per 5-shot mini-ImageNet
// task) and convK reads it back; this op computes dz a chunk of images at a
// time (convK's chunks, eachChunk) into a buffer that stays in the cache
// and multiplies it there. Its values are those of the two ops bit for bit:
// the same row kernel (vec.BackPoolMaxRow) for dz, the same products on the
// same chunks, added in the same order. It runs convK's im2col path on
// images of even sides (bnBackMax's one-pass path); convKOf builds it only
// there. Its derivative is the two ops' (built from bnBackMax's node, which
// gorgonia merges with the existing one).
type convKBNBackKernel struct{ g convGeom }

func (k convKBNBackKernel) name() string { return "convKBNBack(" + k.g.String() + ")" }

func (k convKBNBackKernel) pool() poolGeom { return poolGeom{k.g.H, k.g.W} }

// fusesBNBack reports whether convKOf builds the op for images of g and F
// channels of the activations.
func (g convGeom) fusesBNBack(F int) bool {
	n := g.pixelsPerTask() / (g.H * g.W)
	return g.H%2 == 0 && g.W%2 == 0 && g.winogradTile(n, g.C, F) == 0
}

func (k convKBNBackKernel) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 7 {
		return nil, shapeErr(fmt.Sprintf("images %v and bnBackMax's six inputs", k.g.x), in)
	}
	if _, err := (bnBackMaxKernel{k.pool()}).shape(in[1:]); err != nil {
		return nil, err
	}
	if !k.g.fusesBNBack(in[1][2]) {
		return nil, fmt.Errorf("convKBNBack runs the im2col path on images of even sides, not %s", k.g)
	}
	return convKKernel{k.g}.shape([]tensor.Shape{in[0], in[1]})
}

func (k convKBNBackKernel) forward(a *args) {
	call(a, k, forwardConvKBNBack[float64], forwardConvKBNBack[float32])
}

// forwardConvKBNBack runs forwardConvK's chunks, each with its part of
// forwardBNBackMax's output computed first into the chunk's scratch.
func forwardConvKBNBack[T float](k convKBNBackKernel, out []T, in [][]T, s []tensor.Shape) {
	x, z, st, gamma, g, a, c := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	m, F := s[1][1], s[1][2]
	coef := make([][3][]T, s[1][0])
	for t := range coef {
		coef[t][0], coef[t][1], coef[t][2] = bnBackCoefficients(st, gamma, a, c, t, F, m)
	}
	H, W, C := k.g.H, k.g.W, k.g.C
	wc, wo := W*F, W/2
	pooledImage := (H / 2) * wo * F
	eachChunkWith(k.g, F, false, k.g.chunkImages(F)*H*W*F, func(t, img, imgs int, cols, pad, dz []T) {
		dz = dz[:imgs*H*W*F]
		for i := 0; i < imgs; i++ {
			p0 := t*m*F + (img+i)*H*W*F
			o := t*(m/4)*F + (img+i)*pooledImage
			d := dz[i*H*W*F:]
			for y := 0; y < H/2; y++ {
				q, r := 2*y*wc, p0+2*y*wc
				vec.BackPoolMaxRow(d[q:q+wc], d[q+wc:q+2*wc], z[r:r+wc], z[r+wc:r+2*wc],
					g[o:o+wo*F], coef[t][0], coef[t][1], coef[t][2])
				o += wo * F
			}
		}
		im2colChunk(k.g.imageGeom, x[t*k.g.perTask():], img, imgs, cols, pad)
		var beta T
		if img > 0 {
			beta = 1
		}
		gemm(true, false, 9*C, F, imgs*H*W, cols, dz, beta, out[t*9*C*F:])
	})
}

func (k convKBNBackKernel) differentiable() []bool {
	return []bool{true, true, false, true, true, true, true}
}

// grad: convK's with respect to x and dz, and bnBackMax's from dz on.
func (k convKBNBackKernel) grad(in gorgonia.Nodes, out, h *gorgonia.Node) (gorgonia.Nodes, error) {
	back := in[1:]
	dz, err := apply(bnBackMaxKernel{k.pool()}, back...)
	if err != nil {
		return nil, err
	}
	d, err := convKKernel{k.g}.grad(gorgonia.Nodes{in[0], dz}, out, h)
	if err != nil {
		return nil, err
	}
	b, err := bnBackMaxKernel{k.pool()}.grad(back, dz, d[1])
	if err != nil {
		return nil, err
	}
	return append(gorgonia.Nodes{d[0]}, b...), nil
}

// convKOf returns convK(x, g) for the images x of a convolution of
// geometry cg: as one convKBNBack op where g is bnBackMax's output at
// cg's pooling, x is a leaf (the input images, which take no gradient,
// so that nothing but convK reads g) and the op's path applies.
func convKOf(cg convGeom, x, g *gorgonia.Node) (*gorgonia.Node, error) {
	if o, ok := g.Op().(*op); ok && x.Op() == nil {
		if bk, ok := o.k.(bnBackMaxKernel); ok && bk.p == (poolGeom{cg.H, cg.W}) && cg.fusesBNBack(g.Shape()[2]) {
			return apply(convKBNBackKernel{cg}, append(gorgonia.Nodes{x}, exec.Inputs(g.Graph(), g)...)...)
		}
	}
	return apply(convKKernel{cg}, x, g)
}
