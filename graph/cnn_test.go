package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randomImages fills an N-way batch with random images and one-hot labels
// (support: shots per class; query: queries per class), as the Omniglot task
// set lays it out: (h, w, c) row-major images, labels a permutation.
func randomImages(rng *rand.Rand, tasks, ways, shots, queries, h, w, c int) *metalearn.Batch {
	in := h * w * c
	b := metalearn.NewBatch(tasks, ways*shots, ways*queries, in, ways)
	fill := func(x, y []float64, per int) {
		for p := 0; p < ways*per; p++ {
			label := p % ways
			y[p*ways+label] = 1
			for i := 0; i < in; i++ {
				x[p*in+i] = rng.Float64()
			}
		}
	}
	for t := 0; t < tasks; t++ {
		sx, sy, qx, qy := b.Row(t)
		fill(sx, sy, shots)
		fill(qx, qy, queries)
	}
	return b
}

// TestCNNParamLayout pins the parameter shapes of the contract shared with
// internal/reference: per block kernel (3,3,Cin,F) as (9*Cin, F), bias,
// scale, shift; then the linear layer from the flattened last block.
func TestCNNParamLayout(t *testing.T) {
	t.Parallel()
	m, err := NewCNN(28, 28, 1, 64, 4, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	var sizes [][]int
	n := 0
	for _, s := range m.ParamShapes() {
		sizes = append(sizes, []int(s))
		n += s.TotalSize()
	}
	want := [][]int{{9, 64}, {64}, {64}, {64}, {576, 64}, {64}, {64}, {64}, {576, 64}, {64}, {64}, {64}, {576, 64}, {64}, {64}, {64}, {64, 5}, {5}}
	if !reflect.DeepEqual(sizes, want) {
		t.Errorf("shapes %v, want %v", sizes, want)
	}
	if n != 112261 || len(m.Init(rand.New(rand.NewPCG(1, 1)))) != n {
		t.Errorf("%d parameters, Init gives %d; want 112261 (9*64+3*64 + 3*(9*64*64+3*64) + 64*5+5)", n, len(m.Init(rand.New(rand.NewPCG(1, 1)))))
	}
	wantAdapted := []bool{true, true, false, false}
	if a := m.Adapted(); !reflect.DeepEqual(a[:4], wantAdapted) || !a[16] || !a[17] {
		t.Errorf("adapted %v: want conv and linear weights and biases only", a)
	}
	if _, err := NewCNN(28, 28, 1, 64, 5, 5, false); err == nil {
		t.Errorf("5 blocks on 28x28 images (28->14->7->3->1->0) accepted")
	}
}

// TestCNNGraphAvoidsBrokenGorgoniaOps builds the CNN's second-order
// meta-gradient graph and checks that no node uses an op the guard refuses
// (gorgonia's SoftMax, MaxPool2D, Conv2d by input, BatchNorm, InverseSqrt,
// ...): the guard would refuse to build it, and this names the op if so.
func TestCNNGraphAvoidsBrokenGorgoniaOps(t *testing.T) {
	t.Parallel()
	m, err := NewCNN(6, 6, 1, 2, 2, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 2, Support: 2, Query: 2,
		InShape: m.InShape(), OutDim: 2, Steps: 2, Alpha: 0.1, MetaGradient: true})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, n := range obj.firstGraph().AllNodes() {
		if n.Op() == nil {
			continue
		}
		kinds[reflect.TypeOf(n.Op()).String()] = true
		if r := brokenReason(n.Op(), true); r != "" {
			t.Errorf("node %q uses %v: %s", n.Name(), n.Op(), r)
		}
	}
	t.Logf("op types in the graph: %v", kinds)
}

// cnnCase is a small CNN meta-learning problem.
type cnnCase struct {
	name    string
	chunked bool // one image per convolution chunk
	wino    int  // every convolution on the Winograd path with tiles of this size (tuning.winograd)
	h, w    int
	steps   int
	adaptBN bool
	alpha   float64
}

