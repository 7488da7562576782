package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/trmaml/trmaml/graph/internal/exec"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// unfused hides the CNN's forwardValues and forwardOnce: an objective of
// it builds the query pass from the four ops per block, as before
// convBlock.
type unfused struct {
	Model
	AdaptedParams
}

// TestEvalQueryPassFused: an objective without a meta-gradient runs the
// CNN's blocks on the query images as one convBlock op each (the first
// from its patches' moments, the others on the Winograd path), and its losses
// and accuracies are those of the same objective built from the unfused
// blocks, up to rounding. The op runs the same products on the same chunks
// of images, but it takes the batch-norm statistics of the one-channel
// images from their patches' moments (z's exact moments, not those of the
// rounded z: relative differences of the float32 losses of 4-9e-8 here,
// measured); the bound also covers chunks of one image.
func TestEvalQueryPassFused(t *testing.T) {
	for _, c := range []struct {
		h, w, blocks int
		dt           tensor.Dtype
		chunk        int // tuning.chunkValues; 0: the default
		maxRel       float64
	}{
		{28, 28, 4, tensor.Float32, 0, 1e-6},
		{28, 28, 4, tensor.Float32, 1, 1e-6},
		{28, 28, 4, tensor.Float64, 0, 1e-14},
		{28, 28, 4, tensor.Float64, 1, 1e-14},
		{9, 7, 2, tensor.Float32, 0, 1e-6}, // odd sizes: the pool drops a row and a column
		{9, 7, 2, tensor.Float64, 1, 1e-14},
	} {
		t.Run(fmt.Sprintf("%dx%d, %v, chunkValues %d", c.h, c.w, c.dt, c.chunk), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			m, err := NewCNN(c.h, c.w, 1, 32, c.blocks, 5, false)
			if err != nil {
				t.Fatal(err)
			}
			m.tune.chunkValues = c.chunk
			b := randomImages(rng, 4, 5, 1, 10, c.h, c.w, 1)
			w := m.Init(rng)
			var losses, acc [2][]float64
			for k, model := range []Model{m, unfused{m, m}} {
				obj, err := NewObjective(Spec{Model: model, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 4, Support: 5, Query: 50,
					InShape: m.InShape(), OutDim: 5, Steps: 1, Alpha: 0.4, Dtype: c.dt})
				if err != nil {
					t.Fatal(err)
				}
				// Fused: the first block from its patches, the others
				// where their convolution takes the Winograd path (all of
				// them with the SIMD kernels).
				want := 0
				for l, g := 0, (imageGeom{H: c.h, W: c.w, C: 1}); k == 0 && l < c.blocks; l, g = l+1, (imageGeom{H: g.H / 2, W: g.W / 2, C: m.Filters}) {
					if m.fusesValues(g, 50) {
						want++
					}
				}
				if k == 0 && SIMD() && want != c.blocks {
					t.Fatalf("with the SIMD kernels %d of %d blocks fuse, want all", want, c.blocks)
				}
				if fused := count[convBlockKernel](obj.programs()[0]); fused != want {
					t.Fatalf("model %d: %d convBlock ops in the program, want %d", k, fused, want)
				}
				losses[k], acc[k] = make([]float64, 4), make([]float64, 4)
				if err := obj.LossesMetric(w, b, nil, losses[k], acc[k], nil); err != nil {
					t.Fatal(err)
				}
			}
			d := relErr(losses[0], losses[1])
			t.Logf("losses %v, accuracies %v, relative difference %.3g (bit for bit: %v)", losses[0], acc[0], d, reflect.DeepEqual(losses[0], losses[1]))
			if !reflect.DeepEqual(acc[0], acc[1]) || d > c.maxRel {
				t.Errorf("fused: losses %v, accuracies %v; unfused: %v, %v (relative difference %.3g, at most %.3g)",
					losses[0], acc[0], losses[1], acc[1], d, c.maxRel)
			}
		})
	}
}

