package reference

import "math"

// The layers of the CNN, each a forward function and its hand-written
// backward (adjoint) beside it. Image batches are n x h x w x c arrays stored
// row-major in (point, h, w, c) order, the layout of graph.CNN; the
// index of element (p, y, x, ch) is ((p*h+y)*w+x)*c+ch.

// conv3x3 is the 3x3 convolution with stride 1 and zero padding 1 of n images
// of h x w x cin values with kernel (3, 3, cin, f) and bias (f):
//
//	z[p][y][x][o] = bias[o] + sum_{kh,kw,i} in[p][y+kh-1][x+kw-1][i] * kernel[kh][kw][i][o],
//
// where pixels outside the image count as zero. The output has h x w x f
// values per image.
func conv3x3(in []float64, n, h, w, cin int, kernel, bias []float64, f int) []float64 {
	z := make([]float64, n*h*w*f)
	for p := 0; p < n; p++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				out := z[((p*h+y)*w+x)*f : ((p*h+y)*w+x+1)*f]
				copy(out, bias)
				for kh := 0; kh < 3; kh++ {
					for kw := 0; kw < 3; kw++ {
						sy, sx := y+kh-1, x+kw-1
						if sy < 0 || sy >= h || sx < 0 || sx >= w {
							continue
						}
						for i := 0; i < cin; i++ {
							v := in[((p*h+sy)*w+sx)*cin+i]
							k := kernel[((kh*3+kw)*cin+i)*f : ((kh*3+kw)*cin+i+1)*f]
							for o := range out {
								out[o] += v * k[o]
							}
						}
					}
				}
			}
		}
	}
	return z
}

// conv3x3Backward takes dz = dLoss/dz of conv3x3 and adds dLoss/dkernel to
// dkernel and dLoss/dbias to dbias. If din is not nil it also adds
// dLoss/din (same shape as in) to it; the first block skips that, since the
// input images are not parameters.
func conv3x3Backward(in []float64, n, h, w, cin int, kernel []float64, f int, dz, dkernel, dbias, din []float64) {
	for p := 0; p < n; p++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				d := dz[((p*h+y)*w+x)*f : ((p*h+y)*w+x+1)*f]
				for o, v := range d {
					dbias[o] += v
				}
				for kh := 0; kh < 3; kh++ {
					for kw := 0; kw < 3; kw++ {
						sy, sx := y+kh-1, x+kw-1
						if sy < 0 || sy >= h || sx < 0 || sx >= w {
							continue
						}
						for i := 0; i < cin; i++ {
							at := ((p*h+sy)*w+sx)*cin + i
							row := ((kh*3+kw)*cin + i) * f
							for o, v := range d {
								dkernel[row+o] += in[at] * v
								if din != nil {
									din[at] += kernel[row+o] * v
								}
							}
						}
					}
				}
			}
		}
	}
}

// batchNorm normalises z, viewed as m rows of f channels (m = points x
// positions), with the statistics of z itself: per channel o the mean and the
// biased variance over the m rows, then
//
//	out = gamma[o] * (z - mean[o]) / sqrt(var[o] + eps) + beta[o].
//
// It also returns xhat = (z - mean) / sqrt(var + eps) and invStd =
// 1/sqrt(var + eps) per channel, which the backward pass needs.
func batchNorm(z []float64, m, f int, gamma, beta []float64, eps float64) (out, xhat, invStd []float64) {
	mean := make([]float64, f)
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			mean[o] += z[r*f+o]
		}
	}
	for o := range mean {
		mean[o] /= float64(m)
	}
	invStd = make([]float64, f)
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			d := z[r*f+o] - mean[o]
			invStd[o] += d * d
		}
	}
	for o := range invStd {
		invStd[o] = 1 / math.Sqrt(invStd[o]/float64(m)+eps)
	}
	out = make([]float64, len(z))
	xhat = make([]float64, len(z))
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			k := r*f + o
			xhat[k] = (z[k] - mean[o]) * invStd[o]
			out[k] = gamma[o]*xhat[k] + beta[o]
		}
	}
	return out, xhat, invStd
}

