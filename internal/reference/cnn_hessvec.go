package reference

import (
	"math"

	"github.com/trmaml/trmaml/metalearn"
)

// HessVec returns H v, the Hessian of Loss(w; x, y) with respect to w applied
// to the direction v (both in the flat parameter layout), exactly up to
// rounding. It differentiates the forward and backward pass of LossGrad in
// the direction v (Pearlmutter's R-operator: every quantity q of LossGrad gets
// a tangent Rq = d/dt q(w + t v) at t = 0, and R of the gradient is H v).
// ReLU and max-pool are piecewise linear, so their tangents reuse the masks
// and selections of the forward pass.
func (m CNN) HessVec(w, x, y, v []float64) []float64 {
	n := len(x) / m.inDim()
	blocks, linW, _ := m.params(w)
	rBlocks, rLinW, rLinB := m.params(v)
	F := m.Filters
	logits, feats, trace := m.forward(w, x, n)

	// Tangent of the forward pass; the images do not depend on w.
	rin := make([][]float64, m.Blocks) // R of each block's input
	rxhat := make([][]float64, m.Blocks)
	rinv := make([][]float64, m.Blocks)
	ract := make([]float64, len(x))
	for l, t := range trace {
		b, rb := blocks[l], rBlocks[l]
		rin[l] = ract
		// conv is bilinear: R z = conv(R in, K, R bias) + conv(in, R K, 0).
		rz := conv3x3(ract, n, t.h, t.w, t.cin, b.kernel, rb.bias, F)
		addTo(rz, conv3x3(t.in, n, t.h, t.w, t.cin, rb.kernel, make([]float64, F), F))
		var rbn []float64
		rbn, rxhat[l], rinv[l] = batchNormTangent(rz, t.xhat, t.inv, n*t.h*t.w, F, b.gamma, rb.gamma, rb.beta)
		rr := reluBackward(t.bn, rbn) // R relu(u) = R u where u > 0
		ract = make([]float64, len(t.poolFrom))
		for k, at := range t.poolFrom {
			ract[k] = rr[at]
		}
	}
	rfeats := ract
	d := m.featureDim()
	rlogits := make([]float64, n*m.Ways)
	for p := 0; p < n; p++ {
		for j := 0; j < m.Ways; j++ {
			rs := rLinB[j]
			for i := 0; i < d; i++ {
				rs += rfeats[p*d+i]*linW[i*m.Ways+j] + feats[p*d+i]*rLinW[i*m.Ways+j]
			}
			rlogits[p*m.Ways+j] = rs
		}
	}
	_, dlogits := softmaxCrossEntropy(logits, y, n, m.Ways)
	rdlogits := softmaxCrossEntropyTangent(logits, rlogits, y, n, m.Ways)

	// Backward pass with tangents: hv receives R of the gradient.
	hv := make([]float64, len(w))
	hBlocks, hLinW, hLinB := m.params(hv)
	dact, rdact := make([]float64, n*d), make([]float64, n*d)
	for p := 0; p < n; p++ {
		for j := 0; j < m.Ways; j++ {
			g, rg := dlogits[p*m.Ways+j], rdlogits[p*m.Ways+j]
			hLinB[j] += rg
			for i := 0; i < d; i++ {
				hLinW[i*m.Ways+j] += rfeats[p*d+i]*g + feats[p*d+i]*rg
				dact[p*d+i] += linW[i*m.Ways+j] * g
				rdact[p*d+i] += rLinW[i*m.Ways+j]*g + linW[i*m.Ways+j]*rg
			}
		}
	}
	for l := m.Blocks - 1; l >= 0; l-- {
		t, b, rb, hb := trace[l], blocks[l], rBlocks[l], hBlocks[l]
		mRows := n * t.h * t.w
		du := reluBackward(t.bn, maxPool2Backward(dact, t.poolFrom, t.reluSize))
		rdu := reluBackward(t.bn, maxPool2Backward(rdact, t.poolFrom, t.reluSize))
		dz, rdz := batchNormBackwardTangent(du, rdu, t.xhat, rxhat[l], t.inv, rinv[l], mRows, F, b.gamma, rb.gamma, hb.gamma, hb.beta)
		// conv's backward is linear in each of (in, K, dz): R of its outputs
		// is the sum of three backward passes with one argument replaced by
		// its tangent; the scratch buffers take the terms that do not belong.
		scratchK, scratchB := make([]float64, len(hb.kernel)), make([]float64, F)
		var din, rdin, scratchIn []float64
		if l > 0 {
			din, rdin, scratchIn = make([]float64, len(t.in)), make([]float64, len(t.in)), make([]float64, len(t.in))
		}
		conv3x3Backward(t.in, n, t.h, t.w, t.cin, b.kernel, F, dz, scratchK, scratchB, din)
		conv3x3Backward(rin[l], n, t.h, t.w, t.cin, b.kernel, F, dz, hb.kernel, scratchB, scratchIn)
		conv3x3Backward(t.in, n, t.h, t.w, t.cin, rb.kernel, F, dz, scratchK, scratchB, rdin)
		conv3x3Backward(t.in, n, t.h, t.w, t.cin, b.kernel, F, rdz, hb.kernel, hb.bias, rdin)
		dact, rdact = din, rdin
	}
	return hv
}

