// Package gradcheck checks a model's or an inner loop's meta-gradient
// against finite differences of the full two-level objective: the
// objective's own value (the query loss after the inner loop, weighted by
// task) differentiated numerically with respect to every meta-parameter,
// the model's and the loop's. Code outside this module imports it to test
// its own models and loops the way the built-in ones are tested.
package gradcheck

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/metalearn"
)

// Result is a meta-gradient and its finite-difference estimate.
type Result struct {
	// Grad is the objective's meta-gradient, FD its central differences.
	Grad, FD []float64
	// RelErr is |Grad - FD| / |FD| in the Euclidean norm.
	RelErr float64
}

// MetaGradient builds spec twice, with and without the meta-gradient, and
// compares the meta-gradient of sum_t weights[t] L_t at w on batch b with
// central differences of step h of the value graph (h about 1e-6 in
// float64). spec's MetaGradient is ignored. Use float64 (the default
// Dtype): float32 leaves too few digits for differences.
func MetaGradient(spec graph.Spec, w []float64, b *metalearn.Batch, weights []float64, h float64) (Result, error) {
	spec.MetaGradient = false
	value, err := graph.NewObjective(spec)
	if err != nil {
		return Result{}, err
	}
	spec.MetaGradient = true
	obj, err := graph.NewObjective(spec)
	if err != nil {
		return Result{}, err
	}
	if len(w) != obj.NumParams() {
		return Result{}, fmt.Errorf("gradcheck: %d parameters, the objective has %d", len(w), obj.NumParams())
	}
	if len(weights) != obj.Tasks() {
		return Result{}, fmt.Errorf("gradcheck: %d task weights, the objective has %d tasks", len(weights), obj.Tasks())
	}
	losses := make([]float64, obj.Tasks())
	grad := make([]float64, len(w))
	if err := obj.Losses(w, b, weights, losses, grad); err != nil {
		return Result{}, err
	}
	var ferr error
	fd := CentralDiff(func(w []float64) float64 {
		if err := value.Losses(w, b, weights, losses, nil); err != nil && ferr == nil {
			ferr = err
		}
		total := 0.0
		for t, l := range losses {
			total += weights[t] * l
		}
		return total
	}, w, h)
	if ferr != nil {
		return Result{}, ferr
	}
	return Result{Grad: grad, FD: fd, RelErr: RelErr(grad, fd)}, nil
}

// CentralDiff approximates the gradient of f at w by central differences
// (f(w+h e_i) - f(w-h e_i)) / 2h in every coordinate. It perturbs a copy,
// so w is left unchanged; with float64 and h around 1e-6 it is accurate to
// roughly 1e-8 relative for smooth f.
func CentralDiff(f func([]float64) float64, w []float64, h float64) []float64 {
	return reference.CentralDiff(f, w, h)
}

// RelErr is |got - want| / |want| in the Euclidean norm.
func RelErr(got, want []float64) float64 {
	var d, n float64
	for i := range got {
		d += (got[i] - want[i]) * (got[i] - want[i])
		n += want[i] * want[i]
	}
	return math.Sqrt(d / math.Max(n, 1e-300))
}