// batchNormBackward takes dout = dLoss/dout of batchNorm, adds dLoss/dgamma
// and dLoss/dbeta to dgamma and dbeta, and returns dLoss/dz. Since the mean
// and variance depend on every z, the full adjoint per channel is
//
//	dz = invStd/m * (m*dxhat - sum(dxhat) - xhat*sum(dxhat*xhat)),
//
// with dxhat = gamma*dout and the sums over the m rows.
func batchNormBackward(dout, xhat, invStd []float64, m, f int, gamma, dgamma, dbeta []float64) []float64 {
	sumD := make([]float64, f)  // sum over rows of dxhat
	sumDX := make([]float64, f) // sum over rows of dxhat*xhat
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			k := r*f + o
			dgamma[o] += dout[k] * xhat[k]
			dbeta[o] += dout[k]
			dx := gamma[o] * dout[k]
			sumD[o] += dx
			sumDX[o] += dx * xhat[k]
		}
	}
	dz := make([]float64, len(dout))
	fm := float64(m)
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			k := r*f + o
			dx := gamma[o] * dout[k]
			dz[k] = invStd[o] / fm * (fm*dx - sumD[o] - xhat[k]*sumDX[o])
		}
	}
	return dz
}

// relu returns max(u, 0) elementwise.
func relu(u []float64) []float64 {
	r := make([]float64, len(u))
	for k, v := range u {
		r[k] = math.Max(v, 0)
	}
	return r
}

// reluBackward returns dLoss/du given dr = dLoss/drelu(u): dr where u > 0 and
// 0 elsewhere (the derivative at the kink u = 0 is taken as 0).
func reluBackward(u, dr []float64) []float64 {
	du := make([]float64, len(u))
	for k, v := range u {
		if v > 0 {
			du[k] = dr[k]
		}
	}
	return du
}

// maxPool2 is the 2x2 max-pool with stride 2 of n images of h x w x c values.
// The output has h/2 x w/2 positions (floor: an odd last row or column is
// dropped). Ties go to the first maximum in window order (dy, dx) row-major.
// from[k] is the index in `in` of the element that output k copies.
func maxPool2(in []float64, n, h, w, c int) (out []float64, from []int) {
	ho, wo := h/2, w/2
	out = make([]float64, n*ho*wo*c)
	from = make([]int, len(out))
	for p := 0; p < n; p++ {
		for y := 0; y < ho; y++ {
			for x := 0; x < wo; x++ {
				for ch := 0; ch < c; ch++ {
					best := -1
					for dy := 0; dy < 2; dy++ {
						for dx := 0; dx < 2; dx++ {
							at := ((p*h+2*y+dy)*w+2*x+dx)*c + ch
							if best < 0 || in[at] > in[best] {
								best = at
							}
						}
					}
					k := ((p*ho+y)*wo+x)*c + ch
					out[k] = in[best]
					from[k] = best
				}
			}
		}
	}
	return out, from
}

// maxPool2Backward scatters dout = dLoss/dout of maxPool2 to the inputs
// listed in from and returns dLoss/din, which has length size (that of `in`).
func maxPool2Backward(dout []float64, from []int, size int) []float64 {
	din := make([]float64, size)
	for k, at := range from {
		din[at] += dout[k]
	}
	return din
}

// softmaxCrossEntropy is the mean over n rows of the cross-entropy between
// the target distribution y (one-hot rows for classification) and the softmax
// of the logits, both n x classes:
//
//	loss = 1/n sum_p sum_j y[p][j] * (logsumexp(logits[p]) - logits[p][j]).
//
// The log-sum-exp subtracts the row maximum mx first, so large logits do not
// overflow, and logsumexp - v is summed as (mx - v) + log(sum exp(l - mx)),
// so large logits lose no precision either. It also returns dLoss/dlogits = (softmax*sum_j y[p][j] - y) / n.
func softmaxCrossEntropy(logits, y []float64, n, classes int) (loss float64, dlogits []float64) {
	dlogits = make([]float64, len(logits))
	for p := 0; p < n; p++ {
		row := logits[p*classes : (p+1)*classes]
		target := y[p*classes : (p+1)*classes]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		sumExp := 0.0
		for _, v := range row {
			sumExp += math.Exp(v - mx)
		}
		logSum := math.Log(sumExp)
		mass := 0.0
		for j, v := range row {
			loss += target[j] * ((mx - v) + logSum) // logsumexp - v, without rounding mx + logSum first
			mass += target[j]
		}
		for j, v := range row {
			dlogits[p*classes+j] = (math.Exp(v-mx)/sumExp*mass - target[j]) / float64(n)
		}
	}
	return loss / float64(n), dlogits
}

// argmax is the index of the first largest element of v.
func argmax(v []float64) int {
	best := 0
	for j, x := range v {
		if x > v[best] {
			best = j
		}
	}
	return best
}