// addTo adds b to a elementwise.
func addTo(a, b []float64) {
	for k := range a {
		a[k] += b[k]
	}
}

// batchNormTangent is the tangent of batchNorm: given rz = R z, the values
// xhat and invStd of the forward pass and the tangents rgamma, rbeta of the
// scale and shift, it returns R out, R xhat and R invStd. Per channel, with
// sums over the m rows and z - mean = xhat/invStd,
//
//	R mean = sum(rz)/m,  R var = 2 sum((z-mean) rz)/m,  R invStd = -invStd^3 R var / 2,
//	R xhat = (rz - R mean) invStd + (z - mean) R invStd,
//	R out = rgamma xhat + gamma R xhat + rbeta.
func batchNormTangent(rz, xhat, invStd []float64, m, f int, gamma, rgamma, rbeta []float64) (rout, rxhat, rinv []float64) {
	rmean, rvar := make([]float64, f), make([]float64, f)
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			k := r*f + o
			rmean[o] += rz[k] / float64(m)
			rvar[o] += 2 * xhat[k] / invStd[o] * rz[k] / float64(m)
		}
	}
	rinv = make([]float64, f)
	for o := range rinv {
		rinv[o] = -0.5 * math.Pow(invStd[o], 3) * rvar[o]
	}
	rout, rxhat = make([]float64, len(rz)), make([]float64, len(rz))
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			k := r*f + o
			rxhat[k] = (rz[k]-rmean[o])*invStd[o] + xhat[k]/invStd[o]*rinv[o]
			rout[k] = rgamma[o]*xhat[k] + gamma[o]*rxhat[k] + rbeta[o]
		}
	}
	return rout, rxhat, rinv
}

