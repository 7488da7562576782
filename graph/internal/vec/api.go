package vec

// Float is the element type of the kernels.
type Float interface{ ~float32 | ~float64 }

// kernels is one float32 implementation of the package's functions.
type kernels struct {
	affine        func(dst, x, a, c []float32)
	affine2       func(dst, x, y, a, b, c []float32)
	addTo         func(dst, src []float32)
	sumRows       func(dst, x []float32)
	moments       func(sum, sq []float64, x, shift []float32)
	dotCentered   func(acc []float64, g, z, mu []float32)
	gather        func(dst, pos, r0, r1, r2, r3 []float32)
	scatter       func(o0, o1, o2, o3, pos, g []float32)
	relu          func(dst, x []float32)
	mask          func(dst, x, v []float32)
	addScaled     func(dst, x, y []float32, k float32)
	scale         func(dst, x []float32, k float32)
	poolArgScaled func(dst, x00, x01, x10, x11, s []float32)
	addAtScaled   func(o0, o1, o2, o3, pos, g, u []float32)
	winogradIn    func(dst []float32, stride int, r0, r1, r2, r3 []float32, c int)
	winogradOut   func(y0, y1, m []float32, stride, c int)
	winogradK     func(dst *[16][]float32, src *[9][]float32)
	winogradGrad  func(dst []float32, stride int, g0, g1 []float32, c int)
	winogradKT    func(dst *[9][]float32, src *[16][]float32)
	backPoolRow   func(o0, o1, z0, z1, pos, g, u, v, w []float32)
	gatherAffRow  func(dst, pos, z0, z1, a, c []float32)
	poolArgRow    func(dst, z0, z1, s []float32)
	gatherDotRow  func(acc []float64, pos, z0, z1, g, mu []float32)
	maxAffRow     func(dst, z0, z1, a, c []float32)
	backPoolMax   func(o0, o1, z0, z1, g, u, v, w []float32)
	gatherDotMax  func(acc []float64, z0, z1, g, s, mu []float32)
	conv1         func(dst, pad []float32, h, w int, k []float32)
	convPool1     func(dst, z, pad []float32, w int, k, a, c []float32)
	convBack1     func(acc []float64, z, pad []float32, w int, k, out, g, s, mu []float32)
	winograd4In   func(dst []float32, stride int, d []float32, pw, c int)
	winograd4Out  func(y []float32, yw int, m []float32, stride, c int)
	winograd4K    func(dst *[36][]float32, src *[9][]float32)
	winograd4Grad func(dst []float32, stride int, g []float32, gw, c int)
	winograd4KT   func(dst *[9][]float32, src *[36][]float32)
	patchMoments  func(s *[9]float64, m *[81]float64, pad []float64, h, w int)
	blockBackRow  func(acc []float64, z0, z1, pad []float32, pw int, out, g, s, mu []float32)
	extremeRow    func(dst, z0, z1, s []float32)
}

// impl runs float32: the plain loops, replaced at init by the SIMD kernels
// where they are built and the CPU supports them.
var (
	impl    = plain
	useSIMD = false
	lanes   = 0
	isa     = ""
	// simdSets is every SIMD set the CPU runs (AVX2, then with the
	// AVX-512 kernels if it has them), impl the last, for the tests.
	simdSets []kernels
	// avxSet is the AVX set (avx_amd64.go) where the CPU runs it, for
	// the tests; it is impl on a CPU with AVX but not AVX2 and FMA.
	avxSet []kernels
	// sseSet is the SSE set (sse_amd64.go) on amd64, for the tests; it is
	// impl on a CPU without AVX and in the build without GOEXPERIMENT=simd.
	sseSet []kernels
	plain  = kernels{affineGo[float32], affine2Go[float32], addToGo[float32], sumRowsGo[float32],
		momentsGo[float32], dotCenteredGo[float32], gatherGo[float32],
		scatterGo[float32], reluGo[float32], maskGo[float32], addScaledGo[float32], scaleGo[float32], poolArgScaledGo[float32], addAtScaledGo[float32],
		winogradInGo[float32], winogradOutGo[float32], winogradKernelGo[float32],
		winogradGradGo[float32], winogradKernelTGo[float32], backPoolRowGo[float32], gatherAffineRowGo[float32],
		poolArgRowGo[float32], gatherDotRowGo[float32], maxAffineRowGo[float32],
		backPoolMaxRowGo[float32], gatherDotMaxRowGo[float32], conv1Go[float32], convPool1Go[float32], convBack1Go[float32],
		winograd4InGo[float32], winograd4OutGo[float32], winograd4KernelGo[float32],
		winograd4GradGo[float32], winograd4KernelTGo[float32], patchMomentsGo, blockBackRowGo[float32],
		extremeRowGo[float32]}
)