// TestMetaGradientQueryPassFused: an objective with a meta-gradient runs
// the CNN's first block on the query images as one convBlock op and its
// gradient as convBlockBack, in first and second order (forced where
// blockBackFast is false: float64 and the plain build, which otherwise
// stay unfused, as checked here). It counts the same FLOPs as the
// objective built from the unfused blocks, and its losses and
// meta-gradient are that objective's up to rounding: in float64 to 1e-11,
// in float32 to 2e-5 and as close to the float64 meta-gradient as the
// unfused float32 one (measured: fused and unfused float32 meta-gradients
// 1-3e-6 apart, both 2e-2 from float64's in the SIMD build and 5-7e-6 in
// the plain one; at 32 filters 1.4-2.9e-4 apart, the fused ones 3-5%
// closer to float64's). The 2e-2 is the objective's, not the engine's: at
// these random images two inner steps make the float64 meta-gradient
// itself move by 12% of its norm when the images move by 1e-5 (windows'
// maxima switch), the scale of the float32 Winograd F(4x4) products'
// rounding; with im2col products float32 is 4-10e-6 from float64
// (measured in temporary tests).
func TestMetaGradientQueryPassFused(t *testing.T) {
	for _, c := range []struct {
		dt    tensor.Dtype
		first bool
	}{{tensor.Float64, false}, {tensor.Float64, true}, {tensor.Float32, false}, {tensor.Float32, true}} {
		t.Run(fmt.Sprintf("%v, first order %v", c.dt, c.first), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 3))
			m, err := NewCNN(28, 28, 1, 16, 4, 5, false)
			if err != nil {
				t.Fatal(err)
			}
			b := randomImages(rng, 4, 5, 1, 10, 28, 28, 1)
			w := m.Init(rng)
			weights := []float64{0.5, 1, 1.5, 2}
			if g := (imageGeom{}); !g.blockBackFast(c.dt) {
				obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Tasks: 4, Support: 5, Query: 50,
					InShape: m.InShape(), OutDim: 5, Steps: 2, Alpha: 0.4, FirstOrder: c.first, MetaGradient: true, Dtype: c.dt})
				if err != nil {
					t.Fatal(err)
				}
				if runs[convBlockKernel](obj.programs()[0]) {
					t.Fatalf("%v without the SIMD kernels: convBlock in the program", c.dt)
				}
				m.tune.blockBack = true
			}
			var losses, grads [3][]float64
			var flops [3]float64
			// Fused and unfused in c.dt, and the unfused float64 reference.
			for k, model := range []Model{m, unfused{m, m}, unfused{m, m}} {
				dt := c.dt
				if k == 2 {
					dt = tensor.Float64
				}
				obj, err := NewObjective(Spec{Model: model, Loss: SoftmaxCrossEntropy, Tasks: 4, Support: 5, Query: 50,
					InShape: m.InShape(), OutDim: 5, Steps: 2, Alpha: 0.4, FirstOrder: c.first, MetaGradient: true, Dtype: dt})
				if err != nil {
					t.Fatal(err)
				}
				if fused := runs[convBlockBackKernel](obj.programs()[0]); fused != (k == 0) {
					t.Fatalf("model %d: convBlockBack in the program %v, want %v", k, fused, k == 0)
				}
				losses[k], grads[k], flops[k] = make([]float64, 4), make([]float64, len(w)), obj.FLOPs()
				if err := obj.Losses(w, b, weights, losses[k], grads[k]); err != nil {
					t.Fatal(err)
				}
			}
			if flops[0] != flops[1] { // the fused ops count as the products they replace
				t.Errorf("FLOPs %g fused, %g unfused", flops[0], flops[1])
			}
			dl, dg := relErr(losses[0], losses[1]), relErr(grads[0], grads[1])
			fusedErr, unfusedErr := relErr(grads[0], grads[2]), relErr(grads[1], grads[2])
			t.Logf("losses %v, relative difference %.3g; meta-gradients %.3g; from float64's: fused %.3g, unfused %.3g",
				losses[0], dl, dg, fusedErr, unfusedErr)
			if c.dt == tensor.Float64 && (dl > 1e-11 || dg > 1e-11) {
				t.Errorf("fused and unfused losses differ by %.3g, meta-gradients by %.3g (at most 1e-11)", dl, dg)
			}
			if c.dt == tensor.Float32 && (dl > 1e-6 || dg > 2e-5 || fusedErr > 1.1*unfusedErr) {
				t.Errorf("fused and unfused losses differ by %.3g (at most 1e-6), meta-gradients by %.3g (at most 2e-5); the fused meta-gradient is %.3g from float64's, the unfused one %.3g",
					dl, dg, fusedErr, unfusedErr)
			}
		})
	}
}

