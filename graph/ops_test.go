package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opRow is one op (or a small composition of ops) under the nested
// finite-difference harness: its input shapes, how to build it, optionally
// how to draw its inputs and a plain-Go computation of its value.
type opRow struct {
	name  string
	in    []tensor.Shape
	build func(in gorgonia.Nodes) (*gorgonia.Node, error)
	// draw returns the values of input i (default: away from 0, see awayFromZero).
	draw func(rng *rand.Rand, i, n int) []float64
	// value computes the op's output from its inputs in plain Go (optional).
	value func(in [][]float64) []float64
	// valueOnly: the op has no derivative by design; check the value only.
	valueOnly bool
	// positions: input 0 holds max-pool window positions, which a
	// composition (where the op's own flags are not the inputs') must not
	// differentiate.
	positions bool
}

// awayFromZero draws values with |x| in [0.5, 1.5], so that ReLU's and the
// mask's kinks stay far from every finite-difference stencil.
func awayFromZero(rng *rand.Rand, _, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Copysign(0.5+rng.Float64(), rng.NormFloat64())
	}
	return v
}

// positive draws values in [0.5, 2] (for logs and negative powers).
func positive(rng *rand.Rand, _, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 0.5 + 1.5*rng.Float64()
	}
	return v
}

// distinct draws a random permutation of well separated values, so that
// every max-pool window has a clear argmax.
func distinct(rng *rand.Rand, _, n int) []float64 {
	v := make([]float64, n)
	for i, p := range rng.Perm(n) {
		v[i] = 0.1*float64(p) - 0.05*float64(n) + 0.01*rng.Float64()
	}
	return v
}