// f32 returns s as []float32 if T is float32.
func f32[T Float](s []T) ([]float32, bool) {
	v, ok := any(s).([]float32)
	return v, ok
}

// as32 converts s, known to be []float32, for the calls after f32.
func as32[T Float](s []T) []float32 { return any(s).([]float32) }

// Affine sets every row of dst to x*a + c, with the rows of x and dst of
// len(a) = len(c) channels; len(dst) = len(x) is a multiple of len(a).
func Affine[T Float](dst, x, a, c []T) {
	if len(a) == 0 { // rows of no channels: nothing to do (and no progress)
		return
	}
	if d, ok := f32(dst); ok {
		impl.affine(d, as32(x), as32(a), as32(c))
		clearUpper()
		return
	}
	affineGo(dst, x, a, c)
}

// Affine2 sets every row of dst to x*a + y*b + c, rows as in Affine.
func Affine2[T Float](dst, x, y, a, b, c []T) {
	if len(a) == 0 { // rows of no channels: nothing to do (and no progress)
		return
	}
	if d, ok := f32(dst); ok {
		impl.affine2(d, as32(x), as32(y), as32(a), as32(b), as32(c))
		clearUpper()
		return
	}
	affine2Go(dst, x, y, a, b, c)
}

// AddTo adds src to dst element by element; len(src) >= len(dst).
func AddTo[T Float](dst, src []T) {
	if d, ok := f32(dst); ok {
		impl.addTo(d, as32(src))
		clearUpper()
		return
	}
	if d, ok := any(dst).([]float64); ok {
		impl64.addTo(d, any(src).([]float64))
		clearUpper()
		return
	}
	addToGo(dst, src)
}

// SumRows adds every row of x (len(dst) channels) to dst.
func SumRows[T Float](dst, x []T) {
	if len(dst) == 0 { // rows of no channels: nothing to do (and no progress)
		return
	}
	if d, ok := f32(dst); ok {
		impl.sumRows(d, as32(x))
		clearUpper()
		return
	}
	if d, ok := any(dst).([]float64); ok {
		x := any(x).([]float64)
		for p := 0; p+len(d) <= len(x); p += len(d) {
			impl64.addTo(d, x[p:p+len(d)])
		}
		clearUpper()
		return
	}
	sumRowsGo(dst, x)
}

// Moments adds, per channel i, the sum of x[i]-shift[i] over the rows of x
// (len(shift) channels) to sum[i] and the sum of its squares to sq[i], in
// float64.
func Moments[T Float](sum, sq []float64, x, shift []T) {
	if len(shift) == 0 { // rows of no channels: nothing to do (and no progress)
		return
	}
	if x, ok := f32(x); ok {
		impl.moments(sum, sq, x, as32(shift))
		clearUpper()
		return
	}
	momentsGo(sum, sq, x, shift)
}

// DotCentered adds, per channel i, the sum of g[i]*(z[i]-mu[i]) over the rows
// of z and g (len(mu) channels) to acc[i], in float64 (each product in T).
func DotCentered[T Float](acc []float64, g, z, mu []T) {
	if len(mu) == 0 { // rows of no channels: nothing to do (and no progress)
		return
	}
	if g, ok := f32(g); ok {
		impl.dotCentered(acc, g, as32(z), as32(mu))
		clearUpper()
		return
	}
	dotCenteredGo(acc, g, z, mu)
}

