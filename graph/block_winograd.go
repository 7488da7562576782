package graph

import "github.com/trmaml/trmaml/graph/internal/vec"

// convBlock on the Winograd path (the CNN's blocks of many channels, on
// the query images of an evaluation): z is never stored. The products'
// output transform writes one image's z at a time into a buffer that stays
// in the cache (50 KB at 14x14 and 64 channels); from there the batch-norm
// moments take it, and every 2x2 pooling window gives the output its
// maximum in the channels of a positive scale and its minimum in those of
// a negative one (vec.ExtremeRow): the scale is gamma * inv with inv > 0,
// so its signs are gamma's, known before the statistics. Once the task's
// statistics are known, the affine map and ReLU run in place on the
// pooled values. The four ops this replaces write z and read it twice more
// (bnStats, maxPoolBN), 2.5 MB per task of 50 images at 14x14 and 64
// channels, beyond the second-level cache. The values are those of the
// four ops but for the order in which the moments are summed (in float64)
// and, where two entries of a window have the same rounded product with
// the scale, the one the affine map is applied to: the same products and
// transforms, the affine map applied to the window's extreme instead of
// its first maximal product (vec.ExtremeRow).

// winogradBlockTile returns the output tile size with which convBlock
// runs a block of n images of g per task into F channels on the Winograd
// path (winogradBlock), where conv would take it, or 0: images of one
// channel take the patches' moments instead.
func (g imageGeom) winogradBlockTile(n, F int) int {
	if g.C == 1 {
		return 0
	}
	return g.winogradTile(n, g.C, F)
}

// winogradBlock sets out to convBlock's values of every task (images x,
// kernels k, scale gamma and shift beta) through winogradBlockTask with
// output tiles of m, on several goroutines; st receives the statistics
// (T, 2, F). Kernels that every task shares are transformed once
// (sharedKernels).
func winogradBlock[T float](m int, g convGeom, F int, x, k, gamma, beta, st, out []T, eps float64) {
	n := g.pixelsPerTask() / (g.H * g.W)
	u, done := sharedKernels(m, g, F, k, false)
	defer done()
	parallelTasks(g.x[0], 1<<20, func(t int) {
		winogradBlockTask(m, g, F, n, t, x[t*g.perTask():], k[t*9*g.C*F:], u, gamma, beta, st, out, eps)
	})
}

// winogradBlockTask computes task t's convBlock: z = conv(xt, kt) (n
// images; u the transformed kernels or nil) an image at a time, its
// moments and its windows' extremes, into out; then the statistics into st
// and, in place, the batch norm's affine map and ReLU.
func winogradBlockTask[T float](m int, g convGeom, F, n, t int, xt, kt, u, gamma, beta, st, out []T, eps float64) {
	H, W := g.H, g.W
	Ho, Wo := H/2, W/2
	ot := out[t*n*Ho*Wo*F:][:n*Ho*Wo*F]
	signs := gamma[t*F:][:F] // the scales' signs: gamma * inv, inv > 0
	shift, sum, sq := make([]T, F), make([]float64, F), make([]float64, F)
	winogradProducts(m, H, W, g.C, F, n, xt, kt, false, u, (H*W+m*m)*F, func(img int, mm []T, ms int, buf []T) {
		z := buf[:H*W*F] // one image's z, in the cache
		winogradImage(m, H, W, F, z, mm, ms, buf[H*W*F:])
		if img == 0 {
			copy(shift, z[:F]) // the task's first row of z, as bnStats
		}
		vec.Moments(sum, sq, z, shift)
		for r := 0; r < Ho; r++ {
			vec.ExtremeRow(ot[(img*Ho+r)*Wo*F:][:Wo*F], z[2*r*W*F:][:Wo*2*F], z[(2*r+1)*W*F:][:Wo*2*F], signs)
		}
	})
	setStats(st, t, sum, sq, shift, n*H*W, eps)
	sc, off := bnAffine(st, gamma, beta, t, F)
	vec.Affine(ot, ot, sc, off)
	vec.Relu(ot, ot)
}