// TestCNNMetaGradient compares the CNN objective's losses with the
// independent plain-Go reference CNN and its meta-gradient (second and first
// order, 1 and 2 inner steps, BN adapted or not) with central differences of
// the reference's two-level objective (second order) and the reference's
// first-order gradient. The two orders must differ clearly, so dropping
// second-order terms cannot pass.
func TestCNNMetaGradient(t *testing.T) {
	cases := []cnnCase{
		{"one step", false, 0, 6, 5, 1, false, 0.4},
		{"two steps", false, 0, 6, 5, 2, false, 0.3},
		{"two steps, convolution in chunks of one image", true, 0, 6, 5, 2, false, 0.3},
		{"two steps, BN adapted", false, 0, 5, 6, 2, true, 0.3},
		{"two steps, Winograd convolution", false, 2, 6, 5, 2, false, 0.3},
		{"two steps, Winograd F(4x4) convolution", false, 4, 6, 5, 2, false, 0.3},
	}
	const tasks, ways, shots, queries, c, filters, blocks = 2, 2, 2, 3, 1, 3, 2
	for ci, cc := range cases {
		t.Run(cc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 41))
			m, err := NewCNN(cc.h, cc.w, c, filters, blocks, ways, cc.adaptBN)
			if err != nil {
				t.Fatal(err)
			}
			m.tune.winograd = cc.wino
			if cc.chunked {
				m.tune.chunkValues = 1
			}
			ref := reference.CNN{H: cc.h, W: cc.w, C: c, Filters: filters, Blocks: blocks, Ways: ways, AdaptBN: cc.adaptBN, Eps: 1e-5}
			b := randomImages(rng, tasks, ways, shots, queries, cc.h, cc.w, c)
			w := m.Init(rng)
			for i := range w { // break the symmetry of scale 1 and shift 0
				w[i] += 0.2 * rng.NormFloat64()
			}
			weights := []float64{0.7, 1.6}
			if ref.NumParams() != len(w) {
				t.Fatalf("reference has %d parameters, graph %d", ref.NumParams(), len(w))
			}
			total := func(w []float64) float64 {
				v, _, _ := reference.CNNMetaObjective(ref, w, b, weights, cc.alpha, cc.steps)
				return v
			}
			wantSecond := reference.CentralDiff(total, w, 1e-6)
			_, wantLosses, wantAcc := reference.CNNMetaObjective(ref, w, b, weights, cc.alpha, cc.steps)
			wantFirst := reference.CNNFirstOrderMetaGrad(ref, w, b, weights, cc.alpha, cc.steps)
			if d := relErr(wantFirst, wantSecond); d < 1e-2 {
				t.Fatalf("test problem too weak: first and second order differ by only %.2g", d)
			}
			for _, first := range []bool{false, true} {
				obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: tasks,
					Support: ways * shots, Query: ways * queries, InShape: m.InShape(), OutDim: ways,
					Steps: cc.steps, Alpha: cc.alpha, FirstOrder: first, MetaGradient: true})
				if err != nil {
					t.Fatal(err)
				}
				losses, acc, grad := make([]float64, tasks), make([]float64, tasks), make([]float64, len(w))
				for run := 0; run < 2; run++ { // the second run reuses recycled buffers
					if err := obj.LossesMetric(w, b, weights, losses, acc, grad); err != nil {
						t.Fatal(err)
					}
				}
				if d := relErr(losses, wantLosses); d > 1e-12 {
					t.Errorf("first order %v: losses %v, reference %v", first, losses, wantLosses)
				}
				want, tol := wantSecond, 1e-6
				if first {
					want, tol = wantFirst, 1e-10
				}
				d := relErr(grad, want)
				t.Logf("first order %v: meta-gradient relative error %.2g (orders differ by %.2g); accuracy %v",
					first, d, relErr(wantFirst, wantSecond), acc)
				if d > tol {
					t.Errorf("first order %v: meta-gradient relative error %.3g > %g", first, d, tol)
				}
				if !reflect.DeepEqual(acc, wantAcc) {
					t.Errorf("first order %v: accuracy %v, reference %v", first, acc, wantAcc)
				}
			}
		})
	}
}