// Reference values of the image ops, written naively for task-batched
// tensors of n images of h x w x c per task.
func naiveConv(x, k []float64, t, n, h, w, c, f int) []float64 {
	var out []float64
	for tt := 0; tt < t; tt++ {
		for i := 0; i < n; i++ {
			for y := 0; y < h; y++ {
				for xx := 0; xx < w; xx++ {
					for ff := 0; ff < f; ff++ {
						s := 0.0
						for kh := 0; kh < 3; kh++ {
							for kw := 0; kw < 3; kw++ {
								yy, xs := y+kh-1, xx+kw-1
								if yy < 0 || yy >= h || xs < 0 || xs >= w {
									continue
								}
								for ch := 0; ch < c; ch++ {
									s += x[(((tt*n+i)*h+yy)*w+xs)*c+ch] * k[((tt*9+kh*3+kw)*c+ch)*f+ff]
								}
							}
						}
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// naiveConvK is the kernels' gradient sum over pixels of patch(x) * g,
// (t, 9*c, f) in (kh, kw, c) order.
func naiveConvK(x, g []float64, t, n, h, w, c, f int) []float64 {
	out := make([]float64, t*9*c*f)
	for tt := 0; tt < t; tt++ {
		for i := 0; i < n; i++ {
			for y := 0; y < h; y++ {
				for xx := 0; xx < w; xx++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							yy, xs := y+kh-1, xx+kw-1
							if yy < 0 || yy >= h || xs < 0 || xs >= w {
								continue
							}
							for ch := 0; ch < c; ch++ {
								for ff := 0; ff < f; ff++ {
									out[((tt*9+kh*3+kw)*c+ch)*f+ff] += x[(((tt*n+i)*h+yy)*w+xs)*c+ch] * g[(((tt*n+i)*h+y)*w+xx)*f+ff]
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// naivePoolIndex returns the index in the images (imgs of h x w x c) of
// entry k of the pooled tensor at window position a (dy*2+dx).
func naivePoolIndex(k, a, h, w, c int) int {
	ch, win := k%c, k/c
	i, rest := win/((h/2)*(w/2)), win%((h/2)*(w/2))
	y, xx := rest/(w/2), rest%(w/2)
	return ((i*h+2*y+a/2)*w+2*xx+a%2)*c + ch
}

// naivePoolArg returns the first-maximum positions of y's n windows.
func naivePoolArg(y []float64, n, h, w, c int) []float64 {
	pos := make([]float64, n)
	for k := range pos {
		for a := 1; a < 4; a++ {
			if y[naivePoolIndex(k, a, h, w, c)] > y[naivePoolIndex(k, int(pos[k]), h, w, c)] {
				pos[k] = float64(a)
			}
		}
	}
	return pos
}

// zFirst draws distinct values for input 0 (activations without ties in
// a window) and values away from zero for the others.
func zFirst(rng *rand.Rand, i, n int) []float64 {
	if i == 0 {
		return distinct(rng, i, n)
	}
	return awayFromZero(rng, i, n)
}

// naiveGatherPool picks x at the pooled positions pos.
func naiveGatherPool(pos, x []float64, h, w, c int) []float64 {
	out := make([]float64, len(pos))
	for k, a := range pos {
		out[k] = x[naivePoolIndex(k, int(a), h, w, c)]
	}
	return out
}

// naiveScatterPool puts g at the pooled positions pos of zero images of n
// values.
func naiveScatterPool(pos, g []float64, n, h, w, c int) []float64 {
	out := make([]float64, n)
	for k, a := range pos {
		out[naivePoolIndex(k, int(a), h, w, c)] += g[k]
	}
	return out
}

// positionsFirst draws window positions 0..3 for input 0 and values away
// from zero for the others.
func positionsFirst(rng *rand.Rand, i, n int) []float64 {
	if i > 0 {
		return awayFromZero(rng, i, n)
	}
	v := make([]float64, n)
	for j := range v {
		v[j] = float64(rng.IntN(4))
	}
	return v
}

// naiveBlockBack is convBlockBack's value for in = x (t, n, h*w), k (t, 9,
// f), gamma (t, f), the output y and its gradient G (pooled): the
// gradients of the four ops' backward pass, (t, 11, f), from the gradient
// dz at every pixel.
func naiveBlockBack(in [][]float64, t, n, h, w, f int, eps float64) []float64 {
	x, k, gamma, y, g := in[0], in[1], in[2], in[3], in[4]
	m, pooled := n*h*w, len(y)
	ones, zeros := make([]float64, t*f), make([]float64, t*f)
	for i := range ones {
		ones[i] = 1
	}
	z := naiveConv(x, k, t, n, h, w, 1, f)
	pos := naivePoolArg(naiveBatchNorm(z, gamma, zeros, t, m, f, eps), pooled, h, w, f)
	zhat := naiveBatchNorm(z, ones, zeros, t, m, f, eps)
	gp := make([]float64, pooled)
	for i := range gp {
		if y[i] > 0 {
			gp[i] = g[i]
		}
	}
	gs := naiveScatterPool(pos, gp, len(z), h, w, f)
	a, c := make([]float64, t*f), make([]float64, t*f)
	for i, v := range gs {
		a[i/(m*f)*f+i%f] += v
		c[i/(m*f)*f+i%f] += v * zhat[i]
	}
	dz := naiveBNBack(z, gamma, gs, a, c, t, m, f, eps)
	out := make([]float64, t*11*f)
	for tt := 0; tt < t; tt++ {
		for p := 0; p < m; p++ {
			i, yy, xx := p/(h*w), p/w%h, p%w
			for kk := 0; kk < 9; kk++ {
				ys, xs := yy+kk/3-1, xx+kk%3-1
				if ys < 0 || ys >= h || xs < 0 || xs >= w {
					continue
				}
				for ch := 0; ch < f; ch++ {
					out[(tt*11+kk)*f+ch] += x[((tt*n+i)*h+ys)*w+xs] * dz[(tt*m+p)*f+ch]
				}
			}
		}
		copy(out[(tt*11+9)*f:], c[tt*f:(tt+1)*f])
		copy(out[(tt*11+10)*f:], a[tt*f:(tt+1)*f])
	}
	return out
}

// naiveBNBack is gamma*inv*(g - a/M - zhat*c/M) for z, g (t, m, f).
func naiveBNBack(z, gamma, g, a, c []float64, t, m, f int, eps float64) []float64 {
	ones := make([]float64, t*f)
	for i := range ones {
		ones[i] = 1
	}
	zhat := naiveBatchNorm(z, ones, make([]float64, t*f), t, m, f, eps)
	out := make([]float64, len(zhat))
	for i, v := range zhat {
		tt, ch := i/(m*f), i%f
		_, variance := naiveMoments(z, tt, ch, m, f)
		inv := 1 / math.Sqrt(variance+eps)
		out[i] = gamma[tt*f+ch] * inv * (g[i] - a[tt*f+ch]/float64(m) - v*c[tt*f+ch]/float64(m))
	}
	return out
}

func naiveMaxPool(x []float64, imgs, h, w, c int) []float64 {
	var out []float64
	for i := 0; i < imgs; i++ {
		for y := 0; y < h/2; y++ {
			for xx := 0; xx < w/2; xx++ {
				for ch := 0; ch < c; ch++ {
					m := math.Inf(-1)
					for dy := 0; dy < 2; dy++ {
						for dx := 0; dx < 2; dx++ {
							m = math.Max(m, x[((i*h+2*y+dy)*w+2*xx+dx)*c+ch])
						}
					}
					out = append(out, m)
				}
			}
		}
	}
	return out
}

func naiveBatchNorm(z, gamma, beta []float64, t, m, f int, eps float64) []float64 {
	out := make([]float64, len(z))
	for tt := 0; tt < t; tt++ {
		for ch := 0; ch < f; ch++ {
			mean, v := naiveMoments(z, tt, ch, m, f)
			for r := 0; r < m; r++ {
				i := (tt*m+r)*f + ch
				out[i] = gamma[tt*f+ch]*(z[i]-mean)/math.Sqrt(v+eps) + beta[tt*f+ch]
			}
		}
	}
	return out
}

func naiveSoftmaxCE(z, y []float64, t, n, c int) []float64 {
	out := make([]float64, t)
	for tt := 0; tt < t; tt++ {
		for p := 0; p < n; p++ {
			row := z[(tt*n+p)*c : (tt*n+p+1)*c]
			s := 0.0
			for _, v := range row {
				s += math.Exp(v)
			}
			for k, v := range row {
				out[tt] += y[(tt*n+p)*c+k] * (math.Log(s) - v) / float64(n)
			}
		}
	}
	return out
}

// withStats builds op(x, bnStats(x), y), the way the CNN uses the
// batch-norm ops.
func withStats(x *gorgonia.Node, eps float64, y *gorgonia.Node, op func(x, st, y *gorgonia.Node) (*gorgonia.Node, error)) (*gorgonia.Node, error) {
	st, err := bnStats(x, eps)
	if err != nil {
		return nil, err
	}
	return op(x, st, y)
}

// naiveMoments is the mean and biased variance of channel ch of task t of
// z (t, m, f).
func naiveMoments(z []float64, t, ch, m, f int) (mean, v float64) {
	for r := 0; r < m; r++ {
		mean += z[(t*m+r)*f+ch] / float64(m)
	}
	for r := 0; r < m; r++ {
		d := z[(t*m+r)*f+ch] - mean
		v += d * d / float64(m)
	}
	return mean, v
}

// thinValue is xᵀ y for x (2, 5) and y (2, 6).
func thinValue(x, y []float64) []float64 {
	return gtMatMul(transposeValue(x, 2, 5), y, 5, 2, 6)
}

// bmmBy5x6 is bmm(a, p, false, tb) in plain loops for 2 tasks of 3 rows
// of a by task t's 5 x 6 matrix p(t) (its transpose with tb).
func bmmBy5x6(a []float64, p func(t int) []float64, tb bool) []float64 {
	var out []float64
	for t := range 2 {
		if tb {
			out = append(out, gtMatMul(a[t*18:(t+1)*18], transposeValue(p(t), 5, 6), 3, 6, 5)...)
		} else {
			out = append(out, gtMatMul(a[t*15:(t+1)*15], p(t), 3, 5, 6)...)
		}
	}
	return out
}

// transposeValue returns the transpose of the r x c matrix x.
func transposeValue(x []float64, r, c int) []float64 {
	out := make([]float64, r*c)
	for i := range r {
		for j := range c {
			out[j*r+i] = x[i*c+j]
		}
	}
	return out
}

func one(f func(*gorgonia.Node) (*gorgonia.Node, error)) func(gorgonia.Nodes) (*gorgonia.Node, error) {
	return func(in gorgonia.Nodes) (*gorgonia.Node, error) { return f(in[0]) }
}

func two(f func(a, b *gorgonia.Node) (*gorgonia.Node, error)) func(gorgonia.Nodes) (*gorgonia.Node, error) {
	return func(in gorgonia.Nodes) (*gorgonia.Node, error) { return f(in[0], in[1]) }
}

// opRows lists every op of the package (alone or as the composition a model
// uses) with its input shapes.
var opRows = func() []opRow {
	var rows []opRow
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			a, b := tensor.Shape{2, 3, 4}, tensor.Shape{2, 4, 5}
			if ta {
				a = tensor.Shape{2, 4, 3}
			}
			if tb {
				b = tensor.Shape{2, 5, 4}
			}
			ta, tb := ta, tb
			rows = append(rows, opRow{name: fmt.Sprintf("bmm transA=%v transB=%v", ta, tb), in: []tensor.Shape{a, b},
				build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return bmm(in[0], in[1], ta, tb) }})
		}
	}
	rows = append(rows, opRow{name: "bmm large (Dgemm path)", in: []tensor.Shape{{2, 40, 41}, {2, 41, 40}},
		build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return bmm(in[0], in[1], false, false) },
		value: func(in [][]float64) []float64 {
			return append(gtMatMul(in[0][:40*41], in[1][:41*40], 40, 41, 40), gtMatMul(in[0][40*41:], in[1][41*40:], 40, 41, 40)...)
		}})
	rows = append(rows,
		opRow{name: "bmmSum", in: []tensor.Shape{{2, 3, 4}, {2, 3, 5}}, build: two(bmmSum)},
		// The gradient of the tiled w, a thin product (2 rows), reaches it
		// through sumOverTasks as a bmmSum, whose own gradient the
		// second-order check then takes.
		opRow{name: "bmm by a tiled weight", in: []tensor.Shape{{2, 2, 5}, {5, 6}},
			build: two(func(x, w *gorgonia.Node) (*gorgonia.Node, error) {
				wt, err := tile(w, 2)
				if err != nil {
					return nil, err
				}
				return bmm(x, wt, false, false)
			})})
	// Products by a thin product x[t]ᵀ y[t] (2 rows of 5 and 6 columns) and
	// its scaling, which bmm and scale compute through the 2 rows.
	thin := func(in gorgonia.Nodes) (*gorgonia.Node, error) { return bmm(in[1], in[2], true, false) }
	for _, tb := range []bool{false, true} {
		a := tensor.Shape{2, 3, 5}
		if tb {
			a = tensor.Shape{2, 3, 6}
		}
		tb := tb
		rows = append(rows, opRow{name: fmt.Sprintf("bmm by a thin product transB=%v", tb), in: []tensor.Shape{a, {2, 2, 5}, {2, 2, 6}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				p, err := thin(in)
				if err != nil {
					return nil, err
				}
				return bmm(in[0], p, false, tb)
			},
			value: func(in [][]float64) []float64 {
				return bmmBy5x6(in[0], func(t int) []float64 { return thinValue(in[1][t*10:(t+1)*10], in[2][t*12:(t+1)*12]) }, tb)
			}})
	}
	rows = append(rows, opRow{name: "scale of a thin product", in: []tensor.Shape{{2, 2, 5}, {2, 2, 6}},
		build: two(func(x, y *gorgonia.Node) (*gorgonia.Node, error) {
			p, err := bmm(x, y, true, false)
			if err != nil {
				return nil, err
			}
			return scale(p, -0.3)
		}),
		value: func(in [][]float64) []float64 {
			var out []float64
			for t := range 2 {
				for _, v := range thinValue(in[0][t*10:(t+1)*10], in[1][t*12:(t+1)*12]) {
					out = append(out, -0.3*v)
				}
			}
			return out
		}})
	// Adapted parameters x + k y after a step with a thin product y (2 rows
	// of 5 and 6 columns): on their own, and read by products, which bmm
	// distributes over the step; x per task and tiled.
	step := func(in gorgonia.Nodes, tiled bool) (*gorgonia.Node, error) { // in[1:]: x, a, b
		x := in[1]
		if tiled {
			var err error
			if x, err = tile(x, 2); err != nil {
				return nil, err
			}
		}
		p, err := bmm(in[2], in[3], true, false)
		if err != nil {
			return nil, err
		}
		if p, err = axpy(x, p, -0.3); err != nil {
			return nil, err
		}
		return markAdapted(p)
	}
	stepValue := func(in [][]float64, t int, tiled bool) []float64 {
		x := in[1]
		if !tiled {
			x = in[1][t*30:]
		}
		p := thinValue(in[2][t*10:(t+1)*10], in[3][t*12:(t+1)*12])
		for i := range p {
			p[i] = x[i] - 0.3*p[i]
		}
		return p
	}
	rows = append(rows, opRow{name: "adapted", in: []tensor.Shape{{2, 5, 6}, {2, 2, 5}, {2, 2, 6}},
		build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
			return step(append(gorgonia.Nodes{nil}, in...), false)
		},
		value: func(in [][]float64) []float64 {
			in = append([][]float64{nil}, in...)
			return append(stepValue(in, 0, false), stepValue(in, 1, false)...)
		}})
	for _, tiled := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			a, x := tensor.Shape{2, 3, 6}, tensor.Shape{2, 5, 6}
			if !tb {
				a = tensor.Shape{2, 3, 5}
			}
			if tiled {
				x = tensor.Shape{5, 6}
			}
			tiled, tb := tiled, tb
			rows = append(rows, opRow{name: fmt.Sprintf("bmm by an adapted step tiled=%v transB=%v", tiled, tb), in: []tensor.Shape{a, x, {2, 2, 5}, {2, 2, 6}},
				build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
					p, err := step(in, tiled)
					if err != nil {
						return nil, err
					}
					return bmm(in[0], p, false, tb)
				},
				value: func(in [][]float64) []float64 {
					return bmmBy5x6(in[0], func(t int) []float64 { return stepValue(in, t, tiled) }, tb)
				}})
		}
	}
	// Large enough for a goroutine per task (with GOMAXPROCS > 1), each
	// reading the tile's first copy.
	rows = append(rows, opRow{name: "bmm large by a tiled weight", in: []tensor.Shape{{2, 40, 41}, {41, 40}},
		build: two(func(x, w *gorgonia.Node) (*gorgonia.Node, error) {
			wt, err := tile(w, 2)
			if err != nil {
				return nil, err
			}
			return bmm(x, wt, false, false)
		}),
		value: func(in [][]float64) []float64 {
			return append(gtMatMul(in[0][:40*41], in[1], 40, 41, 40), gtMatMul(in[0][40*41:], in[1], 40, 41, 40)...)
		}})
	g28 := imageGeom{H: 5, W: 4, C: 2}
	pool55 := poolGeom{5, 5} // 5x5 images: the odd last row and column get no window
	rows = append(rows,
		opRow{name: "tile", in: []tensor.Shape{{3, 2}}, build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return tile(x, 3) })},
		opRow{name: "sumFirst", in: []tensor.Shape{{3, 2, 2}}, build: one(sumFirst)},
		opRow{name: "addBias", in: []tensor.Shape{{2, 3, 4}, {2, 4}}, build: two(addBias)},
		opRow{name: "mulMid", in: []tensor.Shape{{2, 3, 4}, {2, 4}}, build: two(mulMid)},
		opRow{name: "sumMid", in: []tensor.Shape{{2, 3, 4}}, build: one(sumMid)},
		opRow{name: "spreadMid", in: []tensor.Shape{{2, 4}}, build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return spreadMid(x, 3) })},
		opRow{name: "sumLast", in: []tensor.Shape{{2, 3, 4}}, build: one(sumLast)},
		opRow{name: "spreadLast", in: []tensor.Shape{{2, 3}}, build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return spreadLast(x, 4) })},
		opRow{name: "rowDot", in: []tensor.Shape{{2, 3, 2}, {2, 3, 2}}, build: two(func(a, b *gorgonia.Node) (*gorgonia.Node, error) { return rowDot(a, b, 0.7) })},
		opRow{name: "scaleRows", in: []tensor.Shape{{2, 3, 2}, {2}}, build: two(func(a, b *gorgonia.Node) (*gorgonia.Node, error) { return scaleRows(a, b, 0.7) })},
		opRow{name: "reshape", in: []tensor.Shape{{2, 6}}, build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return reshape(x, tensor.Shape{2, 3, 2}) })},
		opRow{name: "axpy", in: []tensor.Shape{{2, 3}, {2, 3}}, build: two(func(a, b *gorgonia.Node) (*gorgonia.Node, error) { return axpy(a, b, -0.3) })},
		opRow{name: "scale", in: []tensor.Shape{{2, 3}}, build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return scale(x, -1.5) })},
		opRow{name: "addN", in: []tensor.Shape{{2, 3}, {2, 3}, {2, 3}}, build: sumTerms},
		opRow{name: "relu", in: []tensor.Shape{{2, 3, 2}}, build: one(relu)},
		opRow{name: "mask", in: []tensor.Shape{{2, 3}, {2, 3}}, build: two(mask)},
		opRow{name: "mul", in: []tensor.Shape{{2, 3}, {2, 3}}, build: two(mul)},
		opRow{name: "pow(-1/2, eps)", in: []tensor.Shape{{2, 3}}, draw: positive,
			build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return pow(x, -0.5, 1e-5) })},
		opRow{name: "pow(1.5)", in: []tensor.Shape{{2, 3}}, draw: positive,
			build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return pow(x, 1.5, 0) })},
		opRow{name: "exp", in: []tensor.Shape{{2, 3}}, build: one(expNode)},
		opRow{name: "log", in: []tensor.Shape{{2, 3}}, draw: positive, build: one(logNode)},
		opRow{name: "conv", in: []tensor.Shape{{2, 2, 5 * 4 * 2}, {2, 18, 3}},
			build: two(func(x, k *gorgonia.Node) (*gorgonia.Node, error) { return conv(x, k, g28) }),
			value: func(in [][]float64) []float64 { return naiveConv(in[0], in[1], 2, 2, 5, 4, 2, 3) }},
		opRow{name: "conv of one channel", in: []tensor.Shape{{2, 2, 5 * 4}, {2, 9, 3}},
			build: two(func(x, k *gorgonia.Node) (*gorgonia.Node, error) { return conv(x, k, imageGeom{H: 5, W: 4, C: 1}) }),
			value: func(in [][]float64) []float64 { return naiveConv(in[0], in[1], 2, 2, 5, 4, 1, 3) }},
		opRow{name: "convT", in: []tensor.Shape{{2, 2 * 5 * 4, 3}, {2, 18, 3}},
			build: two(func(g, k *gorgonia.Node) (*gorgonia.Node, error) {
				return apply(convTKernel{convGeom{g28, tensor.Shape{2, 2, 5 * 4 * 2}}}, g, k)
			})},
		opRow{name: "convK", in: []tensor.Shape{{2, 2, 5 * 4 * 2}, {2, 2 * 5 * 4, 3}},
			build: two(func(x, g *gorgonia.Node) (*gorgonia.Node, error) {
				return apply(convKKernel{convGeom{g28, tensor.Shape{2, 2, 5 * 4 * 2}}}, x, g)
			})},
		opRow{name: "scatterPool", in: []tensor.Shape{{2, 2 * 2 * 2, 2}, {2, 2 * 2 * 2, 2}},
			draw: func(rng *rand.Rand, i, n int) []float64 {
				if i == 0 { // window positions
					v := make([]float64, n)
					for j := range v {
						v[j] = float64(rng.IntN(4))
					}
					return v
				}
				return awayFromZero(rng, i, n)
			},
			build: two(func(a, g *gorgonia.Node) (*gorgonia.Node, error) {
				return apply(scatterPoolKernel{poolGeom{4, 5}, tensor.Shape{2, 2 * 4 * 5, 2}}, a, g)
			})},
		// gatherPool on its own (4x5 images: the last column is in no
		// window), the positions drawn at random in 0..3.
		opRow{name: "gatherPool", in: []tensor.Shape{{2, 2 * 2 * 2, 2}, {2, 2 * 4 * 5, 2}}, draw: positionsFirst,
			build: two(func(a, v *gorgonia.Node) (*gorgonia.Node, error) {
				return apply(gatherPoolKernel{poolGeom{4, 5}}, a, v)
			}),
			value: func(in [][]float64) []float64 {
				pos, v := in[0], in[1]
				out := make([]float64, len(pos))
				for o := range out { // o = ((t*2+img)*2+y)*2+x)*2+c
					c, x, y, img, t := o%2, o/2%2, o/4%2, o/8%2, o/16
					dy, dx := int(pos[o])/2, int(pos[o])%2
					out[o] = v[(((t*2+img)*4+2*y+dy)*5+2*x+dx)*2+c]
				}
				return out
			}},
		opRow{name: "mulMid2", in: []tensor.Shape{{2, 3, 4}, {2, 4}, {2, 3, 4}, {2, 4}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return apply(mulMid2Kernel{}, in...) }},
		opRow{name: "sum of two mulMid terms (fused)", in: []tensor.Shape{{2, 3, 4}, {2, 4}, {2, 3, 4}, {2, 4}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				a, err := mulMid(in[0], in[1])
				if err != nil {
					return nil, err
				}
				b, err := mulMid(in[2], in[3])
				if err != nil {
					return nil, err
				}
				return sumTerms(gorgonia.Nodes{a, in[0], b})
			}},
		opRow{name: "sumMidProd", in: []tensor.Shape{{2, 3, 4}, {2, 3, 4}}, build: two(sumMidProd)},
		opRow{name: "bnScale", in: []tensor.Shape{{2, 5, 3}, {2, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return withStats(in[0], 1e-3, in[1], bnScale) },
			value: func(in [][]float64) []float64 { return naiveBatchNorm(in[0], in[1], make([]float64, 6), 2, 5, 3, 1e-3) }},
		opRow{name: "bnDot", in: []tensor.Shape{{2, 5, 3}, {2, 5, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return withStats(in[0], 1e-3, in[1], bnDot) },
			value: func(in [][]float64) []float64 {
				zhat := naiveBatchNorm(in[0], []float64{1, 1, 1, 1, 1, 1}, make([]float64, 6), 2, 5, 3, 1e-3)
				out := make([]float64, 6)
				for i, v := range zhat {
					out[(i/15)*3+i%3] += v * in[1][i]
				}
				return out
			}},
		opRow{name: "bnInv", in: []tensor.Shape{{2, 5, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				return bnInv(in[0], st)
			}},
		opRow{name: "bnBack", in: []tensor.Shape{{2, 5, 3}, {2, 3}, {2, 5, 3}, {2, 3}, {2, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				return bnBack(in[0], st, in[1], in[2], in[3], in[4])
			},
			value: func(in [][]float64) []float64 {
				zhat := naiveBatchNorm(in[0], []float64{1, 1, 1, 1, 1, 1}, make([]float64, 6), 2, 5, 3, 1e-3)
				out := make([]float64, len(zhat))
				for i, v := range zhat {
					c := (i/15)*3 + i%3
					_, variance := naiveMoments(in[0], i/15, i%3, 5, 3)
					inv := 1 / math.Sqrt(variance+1e-3)
					out[i] = in[1][c] * inv * (in[2][i] - in[3][c]/5 - v*in[4][c]/5)
				}
				return out
			}},
		opRow{name: "maxPool of batchNorm (fused)", in: []tensor.Shape{{2, 2 * 5 * 5, 3}, {2, 3}, {2, 3}, {2, 3}},
			draw: func(rng *rand.Rand, i, n int) []float64 {
				if i == 0 {
					return distinct(rng, i, n)
				}
				return awayFromZero(rng, i, n) // gamma of both signs
			},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				a, err := poolArgBN(in[0], st, in[2], pool55)
				if err != nil {
					return nil, err
				}
				return gatherBN(a, in[0], st, in[1], in[2], in[3], pool55)
			},
			value: func(in [][]float64) []float64 {
				z := append([]float64(nil), in[0]...)
				for i := range z {
					z[i] += in[1][(i/150)*3+i%3]
				}
				return naiveMaxPool(naiveBatchNorm(z, in[2], in[3], 2, 50, 3, 1e-3), 4, 5, 5, 3)
			}},
		opRow{name: "maxPoolBN (one op)", in: []tensor.Shape{{2, 2 * 5 * 5, 3}, {2, 3}, {2, 3}, {2, 3}},
			draw: func(rng *rand.Rand, i, n int) []float64 {
				if i == 0 {
					return distinct(rng, i, n)
				}
				return awayFromZero(rng, i, n) // gamma of both signs
			},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				return maxPoolBN(in[0], st, in[1], in[2], in[3], pool55)
			},
			value: func(in [][]float64) []float64 {
				z := append([]float64(nil), in[0]...)
				for i := range z {
					z[i] += in[1][(i/150)*3+i%3]
				}
				return naiveMaxPool(naiveBatchNorm(z, in[2], in[3], 2, 50, 3, 1e-3), 4, 5, 5, 3)
			}},
		opRow{name: "maxPoolBNReLU", in: []tensor.Shape{{2, 2 * 5 * 5, 3}, {2, 3}, {2, 3}, {2, 3}}, draw: zFirst, // gamma of both signs
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				return maxPoolBNReLU(in[0], st, in[1], in[2], in[3], pool55)
			},
			value: func(in [][]float64) []float64 {
				y := naiveMaxPool(naiveBatchNorm(in[0], in[2], in[3], 2, 50, 3, 1e-3), 4, 5, 5, 3)
				for i, v := range y {
					y[i] = max(v, 0)
				}
				return y
			}},
		opRow{name: "convBlock (a CNN block in one op)", in: []tensor.Shape{{2, 3, 4 * 4}, {2, 9, 3}, {2, 3}, {2, 3}, {2, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				return convBlock(in[0], in[1], in[2], in[3], in[4], imageGeom{H: 4, W: 4, C: 1}, 1e-3)
			},
			value: func(in [][]float64) []float64 {
				z := naiveConv(in[0], in[1], 2, 3, 4, 4, 1, 3)
				for i := range z {
					z[i] += in[2][(i/144)*3+i%3]
				}
				y := naiveMaxPool(naiveBatchNorm(z, in[3], in[4], 2, 48, 3, 1e-3), 6, 4, 4, 3)
				for i, v := range y {
					y[i] = max(v, 0)
				}
				return y
			}},
		opRow{name: "convBlockBack (a CNN block's gradient in one op)", in: []tensor.Shape{{2, 3, 4 * 4}, {2, 9, 3}, {2, 3}, {2, 3 * 2 * 2, 3}, {2, 3 * 2 * 2, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				return apply(convBlockBackKernel{convGeom{imageGeom{H: 4, W: 4, C: 1}, in[0].Shape().Clone()}, 1e-3}, in...)
			},
			value: func(in [][]float64) []float64 { return naiveBlockBack(in, 2, 3, 4, 4, 3, 1e-3) }},
		opRow{name: "convBlockBack of 5x7 images", in: []tensor.Shape{{2, 2, 5 * 7}, {2, 9, 3}, {2, 3}, {2, 2 * 2 * 3, 3}, {2, 2 * 2 * 3, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				return apply(convBlockBackKernel{convGeom{imageGeom{H: 5, W: 7, C: 1}, in[0].Shape().Clone()}, 1e-3}, in...)
			},
			value: func(in [][]float64) []float64 { return naiveBlockBack(in, 2, 2, 5, 7, 3, 1e-3) }},
		opRow{name: "midRows", in: []tensor.Shape{{2, 5, 3}},
			build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return midRows(x, 1, 3) }),
			value: func(in [][]float64) []float64 { return append(slices.Clone(in[0][3:12]), in[0][18:27]...) }},
		opRow{name: "padMid", in: []tensor.Shape{{2, 2, 3}},
			build: one(func(x *gorgonia.Node) (*gorgonia.Node, error) { return apply(midRowsKernel{1, 2, 5, true}, x) }),
			value: func(in [][]float64) []float64 {
				out := make([]float64, 30)
				copy(out[3:], in[0][:6])
				copy(out[18:], in[0][6:])
				return out
			}},
		opRow{name: "bnDotMax", in: []tensor.Shape{{2, 2 * 5 * 5, 3}, {2, 3}, {2, 2 * 2 * 2, 3}}, draw: zFirst,
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				return apply(bnDotMaxKernel{pool55}, in[0], st, in[1], in[2])
			},
			value: func(in [][]float64) []float64 {
				pos := naivePoolArg(naiveBatchNorm(in[0], in[1], make([]float64, 6), 2, 50, 3, 1e-3), 48, 5, 5, 3)
				zhat := naiveBatchNorm(in[0], []float64{1, 1, 1, 1, 1, 1}, make([]float64, 6), 2, 50, 3, 1e-3)
				g := naiveScatterPool(pos, in[2], len(zhat), 5, 5, 3)
				out := make([]float64, 6)
				for i, v := range zhat {
					out[(i/150)*3+i%3] += v * g[i]
				}
				return out
			}},
		opRow{name: "bnBackMax", in: []tensor.Shape{{2, 2 * 5 * 5, 3}, {2, 3}, {2, 2 * 2 * 2, 3}, {2, 3}, {2, 3}}, draw: zFirst,
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				return apply(bnBackMaxKernel{pool55}, in[0], st, in[1], in[2], in[3], in[4])
			},
			value: func(in [][]float64) []float64 {
				pos := naivePoolArg(naiveBatchNorm(in[0], in[1], make([]float64, 6), 2, 50, 3, 1e-3), 48, 5, 5, 3)
				g := naiveScatterPool(pos, in[2], len(in[0]), 5, 5, 3)
				return naiveBNBack(in[0], in[1], g, in[3], in[4], 2, 50, 3, 1e-3)
			}},
		opRow{name: "bnBackMax of 4x6 images (one pass)", in: []tensor.Shape{{2, 2 * 4 * 6, 3}, {2, 3}, {2, 2 * 2 * 3, 3}, {2, 3}, {2, 3}}, draw: zFirst,
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[0], 1e-3)
				if err != nil {
					return nil, err
				}
				return apply(bnBackMaxKernel{poolGeom{4, 6}}, in[0], st, in[1], in[2], in[3], in[4])
			},
			value: func(in [][]float64) []float64 {
				pos := naivePoolArg(naiveBatchNorm(in[0], in[1], make([]float64, 6), 2, 48, 3, 1e-3), 72, 4, 6, 3)
				g := naiveScatterPool(pos, in[2], len(in[0]), 4, 6, 3)
				return naiveBNBack(in[0], in[1], g, in[3], in[4], 2, 48, 3, 1e-3)
			}},
		opRow{name: "convKBNBack", in: []tensor.Shape{{2, 2, 4 * 6 * 2}, {2, 2 * 4 * 6, 3}, {2, 3}, {2, 2 * 2 * 3, 3}, {2, 3}, {2, 3}},
			draw: func(rng *rand.Rand, i, n int) []float64 {
				if i == 1 { // activations without ties in a window
					return distinct(rng, i, n)
				}
				return awayFromZero(rng, i, n)
			},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[1], 1e-3)
				if err != nil {
					return nil, err
				}
				g := convGeom{imageGeom{H: 4, W: 6, C: 2}, tensor.Shape{2, 2, 4 * 6 * 2}}
				return apply(convKBNBackKernel{g}, in[0], in[1], st, in[2], in[3], in[4], in[5])
			},
			value: func(in [][]float64) []float64 {
				pos := naivePoolArg(naiveBatchNorm(in[1], in[2], make([]float64, 6), 2, 48, 3, 1e-3), 72, 4, 6, 3)
				g := naiveScatterPool(pos, in[3], len(in[1]), 4, 6, 3)
				return naiveConvK(in[0], naiveBNBack(in[1], in[2], g, in[4], in[5], 2, 48, 3, 1e-3), 2, 2, 4, 6, 2, 3)
			}},
		opRow{name: "gatherBNScale", in: []tensor.Shape{{2, 2 * 2 * 2, 3}, {2, 2 * 5 * 5, 3}, {2, 3}}, draw: positionsFirst, positions: true,
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[1], 1e-3)
				if err != nil {
					return nil, err
				}
				return gatherBNScale(in[0], in[1], st, in[2], pool55)
			},
			value: func(in [][]float64) []float64 {
				return naiveGatherPool(in[0], naiveBatchNorm(in[1], in[2], make([]float64, 6), 2, 50, 3, 1e-3), 5, 5, 3)
			}},
		opRow{name: "bnDotPool", in: []tensor.Shape{{2, 2 * 2 * 2, 3}, {2, 2 * 5 * 5, 3}, {2, 2 * 2 * 2, 3}}, draw: positionsFirst, positions: true,
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[1], 1e-3)
				if err != nil {
					return nil, err
				}
				return bnDotPool(in[0], in[1], st, in[2], pool55)
			},
			value: func(in [][]float64) []float64 {
				zhat := naiveBatchNorm(in[1], []float64{1, 1, 1, 1, 1, 1}, make([]float64, 6), 2, 50, 3, 1e-3)
				g := naiveScatterPool(in[0], in[2], len(zhat), 5, 5, 3)
				out := make([]float64, 6)
				for i, v := range zhat {
					out[(i/150)*3+i%3] += v * g[i]
				}
				return out
			}},
		opRow{name: "bnBackPool", in: []tensor.Shape{{2, 2 * 2 * 2, 3}, {2, 2 * 5 * 5, 3}, {2, 3}, {2, 2 * 2 * 2, 3}, {2, 3}, {2, 3}},
			draw: positionsFirst, positions: true,
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[1], 1e-3)
				if err != nil {
					return nil, err
				}
				return bnBackPool(in[0], in[1], st, in[2], in[3], in[4], in[5], pool55)
			},
			value: func(in [][]float64) []float64 {
				g := naiveScatterPool(in[0], in[3], len(in[1]), 5, 5, 3)
				return naiveBNBack(in[1], in[2], g, in[4], in[5], 2, 50, 3, 1e-3)
			}},
		opRow{name: "bnBackPool of 4x6 images (one pass)", in: []tensor.Shape{{2, 2 * 2 * 3, 3}, {2, 2 * 4 * 6, 3}, {2, 3}, {2, 2 * 2 * 3, 3}, {2, 3}, {2, 3}},
			draw: positionsFirst, positions: true,
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				st, err := bnStats(in[1], 1e-3)
				if err != nil {
					return nil, err
				}
				return bnBackPool(in[0], in[1], st, in[2], in[3], in[4], in[5], poolGeom{4, 6})
			},
			value: func(in [][]float64) []float64 {
				g := naiveScatterPool(in[0], in[3], len(in[1]), 4, 6, 3)
				return naiveBNBack(in[1], in[2], g, in[4], in[5], 2, 48, 3, 1e-3)
			}},
		opRow{name: "softmax cross-entropy", in: []tensor.Shape{{2, 3, 4}, {2, 3, 4}},
			draw: func(rng *rand.Rand, i, n int) []float64 {
				if i == 0 {
					return awayFromZero(rng, i, n)
				}
				return positive(rng, i, n) // any target weights
			},
			build: two(SoftmaxCrossEntropy.PerTask),
			value: func(in [][]float64) []float64 { return naiveSoftmaxCE(in[0], in[1], 2, 3, 4) }},
		opRow{name: "mse", in: []tensor.Shape{{2, 3, 2}, {2, 3, 2}}, build: two(MSELoss.PerTask)},
		opRow{name: "StopGradient", in: []tensor.Shape{{2, 3}}, build: one(StopGradient), valueOnly: true,
			value: func(in [][]float64) []float64 { return in[0] }},
		opRow{name: "maxLastStop", in: []tensor.Shape{{2, 2, 3}}, build: one(maxLastStop), valueOnly: true,
			value: func(in [][]float64) []float64 {
				return []float64{max(in[0][0], in[0][1], in[0][2]), max(in[0][3], in[0][4], in[0][5]),
					max(in[0][6], in[0][7], in[0][8]), max(in[0][9], in[0][10], in[0][11])}
			}},
	)
	return append(rows, layerRows()...)
}()

