package graph

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/metalearn"
)

// randomBatch fills a batch with smooth nonlinear targets so that the
// second-order terms of the meta-gradient are far from negligible.
func randomBatch(rng *rand.Rand, tasks, k, j, in int) *metalearn.Batch {
	b := metalearn.NewBatch(tasks, k, j, in, 1)
	fill := func(x, y []float64, a, ph float64) {
		for p := range y {
			s := 0.0
			for d := 0; d < in; d++ {
				x[p*in+d] = rng.Float64()*4 - 2
				s += x[p*in+d]
			}
			y[p] = a * math.Sin(s-ph)
		}
	}
	for t := 0; t < tasks; t++ {
		sx, sy, qx, qy := b.Row(t)
		a, ph := 0.5+2*rng.Float64(), 3*rng.Float64()
		fill(sx, sy, a, ph)
		fill(qx, qy, a, ph)
	}
	return b
}

func randomParams(rng *rand.Rand, n int, std float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = std * rng.NormFloat64()
	}
	return w
}

func relErr(got, want []float64) float64 {
	var d, n float64
	for i := range got {
		d += (got[i] - want[i]) * (got[i] - want[i])
		n += want[i] * want[i]
	}
	return math.Sqrt(d / math.Max(n, 1e-300))
}

// firstOrderReference is the first-order MAML gradient computed in plain Go:
// sum_t weights_t * grad L_query(theta_S) with d theta_S / d w taken as I.
func firstOrderReference(m reference.MLP, w []float64, b *metalearn.Batch, weights []float64, alpha float64, steps int) []float64 {
	out := make([]float64, len(w))
	for t := 0; t < b.Tasks; t++ {
		sx, sy, qx, qy := b.Row(t)
		theta := append([]float64(nil), w...)
		for s := 0; s < steps; s++ {
			_, g := m.LossGrad(theta, sx, sy)
			for i := range theta {
				theta[i] -= alpha * g[i]
			}
		}
		_, g := m.LossGrad(theta, qx, qy)
		for i := range out {
			out[i] += weights[t] * g[i]
		}
	}
	return out
}

// TestMetaGradientMatchesFiniteDifferences compares the graph's meta-gradient
// with central differences of the full two-level objective computed by the
// independent plain-Go reference, and its first-order variant with the
// plain-Go first-order gradient. It also checks that the two orders differ
// clearly, so that dropping the second-order terms cannot pass.
func TestMetaGradientMatchesFiniteDifferences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		sizes []int
		act   Activation
		steps int
		alpha float64
	}{
		{"tanh one step", []int{1, 6, 5, 1}, Tanh, 1, 0.3},
		{"tanh two steps", []int{1, 6, 5, 1}, Tanh, 2, 0.2},
		{"relu one step", []int{1, 8, 8, 1}, ReLU, 1, 0.3},
		{"relu two steps", []int{2, 7, 1}, ReLU, 2, 0.2},
		{"softplus two steps", []int{1, 5, 1}, Softplus, 2, 0.3},
		{"sigmoid one step", []int{1, 5, 1}, Sigmoid, 1, 0.5},
		// 12x12 hidden weights: their per-task gradients from K = 4 points
		// are thin products (ops_tasks.go), so the meta-gradient goes
		// through bmmSum, the products through 4 rows and the adapted step.
		{"relu one step, thin gradients", []int{1, 12, 12, 1}, ReLU, 1, 0.3},
		{"tanh two steps, thin gradients", []int{1, 12, 12, 1}, Tanh, 2, 0.2},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			const tasks, k, j = 3, 4, 5
			mlp, err := NewMLP(c.sizes, c.act)
			if err != nil {
				t.Fatal(err)
			}
			ref := reference.MLP{Sizes: c.sizes, Activation: string(c.act)}
			b := randomBatch(rng, tasks, k, j, c.sizes[0])
			w := randomParams(rng, ref.NumParams(), 0.7)
			weights := []float64{0.5, 1.5, 0.25}

			total := func(w []float64) float64 {
				v, _ := reference.MetaObjective(ref, w, b, weights, c.alpha, c.steps)
				return v
			}
			wantSecond := reference.CentralDiff(total, w, 1e-6)
			_, wantLosses := reference.MetaObjective(ref, w, b, weights, c.alpha, c.steps)
			wantFirst := firstOrderReference(ref, w, b, weights, c.alpha, c.steps)
			if d := relErr(wantFirst, wantSecond); d < 1e-2 {
				t.Fatalf("test problem too weak: first and second order differ by only %.2g", d)
			}

			for _, first := range []bool{false, true} {
				obj, err := NewObjective(Spec{Model: mlp, Tasks: tasks, Support: k, Query: j, Loss: MSELoss, InShape: c.sizes[:1], OutDim: 1,
					Steps: c.steps, Alpha: c.alpha, FirstOrder: first, MetaGradient: true})
				if err != nil {
					t.Fatal(err)
				}
				losses := make([]float64, tasks)
				grad := make([]float64, len(w))
				// Run twice: the second run checks that rebinding inputs reuses the tape correctly.
				for run := 0; run < 2; run++ {
					if err := obj.Losses(w, b, weights, losses, grad); err != nil {
						t.Fatal(err)
					}
				}
				if d := relErr(losses, wantLosses); d > 1e-12 {
					t.Errorf("first order %v: losses %v, reference %v", first, losses, wantLosses)
				}
				want, tol := wantSecond, 1e-6
				if first {
					want, tol = wantFirst, 1e-12
				}
				d := relErr(grad, want)
				t.Logf("first order %v: meta-gradient relative error %.2g", first, d)
				if d > tol {
					t.Errorf("first order %v: meta-gradient relative error %.3g > %g", first, d, tol)
				}
			}
		})
	}
}