// PoolArgScaled sets dst[i] to the position 0..3 of the first maximum of
// s[i] times (x00[i], x01[i], x10[i], x11[i]), the four entries of a 2x2
// window: the window positions of a per-channel affine map of x (whose
// sign flips the order).
func PoolArgScaled[T Float](dst, x00, x01, x10, x11, s []T) {
	if d, ok := f32(dst); ok {
		impl.poolArgScaled(d, as32(x00), as32(x01), as32(x10), as32(x11), as32(s))
		clearUpper()
		return
	}
	poolArgScaledGo(dst, x00, x01, x10, x11, s)
}

// AddAtScaled adds g[i]*u[i] to o_k[i] for k = pos[i] (0..3), for every
// i < len(pos): Scatter's adjoint with a per-channel scale, accumulated.
func AddAtScaled[T Float](o0, o1, o2, o3, pos, g, u []T) {
	if p, ok := f32(pos); ok {
		impl.addAtScaled(as32(o0), as32(o1), as32(o2), as32(o3), p, as32(g), as32(u))
		clearUpper()
		return
	}
	addAtScaledGo(o0, o1, o2, o3, pos, g, u)
}

// Gather sets dst[i] to r_k[i] with k = pos[i] (0..3).
func Gather[T Float](dst, pos, r0, r1, r2, r3 []T) {
	if d, ok := f32(dst); ok {
		impl.gather(d, as32(pos), as32(r0), as32(r1), as32(r2), as32(r3))
		clearUpper()
		return
	}
	gatherGo(dst, pos, r0, r1, r2, r3)
}

// Scatter sets o_k[i] to g[i] for k = pos[i] (0..3) and the other three
// o_j[i] to 0, for every i < len(pos).
func Scatter[T Float](o0, o1, o2, o3, pos, g []T) {
	if p, ok := f32(pos); ok {
		impl.scatter(as32(o0), as32(o1), as32(o2), as32(o3), p, as32(g))
		clearUpper()
		return
	}
	scatterGo(o0, o1, o2, o3, pos, g)
}

// Relu sets dst to max(x, 0).
func Relu[T Float](dst, x []T) {
	if d, ok := f32(dst); ok {
		impl.relu(d, as32(x))
		clearUpper()
		return
	}
	if d, ok := any(dst).([]float64); ok {
		impl64.relu(d, any(x).([]float64))
		clearUpper()
		return
	}
	reluGo(dst, x)
}

// Mask sets dst[i] to v[i] where x[i] > 0 and to 0 elsewhere (where x[i] is
// NaN, either: the float64 loop passes v for a NaN with the sign bit clear).
func Mask[T Float](dst, x, v []T) {
	if d, ok := f32(dst); ok {
		impl.mask(d, as32(x), as32(v))
		clearUpper()
		return
	}
	if d, ok := any(dst).([]float64); ok {
		impl64.mask(d, any(x).([]float64), any(v).([]float64))
		clearUpper()
		return
	}
	maskGo(dst, x, v)
}

// AddScaled sets dst to x + k*y element by element (a multiplication and
// an addition, not fused, in every implementation); len(x), len(y) >=
// len(dst).
func AddScaled[T Float](dst, x, y []T, k T) {
	if d, ok := f32(dst); ok {
		impl.addScaled(d, as32(x), as32(y), float32(k))
		clearUpper()
		return
	}
	if d, ok := any(dst).([]float64); ok {
		impl64.addScaled(d, any(x).([]float64), any(y).([]float64), float64(k))
		clearUpper()
		return
	}
	addScaledGo(dst, x, y, k)
}

// Scale sets dst to k*x element by element; len(x) >= len(dst).
func Scale[T Float](dst, x []T, k T) {
	if d, ok := f32(dst); ok {
		impl.scale(d, as32(x), float32(k))
		clearUpper()
		return
	}
	if d, ok := any(dst).([]float64); ok {
		impl64.scale(d, any(x).([]float64), float64(k))
		clearUpper()
		return
	}
	scaleGo(dst, x, k)
}

// The transforms of Winograd's F(2x2, 3x3) convolution (Lavin and Gray,
// 2016): a 3x3 convolution of a 4x4 input tile d gives a 2x2 output tile
// Aᵀ [(G k Gᵀ) ⊙ (Bᵀ d B)] A, with
//
//	Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//	Aᵀ = [1 1 1 0; 0 1 -1 -1]
//
// applied per channel to tiles of pixels of c channels each.