// TestOpsNestedFiniteDifferences checks every op of the package on its own:
// its value against plain Go where the row has one, then, with
// f(x) = sum(r * op(x)^2) for fixed random r (squared so that linear ops get
// a nonzero Hessian), the gradient of f against central differences of f,
// and the gradient of h(x) = <s, grad f(x)> (a scalar function of the
// gradient, for fixed random s) against central differences of h. Both
// gradients come from Graph.Grad; the second goes through the SymDiff of
// every SymDiff the first used.
func TestOpsNestedFiniteDifferences(t *testing.T) {
	t.Parallel()
	checkNested(t, opRows)
}

// checkNested is TestOpsNestedFiniteDifferences on the given rows.
func checkNested(t *testing.T, rows []opRow) {
	for ri, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ri), 29))
			draw := row.draw
			if draw == nil {
				draw = awayFromZero
			}
			g := newGraph()
			in := make(gorgonia.Nodes, len(row.in))
			vals := make([][]float64, len(row.in))
			for i, s := range row.in {
				vals[i] = draw(rng, i, s.TotalSize())
				var err error
				if in[i], err = gtInput(g.ExprGraph, fmt.Sprintf("x%d", i), s, vals[i]); err != nil {
					t.Fatal(err)
				}
			}
			y, err := row.build(in)
			if err != nil {
				t.Fatal(err)
			}
			outputs := gorgonia.Nodes{y}

			// The inputs to differentiate: those the op declares
			// differentiable (all, for compositions), none for value-only rows.
			var wrt gorgonia.Nodes
			var wrtIdx []int
			diff := y.Op().(gorgonia.SDOp).DiffWRT(len(in))
			for i, x := range in {
				if !row.valueOnly && (len(g.children(y)) != len(in) || diff[i]) && !(row.positions && i == 0) {
					wrt = append(wrt, x)
					wrtIdx = append(wrtIdx, i)
				}
			}
			var f, h *gorgonia.Node
			var fGrads, hGrads gorgonia.Nodes
			if len(wrt) > 0 {
				r, err := gtInput(g.ExprGraph, "r", y.Shape(), awayFromZero(rng, 0, y.Shape().TotalSize()))
				if err != nil {
					t.Fatal(err)
				}
				sq, err := mul(y, y)
				if err != nil {
					t.Fatal(err)
				}
				f = gtSum(gtHad(sq, r))
				if fGrads, err = g.Grad(f, wrt...); err != nil {
					t.Fatal(err)
				}
				var terms gorgonia.Nodes
				for i, gr := range fGrads {
					s, err := gtInput(g.ExprGraph, fmt.Sprintf("s%d", i), gr.Shape(), awayFromZero(rng, 0, gr.Shape().TotalSize()))
					if err != nil {
						t.Fatal(err)
					}
					terms = append(terms, gtSum(gtHad(gr, s)))
				}
				h = terms[0]
				for _, term := range terms[1:] {
					h = gtMust(gorgonia.Add(h, term))
				}
				if hGrads, err = g.Grad(h, wrt...); err != nil {
					t.Fatal(err)
				}
				outputs = append(append(append(outputs, f, h), fGrads...), hGrads...)
			}

			p, idx := compile(g, outputs, tuning{})
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
			get := func(k int) []float64 {
				switch v := p.Vals[idx[k]].Data().(type) {
				case float64:
					return []float64{v}
				case []float64:
					return append([]float64(nil), v...)
				}
				t.Fatalf("output %d is %T", k, p.Vals[idx[k]])
				return nil
			}
			if row.value != nil {
				if d := relErr(get(0), row.value(vals)); d > 1e-13 {
					t.Errorf("value %v, plain Go %v: relative error %.3g", get(0), row.value(vals), d)
				}
			}
			if len(wrt) == 0 {
				return
			}
			n := len(wrt)
			fGrad, hGrad := make([][]float64, n), make([][]float64, n)
			for k := 0; k < n; k++ {
				fGrad[k], hGrad[k] = get(3+k), get(3+n+k)
			}
			// Central differences of f and h, perturbing the bound inputs in
			// place, at every coordinate (at most 48 random ones per input).
			const step = 1e-6
			for k, i := range wrtIdx {
				x := in[i].Value().Data().([]float64)
				coords := rng.Perm(len(x))[:min(len(x), 48)]
				var gotF, gotH, wantF, wantH []float64
				for _, j := range coords {
					orig := x[j]
					x[j] = orig + step
					if err := p.Run(); err != nil {
						t.Fatal(err)
					}
					fp, hp := get(1)[0], get(2)[0]
					x[j] = orig - step
					if err := p.Run(); err != nil {
						t.Fatal(err)
					}
					fm, hm := get(1)[0], get(2)[0]
					x[j] = orig
					wantF, wantH = append(wantF, (fp-fm)/(2*step)), append(wantH, (hp-hm)/(2*step))
					gotF, gotH = append(gotF, fGrad[k][j]), append(gotH, hGrad[k][j])
				}
				dF, dH := relErr(gotF, wantF), relErr(gotH, wantH)
				t.Logf("input %d: gradient relative error %.2g, gradient of <s, gradient> %.2g", i, dF, dH)
				if dF > 1e-6 || dH > 1e-6 {
					t.Errorf("input %d: gradient %v vs %v (%.3g); gradient of the gradient %v vs %v (%.3g)",
						i, gotF, wantF, dF, gotH, wantH, dH)
				}
			}
		})
	}
}