// TestAccuracy checks the metric on hand-made logits, ties included.
func TestAccuracy(t *testing.T) {
	t.Parallel()
	pred := []float64{
		1, 2, 0, // -> 1
		3, 3, 1, // tie -> 0
		0, 0, 5, // -> 2
		2, 1, 0, // -> 0
	}
	y := []float64{0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}
	got := make([]float64, 2)
	Accuracy.PerTask(pred, y, 2, 3, got)
	if want := []float64{1, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("accuracy %v, want %v", got, want)
	}
}

var _ gorgonia.Op = (*op)(nil)

// TestCNNFloat32 builds the same objective in float32 and checks its losses,
// accuracies and second-order meta-gradient against float64. Its 16
// filters fill two 8-lane vectors per pixel, so the SIMD build runs its
// vector kernels here (internal/vec) on every float32 op; 9x7 images leave
// an odd last row and column out of the pooling windows, 8x8 ones are all
// windows (the one-pass batch-norm backward of ops_bnpool_back.go); every
// convolution runs once as chosen (im2col at these sizes) and once on each
// Winograd path, F(2x2, 3x3) and F(4x4, 3x3) (winograd.go). The batch-norm scales and shifts are drawn with both signs
// (a negative scale turns the pooling's maxima into minima of the raw
// activations).
func TestCNNFloat32(t *testing.T) {
	for _, c := range []struct {
		h, w int
		wino int // tuning.winograd
	}{{9, 7, 0}, {8, 8, 0}, {9, 7, 2}, {8, 8, 2}, {9, 7, 4}, {8, 8, 4}} {
		t.Run(fmt.Sprintf("%dx%d, Winograd tiles %d", c.h, c.w, c.wino), func(t *testing.T) {
			cnnFloat32(t, c.h, c.w, tuning{winograd: c.wino})
		})
	}
}

func cnnFloat32(t *testing.T, h, w int, tune tuning) {
	rng := rand.New(rand.NewPCG(5, 5))
	m, err := NewCNN(h, w, 1, 16, 2, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	m.tune = tune
	b := randomImages(rng, 3, 3, 1, 2, h, w, 1)
	wt := m.Init(rng)
	off, cin := 0, m.C
	for l := 0; l < m.Blocks; l++ {
		off += 9*cin*m.Filters + m.Filters // kernel and conv bias
		for i := off; i < off+2*m.Filters; i++ {
			wt[i] = math.Copysign(0.5+rng.Float64(), rng.NormFloat64()) // gamma, beta
		}
		off, cin = off+2*m.Filters, m.Filters
	}
	weights := []float64{0.2, 0.3, 0.5}
	var losses, acc, grads [2][]float64
	for k, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 3, Support: 3, Query: 6,
			InShape: m.InShape(), OutDim: 3, Steps: 2, Alpha: 0.3, MetaGradient: true, Dtype: dt})
		if err != nil {
			t.Fatal(err)
		}
		losses[k], acc[k], grads[k] = make([]float64, 3), make([]float64, 3), make([]float64, len(wt))
		if err := obj.LossesMetric(wt, b, weights, losses[k], acc[k], grads[k]); err != nil {
			t.Fatal(err)
		}
	}
	dl, dg := relErr(losses[1], losses[0]), relErr(grads[1], grads[0])
	t.Logf("float32 vs float64: losses %.2g, meta-gradient %.2g", dl, dg)
	if dl > 1e-5 || dg > 1e-4 || !reflect.DeepEqual(acc[0], acc[1]) {
		t.Errorf("float32 losses %v (float64 %v), accuracy %v (%v), meta-gradient relative error %.3g",
			losses[1], losses[0], acc[1], acc[0], dg)
	}
}

