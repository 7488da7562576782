package conv4_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/models/conv4"
)

// torchForward is conv4's forward pass as PyTorch computes it from the
// exported state_dict: NCHW images, Conv2d with OIHW kernels and padding 1,
// BatchNorm2d with the batch's statistics, ReLU, MaxPool2d(2), flatten in
// (c, h, w) order, Linear with an [out, in] weight.
func torchForward(t map[string]configs.Tensor, x []float64, n, c, h, w, blocks, f, ways int) []float64 {
	for l := range blocks {
		p := "blocks." + string(rune('0'+l)) + "."
		k, b, g, be := t[p+"conv.weight"].Data, t[p+"conv.bias"].Data, t[p+"bn.weight"].Data, t[p+"bn.bias"].Data
		z := make([]float64, n*f*h*w)
		for i := range n {
			for o := range f {
				for y := range h {
					for xx := range w {
						s := b[o]
						for ci := range c {
							for kh := range 3 {
								for kw := range 3 {
									yy, xs := y+kh-1, xx+kw-1
									if yy >= 0 && yy < h && xs >= 0 && xs < w {
										s += k[((o*c+ci)*3+kh)*3+kw] * x[((i*c+ci)*h+yy)*w+xs]
									}
								}
							}
						}
						z[((i*f+o)*h+y)*w+xx] = s
					}
				}
			}
		}
		for o := range f { // batch norm over (N, H, W), biased variance
			var mean, vr float64
			for i := range n {
				for j := range h * w {
					mean += z[(i*f+o)*h*w+j]
				}
			}
			mean /= float64(n * h * w)
			for i := range n {
				for j := range h * w {
					d := z[(i*f+o)*h*w+j] - mean
					vr += d * d
				}
			}
			vr /= float64(n * h * w)
			for i := range n {
				for j := range h * w {
					v := &z[(i*f+o)*h*w+j]
					*v = max(0, g[o]*(*v-mean)/math.Sqrt(vr+1e-5)+be[o])
				}
			}
		}
		h2, w2 := h/2, w/2
		pooled := make([]float64, n*f*h2*w2)
		for i := range n * f {
			for y := range h2 {
				for xx := range w2 {
					m := math.Inf(-1)
					for dy := range 2 {
						for dx := range 2 {
							m = max(m, z[(i*h+2*y+dy)*w+2*xx+dx])
						}
					}
					pooled[(i*h2+y)*w2+xx] = m
				}
			}
		}
		x, c, h, w = pooled, f, h2, w2
	}
	d := c * h * w
	W, B := t["head.weight"].Data, t["head.bias"].Data
	logits := make([]float64, n*ways)
	for i := range n {
		for o := range ways {
			s := B[o]
			for j := range d {
				s += W[o*d+j] * x[i*d+j]
			}
			logits[i*ways+o] = s
		}
	}
	return logits
}

// TestTensorsAreTorchLayout: the exported tensors, used as PyTorch uses a
// state_dict, give the logits of graph's layout (internal/reference.CNN on
// the flat parameters), on non-square colour images.
func TestTensorsAreTorchLayout(t *testing.T) {
	const n, c, h, w, blocks, f, ways = 3, 2, 6, 4, 2, 3, 4
	ref := reference.CNN{H: h, W: w, C: c, Filters: f, Blocks: blocks, Ways: ways, Eps: 1e-5}
	rng := rand.New(rand.NewPCG(1, 1))
	params := make([]float64, ref.NumParams())
	for i := range params {
		params[i] = rng.NormFloat64()
	}
	xhwc := make([]float64, n*h*w*c)
	for i := range xhwc {
		xhwc[i] = rng.NormFloat64()
	}
	xchw := make([]float64, len(xhwc)) // the same images in PyTorch's NCHW
	for i := range n {
		for y := range h {
			for x := range w {
				for ch := range c {
					xchw[((i*c+ch)*h+y)*w+x] = xhwc[((i*h+y)*w+x)*c+ch]
				}
			}
		}
	}
	cfg := configs.Defaults()
	cfg.Model.Kind = conv4.Name
	cfg.Model.Sections = map[string]any{conv4.Name: &conv4.Config{Filters: f, Blocks: blocks, Pool: "max", BatchNorm: "fixed"}}
	tensors, err := conv4.Model{}.Tensors(cfg, configs.IO{Height: h, Width: w, Channels: c, Outputs: ways, Classes: true}, params)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]configs.Tensor{}
	for _, tn := range tensors {
		byName[tn.Name] = tn
	}
	got, want := torchForward(byName, xchw, n, c, h, w, blocks, f, ways), ref.Forward(params, xhwc, n)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Fatalf("logit %d: %v from the exported tensors, %v from graph's layout", i, got[i], want[i])
		}
	}
}