// TestOpsFloat32 runs every op of the table, value and first and second
// derivatives, in float32 and compares with the float64 results: the same
// kernels serve both dtypes.
func TestOpsFloat32(t *testing.T) {
	t.Parallel()
	checkFloat32(t, opRows)
}

// checkFloat32 is TestOpsFloat32 on the given rows.
func checkFloat32(t *testing.T, rows []opRow) {
	for ri, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ri), 31))
			draw := row.draw
			if draw == nil {
				draw = awayFromZero
			}
			vals := make([][]float64, len(row.in))
			for i, s := range row.in {
				vals[i] = draw(rng, i, s.TotalSize())
			}
			var results [2][]float64
			for k, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				g := newGraph()
				in := letInputs(t, g, dt, row.in, vals)
				y, err := row.build(in)
				if err != nil {
					t.Fatal(err)
				}
				if y.Dtype() != dt {
					t.Fatalf("output is %v, want %v", y.Dtype(), dt)
				}
				outputs := gorgonia.Nodes{y}
				if !row.valueOnly {
					sq, err := mul(y, y)
					if err != nil {
						t.Fatal(err)
					}
					grads, err := g.Grad(gtSum(sq), in[len(in)-1])
					if err != nil {
						t.Fatal(err)
					}
					outputs = append(outputs, grads[0])
				}
				_, results[k] = runFlat(t, g, outputs)
			}
			if d := relErr(results[1], results[0]); d > 1e-5 {
				t.Errorf("float32 values and gradient differ from float64 by %.3g", d)
			}
		})
	}
}

