package innerloops_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/graph/gradcheck"
	"github.com/trmaml/trmaml/metalearn"
	"gonum.org/v1/gonum/floats"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MetaSGD is Meta-SGD's inner loop (Li et al., 2017): Steps steps
// theta <- theta - rate * grad, elementwise, with one learned step size per
// adapted model parameter. The step sizes are meta-parameters: they follow
// the model's in the flat parameter vector, one tensor of the parameter's
// shape per adapted tensor, and get their own meta-gradient.
type MetaSGD struct{ Steps int }

// ParamShapes implements graph.InnerLoop: a step size per adapted parameter.
func (l MetaSGD) ParamShapes(model []tensor.Shape, adapted []bool) []tensor.Shape {
	var rates []tensor.Shape
	for i, s := range model {
		if adapted[i] {
			rates = append(rates, s.Clone())
		}
	}
	return rates
}

// Adapt implements graph.InnerLoop.
func (l MetaSGD) Adapt(s *graph.Support, theta, own gorgonia.Nodes) (gorgonia.Nodes, error) {
	rates := make(gorgonia.Nodes, len(theta))
	for i, a := range s.Adapted {
		if a {
			rates[i], own = own[0], own[1:]
		}
	}
	for step := 0; step < l.Steps; step++ {
		grads, err := s.Gradients(theta, nil, false) // exact second order
		if err != nil {
			return nil, err
		}
		if theta, err = graph.ScaledStep(theta, grads, rates); err != nil {
			return nil, err
		}
	}
	return theta, nil
}

// Meta-SGD on sine regression: an MLP adapted by two steps of MetaSGD, its
// meta-gradient with respect to the weights and the step sizes checked
// against central differences of the two-level objective itself.
func Example() {
	const tasks, k, j = 3, 5, 5
	mlp, err := graph.NewMLP([]int{1, 8, 1}, graph.Tanh)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := graph.Spec{Model: mlp, Loss: graph.MSELoss, Tasks: tasks, Support: k, Query: j,
		InShape: []int{1}, OutDim: 1, Inner: MetaSGD{Steps: 2}}
	value, err := graph.NewObjective(spec) // the objective alone
	if err != nil {
		fmt.Println(err)
		return
	}
	spec.MetaGradient = true
	obj, err := graph.NewObjective(spec) // and its meta-gradient
	if err != nil {
		fmt.Println(err)
		return
	}

	rng := rand.New(rand.NewPCG(1, 2))
	b := sineTasks(rng, tasks, k, j)
	model := 0 // the MLP's parameters come first, then the step sizes
	for _, s := range mlp.ParamShapes() {
		model += s.TotalSize()
	}
	w := make([]float64, obj.NumParams())
	for i := range w {
		if i < model {
			w[i] = 0.8 * rng.NormFloat64()
		} else {
			w[i] = 0.1 + 0.05*rng.Float64() // step sizes near 0.1
		}
	}
	weights := []float64{1, 0.5, 2}
	losses, grad := make([]float64, tasks), make([]float64, len(w))
	if err := obj.Losses(w, b, weights, losses, grad); err != nil {
		fmt.Println(err)
		return
	}
	total := func(w []float64) float64 { // sum_t weights_t L_t(adapted w)
		if err := value.Losses(w, b, weights, losses, nil); err != nil {
			panic(err)
		}
		return floats.Dot(weights, losses)
	}
	fd := gradcheck.CentralDiff(total, w, 1e-6)
	fmt.Printf("%d weights, %d step sizes\n", model, len(w)-model)
	fmt.Println("weights' meta-gradient matches finite differences:", gradcheck.RelErr(grad[:model], fd[:model]) < 1e-6)
	fmt.Println("step sizes' meta-gradient matches finite differences:", gradcheck.RelErr(grad[model:], fd[model:]) < 1e-6)
	// Output:
	// 25 weights, 25 step sizes
	// weights' meta-gradient matches finite differences: true
	// step sizes' meta-gradient matches finite differences: true
}

// sineTasks fills a batch with sine regression tasks of random amplitude
// and phase, x uniform on [-5, 5].
func sineTasks(rng *rand.Rand, tasks, k, j int) *metalearn.Batch {
	b := metalearn.NewBatch(tasks, k, j, 1, 1)
	for t := 0; t < tasks; t++ {
		amp, phase := 0.1+4.9*rng.Float64(), math.Pi*rng.Float64()
		sx, sy, qx, qy := b.Row(t)
		for _, set := range [][2][]float64{{sx, sy}, {qx, qy}} {
			for p := range set[0] {
				set[0][p] = 10*rng.Float64() - 5
				set[1][p] = amp * math.Sin(set[0][p]-phase)
			}
		}
	}
	return b
}