// TestBuffersRecycled checks the liveness planning: after a run of the
// CNN's second-order graph, the large buffers in existence (held by ops or
// free in the pool) add up to less than nine tenths of the large values the
// run computed, and a second run allocates none. Most values of a
// second-order graph stay alive until the backward sweeps use them, and the
// fused batch-norm and pooling ops (ops_bnpool.go) leave few short-lived
// large values: measured 84% (54% before the fusion, which computed more
// large values and held more memory).
func TestBuffersRecycled(t *testing.T) {
	t.Parallel()
	m, err := NewCNN(16, 16, 1, 8, 2, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Tasks: 4, Support: 3, Query: 30,
		InShape: m.InShape(), OutDim: 3, Steps: 1, Alpha: 0.1, MetaGradient: true, Dtype: tensor.Float32})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	b := randomImages(rng, 4, 3, 1, 10, 16, 16, 1)
	w := m.Init(rng)
	losses, grad := make([]float64, 4), make([]float64, len(w))
	held := func() (values, buffers int) {
		seen := map[*tensor.Dense]bool{}
		for _, s := range obj.prog.Steps {
			if o, ok := s.Op.(*op); ok && o.arena != nil {
				values += o.outShape.TotalSize()
				if o.buf != nil && !seen[o.buf] {
					seen[o.buf] = true
					buffers += o.buf.Shape().TotalSize()
				}
			}
		}
		for _, d := range obj.programs()[0].Pool.Free() {
			if !seen[d] {
				seen[d] = true
				buffers += d.Shape().TotalSize()
			}
		}
		return values, buffers
	}
	if err := obj.Losses(w, b, []float64{1, 1, 1, 1}, losses, grad); err != nil {
		t.Fatal(err)
	}
	values, buffers := held()
	t.Logf("large values computed per run: %d floats; large buffers held: %d floats", values, buffers)
	if values == 0 || 10*buffers > 9*values { // measured: 84%
		t.Errorf("buffers hold %d floats for %d floats of large values: liveness recycling is not working", buffers, values)
	}
	if err := obj.Losses(w, b, []float64{1, 1, 1, 1}, losses, grad); err != nil {
		t.Fatal(err)
	}
	if _, again := held(); again != buffers {
		t.Errorf("the second run changed the buffers held from %d to %d floats", buffers, again)
	}
}