// TestOpsWinograd runs the harness on convolutions forced onto the
// Winograd path (winograd.go), which the table's few channels do not take:
// even and odd image sizes (tiles overhanging the image), one and several
// channels, conv, convT and convK, with F(2x2, 3x3) and F(4x4, 3x3).
func TestOpsWinograd(t *testing.T) {
	for _, m := range []int{2, 4} {
		t.Run(fmt.Sprintf("F(%dx%d, 3x3)", m, m), func(t *testing.T) {
			checkWinogradOps(t, m)
		})
	}
}

func checkWinogradOps(t *testing.T, tiles int) {
	var rows []opRow
	for _, d := range []struct{ n, h, w, c, f int }{{2, 4, 6, 2, 3}, {1, 5, 3, 3, 2}, {2, 3, 3, 1, 2}, {1, 7, 2, 2, 1}, {1, 9, 8, 2, 3}} {
		geo := imageGeom{H: d.h, W: d.w, C: d.c, tune: tuning{winograd: tiles}}
		x := tensor.Shape{2, d.n, d.h * d.w * d.c}
		name := fmt.Sprintf("%d images %dx%dx%d, %d filters", d.n, d.h, d.w, d.c, d.f)
		rows = append(rows,
			opRow{name: "conv " + name, in: []tensor.Shape{x, {2, 9 * d.c, d.f}},
				build: two(func(x, k *gorgonia.Node) (*gorgonia.Node, error) { return conv(x, k, geo) }),
				value: func(in [][]float64) []float64 { return naiveConv(in[0], in[1], 2, d.n, d.h, d.w, d.c, d.f) }},
			opRow{name: "convT " + name, in: []tensor.Shape{{2, d.n * d.h * d.w, d.f}, {2, 9 * d.c, d.f}},
				build: two(func(g, k *gorgonia.Node) (*gorgonia.Node, error) {
					return apply(convTKernel{convGeom{geo, x}}, g, k)
				})},
			opRow{name: "convK " + name, in: []tensor.Shape{x, {2, d.n * d.h * d.w, d.f}},
				build: two(func(x0, g *gorgonia.Node) (*gorgonia.Node, error) {
					return apply(convKKernel{convGeom{geo, x}}, x0, g)
				})})
		if d.h < 2 || d.w < 2 {
			continue
		}
		// convBlock: with several channels on winogradBlock's path, z's
		// moments and pooled extremes only; with one, the patches' moments.
		rows = append(rows, opRow{name: "convBlock " + name, in: []tensor.Shape{x, {2, 9 * d.c, d.f}, {2, d.f}, {2, d.f}, {2, d.f}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				return convBlock(in[0], in[1], in[2], in[3], in[4], geo, 1e-3)
			},
			value: func(in [][]float64) []float64 {
				z := naiveConv(in[0], in[1], 2, d.n, d.h, d.w, d.c, d.f)
				y := naiveMaxPool(naiveBatchNorm(z, in[3], in[4], 2, d.n*d.h*d.w, d.f, 1e-3), 2*d.n, d.h, d.w, d.f)
				for i, v := range y {
					y[i] = max(v, 0)
				}
				return y
			}})
	}
	checkNested(t, rows)
	checkFloat32(t, rows)
}