// WinogradIn sets dst (16 rows of c values, row 4r+s at (4r+s)*stride) to
// Bᵀ d B for the 4x4 tile d whose rows r0..r3 each hold 4 pixels of c
// channels.
func WinogradIn[T Float](dst []T, stride int, r0, r1, r2, r3 []T, c int) {
	if d, ok := f32(dst); ok {
		impl.winogradIn(d, stride, as32(r0), as32(r1), as32(r2), as32(r3), c)
		clearUpper()
		return
	}
	winogradInGo(dst, stride, r0, r1, r2, r3, c)
}

// WinogradOut sets the two output rows y0 and y1 of a 2x2 tile (2 pixels of
// c channels each) to Aᵀ m A, m being 16 rows of c values (row 4r+s at
// (4r+s)*stride).
func WinogradOut[T Float](y0, y1, m []T, stride, c int) {
	if d, ok := f32(y0); ok {
		impl.winogradOut(d, as32(y1), as32(m), stride, c)
		clearUpper()
		return
	}
	winogradOutGo(y0, y1, m, stride, c)
}

// WinogradKernel sets dst[4a+b] to (G k Gᵀ)[a][b] for the 3x3 kernel k whose
// entry (kh, kw) is src[3kh+kw], element by element over rows of equal
// length, with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
func WinogradKernel[T Float](dst *[16][]T, src *[9][]T) {
	if _, ok := f32(dst[0]); ok {
		impl.winogradK(any(dst).(*[16][]float32), any(src).(*[9][]float32))
		clearUpper()
		return
	}
	winogradKernelGo(dst, src)
}

// WinogradGrad sets dst (16 rows of c values, row 4r+s at (4r+s)*stride)
// to A g Aᵀ for the 2x2 tile g whose rows g0 and g1 each hold 2 pixels of c
// channels: the adjoint of WinogradOut.
func WinogradGrad[T Float](dst []T, stride int, g0, g1 []T, c int) {
	if d, ok := f32(dst); ok {
		impl.winogradGrad(d, stride, as32(g0), as32(g1), c)
		clearUpper()
		return
	}
	winogradGradGo(dst, stride, g0, g1, c)
}

// WinogradKernelT sets dst[3i+j] to (Gᵀ S G)[i][j] for the 4x4 matrix S
// whose entry (a, b) is src[4a+b], element by element over rows of equal
// length: the adjoint of WinogradKernel.
func WinogradKernelT[T Float](dst *[9][]T, src *[16][]T) {
	if _, ok := f32(dst[0]); ok {
		impl.winogradKT(any(dst).(*[9][]float32), any(src).(*[16][]float32))
		clearUpper()
		return
	}
	winogradKernelTGo(dst, src)
}

// The pooling kernels on a row of 2x2 windows: n = len(pos)/c windows side
// by side, the top pixels of window j at z0[2jc : 2jc+2c] and the bottom
// ones at z1[2jc : 2jc+2c] (two image rows of c channels per pixel).

// BackPoolRow sets the image rows o0 and o1 to z*v + w per channel (c =
// len(u) channels) and adds g*u at each window's position pos (0..3,
// dy*2+dx): Affine followed by AddAtScaled, in one pass.
func BackPoolRow[T Float](o0, o1, z0, z1, pos, g, u, v, w []T) {
	if len(u) == 0 {
		return
	}
	if d, ok := f32(o0); ok {
		impl.backPoolRow(d, as32(o1), as32(z0), as32(z1), as32(pos), as32(g), as32(u), as32(v), as32(w))
		clearUpper()
		return
	}
	backPoolRowGo(o0, o1, z0, z1, pos, g, u, v, w)
}

// GatherAffineRow sets dst (a row of pooled values, len(a) channels) to
// the window entries at pos times a plus c per channel: Gather followed by
// Affine, in one pass.
func GatherAffineRow[T Float](dst, pos, z0, z1, a, c []T) {
	if len(a) == 0 {
		return
	}
	if d, ok := f32(dst); ok {
		impl.gatherAffRow(d, as32(pos), as32(z0), as32(z1), as32(a), as32(c))
		clearUpper()
		return
	}
	gatherAffineRowGo(dst, pos, z0, z1, a, c)
}