// TestObjectiveRebindsInputs checks that new data and parameters are picked
// up by the compiled tape on every call.
func TestObjectiveRebindsInputs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 5, 1}
	mlp, _ := NewMLP(sizes, Tanh)
	ref := reference.MLP{Sizes: sizes, Activation: "tanh"}
	obj, err := NewObjective(Spec{Model: mlp, Tasks: 2, Support: 3, Query: 3, Loss: MSELoss, InShape: []int{1}, OutDim: 1, Steps: 1, Alpha: 0.1, MetaGradient: true})
	if err != nil {
		t.Fatal(err)
	}
	weights := []float64{1, 1}
	for i := 0; i < 3; i++ {
		b := randomBatch(rng, 2, 3, 3, 1)
		w := randomParams(rng, ref.NumParams(), 0.5)
		losses, grad := make([]float64, 2), make([]float64, len(w))
		if err := obj.Losses(w, b, weights, losses, grad); err != nil {
			t.Fatal(err)
		}
		_, want := reference.MetaObjective(ref, w, b, weights, 0.1, 1)
		if d := relErr(losses, want); d > 1e-12 {
			t.Fatalf("call %d: losses %v, want %v", i, losses, want)
		}
	}
}

// TestLossesIndependentOfGOMAXPROCS: an MLP large enough for a goroutine
// per task gives the same losses and meta-gradient, bit for bit, on one
// and on two goroutines, whether the graph is built and run under either:
// how tasks' products are grouped (ops_tasks.go, the tiled bmm) depends on
// their size only, so a run resumed on another machine continues exactly.
func TestLossesIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	sizes := []int{1, 64, 64, 1}
	const tasks, k, j = 4, 10, 10
	rng := rand.New(rand.NewPCG(3, 9))
	b := randomBatch(rng, tasks, k, j, 1)
	mlp, err := NewMLP(sizes, ReLU)
	if err != nil {
		t.Fatal(err)
	}
	w := randomParams(rng, reference.MLP{Sizes: sizes, Activation: string(ReLU)}.NumParams(), 0.3)
	weights := []float64{1, 0.5, 2, 0.25}
	run := func(procs int, meta bool) ([]float64, []float64) {
		runtime.GOMAXPROCS(procs)
		obj, err := NewObjective(Spec{Model: mlp, Tasks: tasks, Support: k, Query: j, Loss: MSELoss, InShape: sizes[:1], OutDim: 1,
			Steps: 1, Alpha: 0.1, MetaGradient: meta})
		if err != nil {
			t.Fatal(err)
		}
		losses, ws, grad := make([]float64, tasks), weights, make([]float64, len(w))
		if !meta {
			ws, grad = nil, nil
		}
		if err := obj.Losses(w, b, ws, losses, grad); err != nil {
			t.Fatal(err)
		}
		return losses, grad
	}
	l1, g1 := run(1, true)
	l2, g2 := run(2, true)
	if !slices.Equal(l1, l2) {
		t.Errorf("losses on 1 and 2 goroutines differ: %v, %v", l1, l2)
	}
	// The evaluation's (no meta-gradient; the MLP's small tasks keep one
	// graph).
	if e1, e2 := first(run(1, false)), first(run(2, false)); !slices.Equal(e1, e2) || !slices.Equal(e1, l1) {
		t.Errorf("evaluation losses on 1 and 2 goroutines: %v, %v; with the meta-gradient %v", e1, e2, l1)
	}
	diff := 0
	for i := range g1 {
		if g1[i] != g2[i] {
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d meta-gradient values differ between 1 and 2 goroutines", diff, len(g1))
	}
}

func first[A, B any](a A, _ B) A { return a }

// embeddedCNN is a user's model that embeds CNN, inheriting its forwardPass.
type embeddedCNN struct{ CNN }

// TestForwardPassOnlyForItself: a CNN, or a pointer to one, gives its
// cheaper passes for the Spec's model that is itself, and none for a type
// that embeds it, another CNN or the trained pass (Forward).
func TestForwardPassOnlyForItself(t *testing.T) {
	m := first(NewCNN(28, 28, 1, 16, 2, 5, false))
	other := m
	other.Filters = 8
	for _, c := range []struct {
		name  string
		model Model
		p     pass
		want  bool
	}{
		{"CNN, values", m, valuesPass, true},
		{"CNN, once", m, oncePass, true},
		{"*CNN, once", &m, oncePass, true},
		{"CNN, trained", m, trainedPass, false},
		{"embedding type", embeddedCNN{m}, valuesPass, false},
		{"another CNN", other, valuesPass, false},
	} {
		if got := m.forwardPass(c.p, c.model) != nil; got != c.want {
			t.Errorf("%s: a pass %v, want %v", c.name, got, c.want)
		}
	}
}