// batchNormBackwardTangent is batchNormBackward together with its tangent.
// Given dout and R dout, it returns dz and R dz and adds R dgamma and R dbeta
// to rdgamma and rdbeta. With dx = gamma dout and the sums over the m rows,
//
//	dz   = invStd/m (m dx - sum dx - xhat sum(dx xhat)),
//	R dz = R invStd/m (m dx - sum dx - xhat sum(dx xhat))
//	     + invStd/m (m R dx - sum R dx - R xhat sum(dx xhat) - xhat sum(R dx xhat + dx R xhat)),
//
// where R dx = rgamma dout + gamma R dout.
func batchNormBackwardTangent(dout, rdout, xhat, rxhat, invStd, rinv []float64, m, f int, gamma, rgamma, rdgamma, rdbeta []float64) (dz, rdz []float64) {
	sumD, sumDX := make([]float64, f), make([]float64, f)   // sum dx, sum dx xhat
	sumRD, sumRDX := make([]float64, f), make([]float64, f) // sum R dx, sum (R dx xhat + dx R xhat)
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			k := r*f + o
			rdgamma[o] += rdout[k]*xhat[k] + dout[k]*rxhat[k]
			rdbeta[o] += rdout[k]
			dx := gamma[o] * dout[k]
			rdx := rgamma[o]*dout[k] + gamma[o]*rdout[k]
			sumD[o] += dx
			sumDX[o] += dx * xhat[k]
			sumRD[o] += rdx
			sumRDX[o] += rdx*xhat[k] + dx*rxhat[k]
		}
	}
	dz, rdz = make([]float64, len(dout)), make([]float64, len(dout))
	fm := float64(m)
	for r := 0; r < m; r++ {
		for o := 0; o < f; o++ {
			k := r*f + o
			dx := gamma[o] * dout[k]
			rdx := rgamma[o]*dout[k] + gamma[o]*rdout[k]
			inner := fm*dx - sumD[o] - xhat[k]*sumDX[o]
			dz[k] = invStd[o] / fm * inner
			rdz[k] = rinv[o]/fm*inner + invStd[o]/fm*(fm*rdx-sumRD[o]-rxhat[k]*sumDX[o]-xhat[k]*sumRDX[o])
		}
	}
	return dz, rdz
}

// softmaxCrossEntropyTangent is the tangent of softmaxCrossEntropy's
// gradient dlogits = (softmax*mass - y)/n in the direction rlogits: per row,
// with s = softmax(logits) and mass = sum_j y[j],
//
//	R dlogits[j] = mass/n * s[j] * (rlogits[j] - sum_k s[k] rlogits[k]).
func softmaxCrossEntropyTangent(logits, rlogits, y []float64, n, classes int) []float64 {
	rd := make([]float64, len(logits))
	s := make([]float64, classes)
	for p := 0; p < n; p++ {
		row := logits[p*classes : (p+1)*classes]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		sum, mass := 0.0, 0.0
		for j, v := range row {
			s[j] = math.Exp(v - mx)
			sum += s[j]
			mass += y[p*classes+j]
		}
		mean := 0.0
		for j := range s {
			s[j] /= sum
			mean += s[j] * rlogits[p*classes+j]
		}
		for j := range s {
			rd[p*classes+j] = mass / float64(n) * s[j] * (rlogits[p*classes+j] - mean)
		}
	}
	return rd
}

// CNNMetaGrad is the exact (second-order) MAML meta-gradient of
// CNNMetaObjective. Per instance, with the inner iterates theta_0 = w,
// theta_{s+1} = theta_s - alpha P grad L_S(theta_s) (P keeps the adapted
// parameters), the chain rule through the inner steps gives
//
//	g_S = grad L_Q(theta_S),  g_s = g_{s+1} - alpha H_S(theta_s) P g_{s+1},
//
// with H_S the support-loss Hessian (symmetric, applied by HessVec); the
// meta-gradient is sum_t weights[t] g_0.
func CNNMetaGrad(m CNN, w []float64, b *metalearn.Batch, weights []float64, alpha float64, steps int) []float64 {
	grad := make([]float64, len(w))
	mask := m.Adapted()
	for t := 0; t < b.Tasks; t++ {
		sx, sy, qx, qy := b.Row(t)
		path := m.adaptPath(w, sx, sy, alpha, steps)
		_, g := m.LossGrad(path[steps], qx, qy)
		for s := steps - 1; s >= 0; s-- {
			pg := make([]float64, len(g))
			for k, a := range mask {
				if a {
					pg[k] = g[k]
				}
			}
			hv := m.HessVec(path[s], sx, sy, pg)
			for k := range g {
				g[k] -= alpha * hv[k]
			}
		}
		for k := range grad {
			grad[k] += weights[t] * g[k]
		}
	}
	return grad
}