// PoolArgRow sets dst (a row of pooled values, len(s) channels) to the
// position 0..3 of the first maximum of s times each window's four entries:
// PoolArgScaled on a row of windows.
func PoolArgRow[T Float](dst, z0, z1, s []T) {
	if len(s) == 0 {
		return
	}
	if d, ok := f32(dst); ok {
		impl.poolArgRow(d, as32(z0), as32(z1), as32(s))
		clearUpper()
		return
	}
	poolArgRowGo(dst, z0, z1, s)
}

// GatherDotRow adds, per channel i (len(mu) channels), the sum over the
// row's windows of g*(z-mu) with z the window's entry at pos to acc[i], in
// float64 (each product in T), window after window: Gather followed by
// DotCentered, in one pass.
func GatherDotRow[T Float](acc []float64, pos, z0, z1, g, mu []T) {
	if len(mu) == 0 {
		return
	}
	if p, ok := f32(pos); ok {
		impl.gatherDotRow(acc, p, as32(z0), as32(z1), as32(g), as32(mu))
		clearUpper()
		return
	}
	gatherDotRowGo(acc, pos, z0, z1, g, mu)
}

// MaxAffineRow sets dst (a row of pooled values, len(a) channels) to x*a +
// c per channel, x the window's entry at the first maximum of a times its
// four entries: GatherAffineRow at PoolArgRow's positions, in one pass and
// with the same values.
func MaxAffineRow[T Float](dst, z0, z1, a, c []T) {
	if len(a) == 0 {
		return
	}
	if d, ok := f32(dst); ok {
		impl.maxAffRow(d, as32(z0), as32(z1), as32(a), as32(c))
		clearUpper()
		return
	}
	maxAffineRowGo(dst, z0, z1, a, c)
}

// ExtremeRow sets dst (a row of pooled values, len(s) channels) to every
// 2x2 window's maximum in the channels where s >= 0 and its minimum where
// s < 0, z0 and z1 the windows' top and bottom rows. Affine(dst, dst, s,
// c) then gives MaxAffineRow(dst, z0, z1, s, c), the affine map being
// monotone (up to one rounding where two entries of a window have the
// same rounded product with s), and any scale of the same signs may
// choose: a batch norm's signs are gamma's, known before its statistics.
func ExtremeRow[T Float](dst, z0, z1, s []T) {
	if len(s) == 0 {
		return
	}
	if d, ok := f32(dst); ok {
		impl.extremeRow(d, as32(z0), as32(z1), as32(s))
		clearUpper()
		return
	}
	extremeRowGo(dst, z0, z1, s)
}

// BackPoolMaxRow is BackPoolRow at PoolArgRow(z0, z1, u)'s positions,
// found in the same pass (len(g)/len(u) windows).
func BackPoolMaxRow[T Float](o0, o1, z0, z1, g, u, v, w []T) {
	if len(u) == 0 {
		return
	}
	if d, ok := f32(o0); ok {
		impl.backPoolMax(d, as32(o1), as32(z0), as32(z1), as32(g), as32(u), as32(v), as32(w))
		clearUpper()
		return
	}
	backPoolMaxRowGo(o0, o1, z0, z1, g, u, v, w)
}

// GatherDotMaxRow is GatherDotRow at PoolArgRow(z0, z1, s)'s positions,
// found in the same pass (len(g)/len(mu) windows).
func GatherDotMaxRow[T Float](acc []float64, z0, z1, g, s, mu []T) {
	if len(mu) == 0 {
		return
	}
	if p, ok := f32(g); ok {
		impl.gatherDotMax(acc, as32(z0), as32(z1), p, as32(s), as32(mu))
		clearUpper()
		return
	}
	gatherDotMaxRowGo(acc, z0, z1, g, s, mu)
}

// Conv1 sets dst (h x w pixels of f = len(k)/9 channels, row-major) to the
// 3x3 convolution of a one-channel image, given as pad, the image with a
// border of zeros ((h+2) x (w+2) values): pixel (y, x) of dst is the sum
// over kh, kw of pad[(y+kh)*(w+2)+x+kw] * k[(3*kh+kw)*f:][:f], the nine
// products added in that order (that of im2col's columns and of the
// BLAS's sum over them), from the first product on.
func Conv1[T Float](dst, pad []T, h, w int, k []T) {
	if len(k) < 9 {
		return
	}
	if d, ok := f32(dst); ok {
		impl.conv1(d, as32(pad), h, w, as32(k))
		clearUpper()
		return
	}
	conv1Go(dst, pad, h, w, k)
}

