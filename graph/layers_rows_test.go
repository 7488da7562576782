package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// layerRows are the rows of the standalone layers (layers.go) in the
// table of TestOpsNestedFiniteDifferences and TestOpsFloat32, each with
// its value written out in plain Go.
func layerRows() []opRow {
	var rows []opRow
	// Convolutions of 5x4 images of 2 channels, 3 filters, 2 per task.
	for _, c := range []struct{ stride, pad int }{{2, 1}, {1, 0}, {2, 0}, {3, 1}} {
		rows = append(rows, opRow{name: fmt.Sprintf("Conv stride %d padding %d", c.stride, c.pad),
			in: []tensor.Shape{{2, 2, 5 * 4 * 2}, {2, 18, 3}, {2, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) {
				return Conv(in[0], in[1], in[2], 5, 4, 2, c.stride, c.pad)
			},
			value: func(in [][]float64) []float64 {
				return naiveConvSP(in[0], in[1], in[2], 2, 2, 5, 4, 2, 3, c.stride, c.pad)
			}})
	}
	rows = append(rows,
		opRow{name: "spread (pick's adjoint)", in: []tensor.Shape{{2, 2 * 2 * 2, 3}},
			build: one(func(g *gorgonia.Node) (*gorgonia.Node, error) {
				return apply(spreadKernel{pickGeom{H: 5, W: 4, Ho: 2, Wo: 2, S: 2, OY: 1, OX: 1}, tensor.Shape{2, 2 * 5 * 4, 3}}, g)
			})},
		// 5x5 images: the odd last row and column are in no window.
		opRow{name: "MaxPool2", in: []tensor.Shape{{2, 2 * 5 * 5, 3}}, draw: distinct,
			build: one(func(z *gorgonia.Node) (*gorgonia.Node, error) { return MaxPool2(z, 5, 5) }),
			value: func(in [][]float64) []float64 { return naiveMaxPool(in[0], 4, 5, 5, 3) }},
		opRow{name: "AvgPool2", in: []tensor.Shape{{2, 2 * 5 * 4, 3}},
			build: one(func(z *gorgonia.Node) (*gorgonia.Node, error) { return AvgPool2(z, 5, 4) }),
			value: func(in [][]float64) []float64 { return naiveAvgPool(in[0], 4, 5, 4, 3) }},
		opRow{name: "BatchNorm (layer)", in: []tensor.Shape{{2, 5, 3}, {2, 3}, {2, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return BatchNorm(in[0], in[1], in[2], 1e-3) },
			value: func(in [][]float64) []float64 { return naiveBatchNorm(in[0], in[1], in[2], 2, 5, 3, 1e-3) }},
		opRow{name: "Flatten", in: []tensor.Shape{{2, 2 * 3, 4}},
			build: one(func(z *gorgonia.Node) (*gorgonia.Node, error) { return Flatten(z, 2) }),
			value: func(in [][]float64) []float64 { return in[0] }},
		opRow{name: "Linear", in: []tensor.Shape{{2, 3, 4}, {2, 4, 5}, {2, 5}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return Linear(in[0], in[1], in[2]) },
			value: func(in [][]float64) []float64 {
				var out []float64
				for t := range 2 {
					p := gtMatMul(in[0][t*12:(t+1)*12], in[1][t*20:(t+1)*20], 3, 4, 5)
					for i := range p {
						p[i] += in[2][t*5+i%5]
					}
					out = append(out, p...)
				}
				return out
			}},
		opRow{name: "ReLU (layer)", in: []tensor.Shape{{2, 3, 2}}, build: one(ReLU.Apply)},
	)
	return rows
}

// naiveConvSP is the 3x3 convolution of stride s and zero padding pad
// plus the bias b, PyTorch's Conv2d, written out.
func naiveConvSP(x, k, b []float64, t, n, h, w, c, f, s, pad int) []float64 {
	ho, wo := (h+2*pad-3)/s+1, (w+2*pad-3)/s+1
	var out []float64
	for tt := 0; tt < t; tt++ {
		for i := 0; i < n; i++ {
			for y := 0; y < ho; y++ {
				for xx := 0; xx < wo; xx++ {
					for ff := 0; ff < f; ff++ {
						v := b[tt*f+ff]
						for kh := 0; kh < 3; kh++ {
							for kw := 0; kw < 3; kw++ {
								yy, xs := y*s+kh-pad, xx*s+kw-pad
								if yy < 0 || yy >= h || xs < 0 || xs >= w {
									continue
								}
								for ch := 0; ch < c; ch++ {
									v += x[(((tt*n+i)*h+yy)*w+xs)*c+ch] * k[((tt*9+kh*3+kw)*c+ch)*f+ff]
								}
							}
						}
						out = append(out, v)
					}
				}
			}
		}
	}
	return out
}

// naiveAvgPool averages the 2x2 windows of imgs images of h x w x c.
func naiveAvgPool(x []float64, imgs, h, w, c int) []float64 {
	var out []float64
	for i := 0; i < imgs; i++ {
		for y := 0; y < h/2; y++ {
			for xx := 0; xx < w/2; xx++ {
				for ch := 0; ch < c; ch++ {
					s := 0.0
					for dy := 0; dy < 2; dy++ {
						for dx := 0; dx < 2; dx++ {
							s += x[((i*h+2*y+dy)*w+2*xx+dx)*c+ch]
						}
					}
					out = append(out, s/4)
				}
			}
		}
	}
	return out
}