// TestConvBlockBackMatchesUnfused: the kernel, bias, scale and shift
// gradients of convBlock (convBlockBack, z computed again) are those of
// the block built from the four ops (conv, bnStats, maxPoolBN, relu),
// whose backward pass writes z's gradient at every pixel, on random
// images: float64 and float32, the AVX-512 kernel's 64 channels, 24 (the
// plain row loop), odd image sizes and chunks of one image, and images of
// zeros and ones, as Omniglot's strokes are, whose flat regions tie the
// four values of many windows (both must take the first maximum). The
// fused graph runs no op of the image shape's gradient (bnBackMax, convK).
func TestConvBlockBackMatchesUnfused(t *testing.T) {
	for _, c := range []struct {
		h, w, n, f int
		dt         tensor.Dtype
		chunk      int // tuning.chunkValues; 0: the default
		binary     bool
		maxRel     float64
	}{
		{28, 28, 10, 64, tensor.Float32, 0, false, 1e-5},
		{28, 28, 10, 24, tensor.Float32, 0, false, 1e-5},
		{9, 7, 5, 16, tensor.Float32, 1, false, 1e-5},
		{28, 28, 10, 64, tensor.Float32, 0, true, 1e-5},
		{28, 28, 10, 64, tensor.Float64, 0, false, 1e-12},
		{9, 7, 5, 16, tensor.Float64, 1, false, 1e-12},
		{28, 28, 10, 64, tensor.Float64, 0, true, 1e-12},
	} {
		t.Run(fmt.Sprintf("%dx%d, %d images, %d filters, %v, chunkValues %d, binary %v", c.h, c.w, c.n, c.f, c.dt, c.chunk, c.binary), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 9))
			const tasks = 3
			pooled := c.n * (c.h / 2) * (c.w / 2)
			shapes := []tensor.Shape{{tasks, c.n, c.h * c.w}, {tasks, 9, c.f}, {tasks, c.f}, {tasks, c.f}, {tasks, c.f}, {tasks, pooled, c.f}}
			vals := make([][]float64, len(shapes))
			for i, s := range shapes {
				vals[i] = awayFromZero(rng, i, s.TotalSize()) // gamma of both signs
			}
			for i := range vals[0] {
				vals[0][i] = rng.Float64() // images in [0, 1)
				if c.binary {
					vals[0][i] = float64(rng.IntN(2))
				}
			}
			var grads [2][]float64
			for k, fused := range []bool{true, false} {
				g := newGraph()
				in := letInputs(t, g, c.dt, shapes, vals)
				y, err := buildBlock(in, imageGeom{H: c.h, W: c.w, C: 1, tune: tuning{chunkValues: c.chunk}}, c.f, fused)
				if err != nil {
					t.Fatal(err)
				}
				d, err := g.Grad(gtSum(gtHad(y, in[5])), in[1:5]...)
				if err != nil {
					t.Fatal(err)
				}
				var p *exec.Program
				p, grads[k] = runFlat(t, g, d)
				if fused && (runs[bnBackMaxKernel](p) || runs[convKKernel](p) || runs[convKernel](p)) {
					t.Errorf("the fused gradient runs bnBackMax, convK or conv")
				}
			}
			d := relErr(grads[0], grads[1])
			t.Logf("relative difference %.3g", d)
			if d > c.maxRel {
				t.Errorf("fused gradients differ from the unfused ones by %.3g, at most %.3g", d, c.maxRel)
			}
		})
	}
}

// TestConvBlockWinogradMatchesUnfused: on the Winograd path (several
// channels), convBlock's values are those of the four ops (conv, bnStats,
// maxPoolBN, relu), which run the same products and transforms, up to the
// grouping of the moments' float64 sums and ties of a window's rounded
// products (bit for bit in every case here, measured). The bounds are
// below what convBlock's im2col path gives (2e-7 to 1e-6 in float32, 4e-16
// to 2e-15 in float64, measured with the Winograd branch disabled), so
// they also show that the branch ran. The cases: the CNN's shapes
// at 64 channels (the 16-lane kernels) and at 24 (the 8-lane ones), odd
// sizes whose pool drops a row or a column, F(2x2) and F(4x4), kernels of
// their own per task and kernels that every task shares (transformed once).
func TestConvBlockWinogradMatchesUnfused(t *testing.T) {
	for _, c := range []struct {
		h, w, n, ch, f int
		force          int // tuning.winograd: the tiles of the SIMD kernels' choice (4) or F(2x2)
		shared         bool
		dt             tensor.Dtype
		maxRel         float64
	}{
		{14, 14, 10, 64, 64, 4, false, tensor.Float32, 1e-9},
		{7, 7, 10, 64, 64, 4, true, tensor.Float32, 1e-9},
		{3, 3, 50, 64, 64, 4, false, tensor.Float32, 1e-9},
		{9, 7, 4, 24, 24, 2, false, tensor.Float32, 1e-9},
		{9, 7, 4, 24, 24, 4, true, tensor.Float32, 1e-9},
		{14, 14, 10, 64, 64, 4, false, tensor.Float64, 1e-16},
		{5, 6, 3, 16, 16, 2, true, tensor.Float64, 1e-16},
	} {
		t.Run(fmt.Sprintf("%dx%d, %d images, %d to %d channels, Winograd tiles %d, shared %v, %v", c.h, c.w, c.n, c.ch, c.f, c.force, c.shared, c.dt), func(t *testing.T) {
			geo := imageGeom{H: c.h, W: c.w, C: c.ch, tune: tuning{winograd: c.force}}
			if geo.winogradTile(c.n, c.ch, c.f) == 0 {
				t.Fatal("the case does not take the Winograd path")
			}
			rng := rand.New(rand.NewPCG(3, 11))
			const tasks = 3
			shapes := []tensor.Shape{{tasks, c.n, c.h * c.w * c.ch}, {tasks, 9 * c.ch, c.f}, {tasks, c.f}, {tasks, c.f}, {tasks, c.f}}
			vals := make([][]float64, len(shapes))
			for i, s := range shapes {
				vals[i] = awayFromZero(rng, i, s.TotalSize()) // gamma of both signs
			}
			if c.shared {
				k := vals[1]
				for i := range k {
					k[i] = k[i%(9*c.ch*c.f)]
				}
			}
			var outs [2][]float64
			for j, fused := range []bool{true, false} {
				g := newGraph()
				in := letInputs(t, g, c.dt, shapes, vals)
				y, err := buildBlock(in, geo, c.f, fused)
				if err != nil {
					t.Fatal(err)
				}
				_, outs[j] = runFlat(t, g, gorgonia.Nodes{y})
			}
			d := relErr(outs[0], outs[1])
			t.Logf("relative difference %.3g", d)
			if d > c.maxRel {
				t.Errorf("convBlock's values differ from the four ops' by %.3g, at most %.3g", d, c.maxRel)
			}
		})
	}
}