// TestShareBuffers checks that an evaluation objective sharing the training
// objective's buffer pool computes, called in turn with it, exactly what it
// computes alone (and the training objective too), and that it takes its
// large buffers from what training left in the pool instead of adding its
// own set: the pool grows by less than a tenth of the evaluation graph's own
// large buffers.
func TestShareBuffers(t *testing.T) {
	t.Parallel()
	m, err := NewCNN(16, 16, 1, 8, 2, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 4, Support: 3, Query: 30,
		InShape: m.InShape(), OutDim: 3, Steps: 1, Alpha: 0.1, MetaGradient: true, Dtype: tensor.Float32}
	build := func(eval bool) *Objective {
		s := spec
		s.MetaGradient = !eval
		if eval {
			s.Lanes = 2 // graphs of half the tasks, which borrow training's buffers
		}
		obj, err := NewObjective(s)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	rng := rand.New(rand.NewPCG(4, 4))
	b := randomImages(rng, 4, 3, 1, 10, 16, 16, 1)
	w := m.Init(rng)
	weights := []float64{0.1, 0.2, 0.3, 0.4}
	type result struct{ losses, acc, grad []float64 }
	call := func(obj *Objective, eval bool) result {
		r := result{make([]float64, 4), make([]float64, 4), make([]float64, len(w))}
		ws := weights
		if eval {
			r.grad, ws = nil, nil
		}
		if err := obj.LossesMetric(w, b, ws, r.losses, r.acc, r.grad); err != nil {
			t.Fatal(err)
		}
		return r
	}
	pooled := func(obj *Objective) (floats int) {
		for _, d := range obj.programs()[0].Pool.Free() {
			floats += d.Shape().TotalSize()
		}
		return floats
	}
	trainAlone, evalAlone := build(false), build(true)
	wantTrain, wantEval := call(trainAlone, false), call(evalAlone, true)
	train, eval := build(false), build(true)
	eval.ShareBuffers(train)
	for round := 0; round < 2; round++ {
		if got := call(train, false); !reflect.DeepEqual(got, wantTrain) {
			t.Errorf("round %d: training with a shared pool computed %v, alone %v", round, got, wantTrain)
		}
		before := pooled(train)
		if got := call(eval, true); !reflect.DeepEqual(got, wantEval) {
			t.Errorf("round %d: evaluation with a shared pool computed %v, alone %v", round, got, wantEval)
		}
		grown, own := pooled(train)-before, pooled(evalAlone)
		t.Logf("round %d: training leaves %d floats in the pool, evaluation adds %d (alone it holds %d)", round, before, grown, own)
		if own == 0 || 10*grown >= own {
			t.Errorf("round %d: evaluation added %d floats to the shared pool, alone it holds %d", round, grown, own)
		}
	}
	// Evaluation first, as a run's evaluation at iteration 0: its lanes
	// allocate buffers of the size of a graph of all its tasks, which
	// training takes over.
	train, eval = build(false), build(true)
	eval.ShareBuffers(train)
	for round := 0; round < 2; round++ {
		if got := call(eval, true); !reflect.DeepEqual(got, wantEval) {
			t.Errorf("evaluation first, round %d: computed %v, alone %v", round, got, wantEval)
		}
		if got := call(train, false); !reflect.DeepEqual(got, wantTrain) {
			t.Errorf("evaluation first, round %d: training computed %v, alone %v", round, got, wantTrain)
		}
	}
	if both, alone := train.bufferBytes(), trainAlone.bufferBytes(); 10*(both-alone) >= alone {
		t.Errorf("evaluation first: the shared pool holds %d bytes, training alone %d", both, alone)
	}
}

// TestCNNIndependentOfGOMAXPROCS: the elementwise ops split their values
// into pieces over the goroutines (parallelElems), so the CNN objective's
// losses, accuracies and meta-gradient are the same bit for bit on 1, 2, 3
// and 8 goroutines, as a run resumed on another machine needs.
func TestCNNIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const tasks, ways, shots, queries, h, w, filters = 2, 3, 1, 4, 7, 6, 4
	rng := rand.New(rand.NewPCG(8, 8))
	b := randomImages(rng, tasks, ways, shots, queries, h, w, 1)
	m, err := NewCNN(h, w, 1, filters, 2, ways, false)
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(rng)
	run := func(procs int) []float64 {
		runtime.GOMAXPROCS(procs)
		obj, err := newObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: tasks,
			Support: ways * shots, Query: ways * queries, InShape: m.InShape(), OutDim: ways,
			Steps: 2, Alpha: 0.3, MetaGradient: true}, tuning{elemsPiece: 64}) // pieces of the test's small tensors
		if err != nil {
			t.Fatal(err)
		}
		losses, acc, grad := make([]float64, tasks), make([]float64, tasks), make([]float64, len(params))
		if err := obj.LossesMetric(params, b, []float64{1, 0.5}, losses, acc, grad); err != nil {
			t.Fatal(err)
		}
		return append(append(losses, acc...), grad...)
	}
	want := run(1)
	for _, procs := range []int{2, 3, 8} {
		if got := run(procs); !slices.Equal(got, want) {
			t.Errorf("values on %d goroutines differ from those on one", procs)
		}
	}
}