// TestTensorsCoverEveryParameter: for every pooling, batch norm and head
// setting, the named tensors hold each of graph.CNN's flat parameters
// exactly once (init.from reads a file back through them), with the shapes
// PyTorch's Conv2d, BatchNorm2d and Linear give them.
func TestTensorsCoverEveryParameter(t *testing.T) {
	t.Parallel()
	for _, pool := range conv4.Pools {
		for _, bn := range conv4.BatchNorms {
			for _, hidden := range []int{0, 6} {
				s := conv4.Config{Filters: 3, Blocks: 2, Pool: pool, BatchNorm: bn, Hidden: hidden}
				io := configs.IO{Height: 7, Width: 5, Channels: 2, Outputs: 4, Classes: true}
				m, err := graph.Conv4{Filters: s.Filters, Blocks: s.Blocks, Channels: io.Channels, Height: io.Height, Width: io.Width, Pool: pool, BatchNorm: bn, Hidden: hidden}.CNN(io.Outputs)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, sh := range m.ParamShapes() {
					n += sh.TotalSize()
				}
				idx := make([]float64, n)
				for i := range idx {
					idx[i] = float64(i)
				}
				cfg := configs.Defaults()
				cfg.Model.Kind = conv4.Name
				cfg.Model.Sections = map[string]any{conv4.Name: &s}
				tensors, err := conv4.Model{}.Tensors(cfg, io, idx)
				if err != nil {
					t.Fatalf("%+v: %v", s, err)
				}
				seen := make([]bool, n)
				shapes := map[string][]int{}
				for _, tn := range tensors {
					shapes[tn.Name] = tn.Shape
					size := 1
					for _, d := range tn.Shape {
						size *= d
					}
					if size != len(tn.Data) {
						t.Errorf("%+v: %s has shape %v and %d values", s, tn.Name, tn.Shape, len(tn.Data))
					}
					for _, v := range tn.Data {
						if seen[int(v)] {
							t.Errorf("%+v: parameter %v in two places", s, v)
						}
						seen[int(v)] = true
					}
				}
				for i, ok := range seen {
					if !ok {
						t.Errorf("%+v: parameter %d in no tensor", s, i)
					}
				}
				// the features into the first linear layer: F x h x w after two blocks
				side := map[string][2]int{"max": {1, 1}, "stride": {2, 2}, "none": {7, 5}}[pool]
				first, want := "head.weight", []int{4, 3 * side[0] * side[1]}
				if hidden > 0 {
					first, want = "hidden.weight", []int{6, 3 * side[0] * side[1]}
				}
				if fmt.Sprint(shapes[first]) != fmt.Sprint(want) || fmt.Sprint(shapes["blocks.1.conv.weight"]) != "[3 3 3 3]" || fmt.Sprint(shapes["blocks.0.conv.weight"]) != "[3 2 3 3]" {
					t.Errorf("%+v: shapes %v, want %s %v", s, shapes, first, want)
				}
				if _, has := shapes["blocks.0.bn.weight"]; has != (bn != "off") {
					t.Errorf("%+v: batch-norm tensors %v", s, shapes)
				}
			}
		}
	}
}