// letInputs adds to g an input node per shape, holding vals[i] as dt.
func letInputs(t *testing.T, g *Graph, dt tensor.Dtype, shapes []tensor.Shape, vals [][]float64) gorgonia.Nodes {
	t.Helper()
	in := make(gorgonia.Nodes, len(shapes))
	for i, s := range shapes {
		v := tensor.New(tensor.WithShape(s...), tensor.Of(dt))
		setFloats(v, vals[i])
		in[i] = gorgonia.NewTensor(g.ExprGraph, dt, len(s), gorgonia.WithShape(s...), gorgonia.WithName(fmt.Sprintf("x%d", i)))
		if err := gorgonia.Let(in[i], v); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// buildBlock returns a CNN block of f filters of the inputs (images,
// kernels, bias, scale, shift): one convBlock op if fused, else the four
// ops of CNN.block.
func buildBlock(in gorgonia.Nodes, geo imageGeom, f int, fused bool) (*gorgonia.Node, error) {
	if fused {
		return convBlock(in[0], in[1], in[2], in[3], in[4], geo, 1e-5)
	}
	return CNN{Filters: f, Eps: 1e-5}.block(in[0], geo, in[1], in[2], in[3], in[4])
}

// runFlat compiles and runs the graph g for outputs and returns the
// program and the outputs' values one after the other.
func runFlat(t *testing.T, g *Graph, outputs gorgonia.Nodes) (*exec.Program, []float64) {
	t.Helper()
	p, idx := compile(g, outputs, tuning{})
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	var flat []float64
	for _, i := range idx {
		out := make([]float64, p.Vals[i].Shape().TotalSize())
		getFloats(out, p.Vals[i])
		flat = append(flat, out...)
	}
	return p, flat
}

// runs reports whether program p runs a kernel of type K.
func runs[K kernel](p *exec.Program) bool { return count[K](p) > 0 }

// count returns how many ops of kernel type K program p runs.
func count[K kernel](p *exec.Program) int {
	n := 0
	for _, s := range p.Steps {
		if o, ok := s.Op.(*op); ok {
			if _, is := o.k.(K); is {
				n++
			}
		}
	}
	return n
}

// userCNN is a user's model that embeds CNN with a Forward of its own.
type userCNN struct {
	CNN
	calls *int
}

func (m userCNN) Forward(x *gorgonia.Node, params gorgonia.Nodes) (*gorgonia.Node, error) {
	*m.calls++
	return m.CNN.Forward(x, params)
}

// TestEmbeddedCNNKeepsItsForward: a model that embeds CNN inherits its
// unexported fused passes, but an objective of it runs the model's own
// Forward for the support and the query pass, with and without a
// meta-gradient.
func TestEmbeddedCNNKeepsItsForward(t *testing.T) {
	m, err := NewCNN(28, 28, 1, 16, 2, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, meta := range []bool{false, true} {
		calls := 0
		_, err := NewObjective(Spec{Model: userCNN{m, &calls}, Loss: SoftmaxCrossEntropy, Tasks: 2, Support: 5, Query: 10,
			InShape: m.InShape(), OutDim: 5, Steps: 1, Alpha: 0.4, MetaGradient: meta, Lanes: 1, Dtype: tensor.Float32})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2 {
			t.Errorf("meta-gradient %v: the model's Forward ran %d times, want 2 (support and query)", meta, calls)
		}
	}
}