// ConvPool1 sets dst, a row of len(dst)/len(a) pooled pixels of len(a)
// channels, to ReLU(MaxAffineRow) of the two rows of Conv1(pad, 2, w, k)
// (pad from the windows' first padded row on, four rows of w+2 values):
// the CNN's first block, convolution, batch norm's affine map, 2x2 max
// pooling and ReLU, a row of windows at a time, with the same values.
// z is scratch of 2*w*len(a) values, which the SIMD kernels need only
// where they cannot keep a window's convolution in registers.
func ConvPool1[T Float](dst, z, pad []T, w int, k, a, c []T) {
	if len(a) == 0 {
		return
	}
	if d, ok := f32(dst); ok {
		impl.convPool1(d, as32(z), as32(pad), w, as32(k), as32(a), as32(c))
		clearUpper()
		return
	}
	convPool1Go(dst, z, pad, w, k, a, c)
}

// ConvBack1 adds BlockBackRow's sums for a row of len(g)/len(s) windows to
// acc, with the windows' two rows of z = Conv1(pad, 2, w, k) computed
// here (pad from the windows' first padded row on, four rows of w+2
// values): the CNN's first block's backward pass a row of windows at a
// time, with the same values. z is scratch of 2*w*len(s) values, which
// the SIMD kernels need only where they cannot keep z in registers.
func ConvBack1[T Float](acc []float64, z, pad []T, w int, k, out, g, s, mu []T) {
	if len(s) == 0 {
		return
	}
	if p, ok := f32(pad); ok {
		impl.convBack1(acc, as32(z), p, w, as32(k), as32(out), as32(g), as32(s), as32(mu))
		clearUpper()
		return
	}
	convBack1Go(acc, z, pad, w, k, out, g, s, mu)
}

// PatchMoments adds, over the h x w pixels of a one-channel image given as
// pad (the image with a border of zeros, (h+2) x (w+2) values, as for
// Conv1, in float64), the nine values of each pixel's 3x3 patch,
// v[3*kh+kw] = pad[(y+kh)*(w+2)+x+kw], to s and their products v[i]*v[j]
// to m[9*i+j]. From them the mean and variance of every channel of the
// image's 3x3 convolution follow without computing it (the sums of z = k.v
// and of z*z).
func PatchMoments(s *[9]float64, m *[81]float64, pad []float64, h, w int) {
	impl.patchMoments(s, m, pad, h, w)
	clearUpper()
}

// BlockBackRow adds the sums of the gradient of a CNN block with one input
// channel over a row of n = len(g)/len(s) pooling windows to acc (11 rows
// of f = len(s) channels, in float64). z0 and z1 are the windows' top and
// bottom rows of z, the block's convolution (2n pixels of f channels each,
// as for MaxAffineRow), pad the four rows of the zero-padded image (pw
// values apart, at least 2n+2 each) whose 3x3 patches are those of the
// windows' pixels, out and g the block's output and its gradient at the
// windows, s and mu per channel the scale gamma*inv that chooses the
// windows' maxima and the mean of z. With q the position of the first
// maximum of s times the window's entries and gp = g where out > 0, 0
// elsewhere, it adds gp times the value i of q's patch to acc[i*f+ch] (i =
// 3*kh+kw < 9), gp*(z at q - mu) to acc[9*f+ch] and gp to acc[10*f+ch]:
// the sums from which the block's kernel, scale and shift gradients follow
// without the gradient at every pixel (graph's convBlockBack).
func BlockBackRow[T Float](acc []float64, z0, z1, pad []T, pw int, out, g, s, mu []T) {
	if len(s) == 0 {
		return
	}
	if p, ok := f32(pad); ok {
		impl.blockBackRow(acc, as32(z0), as32(z1), p, pw, as32(out), as32(g), as32(s), as32(mu))
		clearUpper()
		return
	}
	blockBackRowGo(acc, z0, z1, pad, pw, out, g, s, mu)
}
