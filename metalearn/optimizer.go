package metalearn

import (
	"fmt"
	"math"
)

// Optimizer updates the meta-parameters w from a stochastic meta-gradient.
// Its exported fields are its whole state, so a checkpoint can save and
// restore it by value.
type Optimizer interface {
	// Step moves w against grad in place.
	Step(w, grad []float64)
	// Check reports state that does not fit n parameters after steps
	// steps, or that is not finite, naming the field; a restored optimizer
	// must pass it, and training stops when a step breaks it.
	Check(n, steps int) error
}

// SGD is plain stochastic gradient descent, w <- w - LR * grad: the update
// of w that Algorithm 1 analyses.
type SGD struct {
	LR float64
}

// Step implements Optimizer.
func (o *SGD) Step(w, grad []float64) {
	for i, g := range grad {
		w[i] -= o.LR * g
	}
}

// Check implements Optimizer.
func (o *SGD) Check(n, steps int) error {
	return finiteNonNegative("LR", o.LR)
}

// Adam is the Adam optimizer in the form of TensorFlow 1's AdamOptimizer,
// which the MAML and TR-MAML sine experiments used: the bias corrections fold
// into the step size, lr_t = LR * sqrt(1 - Beta2^t) / (1 - Beta1^t), and
// w <- w - lr_t * m / (sqrt(v) + Epsilon).
type Adam struct {
	LR, Beta1, Beta2, Epsilon float64
	// M and V are the first and second moment estimates, T the step count.
	M, V []float64
	T    int
}

// NewAdam returns Adam with TensorFlow's defaults (0.9, 0.999, 1e-8) for n
// parameters.
func NewAdam(lr float64, n int) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, M: make([]float64, n), V: make([]float64, n)}
}

// Step implements Optimizer.
func (o *Adam) Step(w, grad []float64) {
	o.T++
	t := float64(o.T)
	lr := o.LR * math.Sqrt(1-math.Pow(o.Beta2, t)) / (1 - math.Pow(o.Beta1, t))
	for i, g := range grad {
		o.M[i] = o.Beta1*o.M[i] + (1-o.Beta1)*g
		o.V[i] = o.Beta2*o.V[i] + (1-o.Beta2)*g*g
		w[i] -= lr * o.M[i] / (math.Sqrt(o.V[i]) + o.Epsilon)
	}
}

// Check implements Optimizer: M and V have n finite entries, V's are >= 0,
// T counts the steps, and the hyperparameters are in range.
func (o *Adam) Check(n, steps int) error {
	switch {
	case len(o.M) != n:
		return fmt.Errorf("M has %d entries, want %d (one per parameter)", len(o.M), n)
	case len(o.V) != n:
		return fmt.Errorf("V has %d entries, want %d (one per parameter)", len(o.V), n)
	case o.T != steps:
		return fmt.Errorf("T = %d, want %d (one per iteration)", o.T, steps)
	case !(o.Beta1 >= 0 && o.Beta1 < 1) || !(o.Beta2 >= 0 && o.Beta2 < 1):
		return fmt.Errorf("Beta1 = %v, Beta2 = %v: must be in [0, 1)", o.Beta1, o.Beta2)
	}
	if err := finiteNonNegative("LR", o.LR); err != nil {
		return err
	}
	if !(o.Epsilon > 0) || math.IsInf(o.Epsilon, 0) {
		return fmt.Errorf("Epsilon = %v: must be finite and > 0", o.Epsilon)
	}
	for i := range o.M {
		if m := o.M[i]; math.IsNaN(m) || math.IsInf(m, 0) {
			return fmt.Errorf("M[%d] = %v: must be finite", i, m)
		}
		if v := o.V[i]; !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("V[%d] = %v: must be finite and >= 0", i, v)
		}
	}
	return nil
}

// finiteNonNegative checks a learning rate; 0 (w frozen) is allowed.
func finiteNonNegative(field string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s = %v: must be finite and >= 0", field, v)
	}
	return nil
}

// NewOptimizer returns the optimizer called name ("adam" or "sgd") with
// learning rate lr for n parameters.
func NewOptimizer(name string, lr float64, n int) (Optimizer, error) {
	switch name {
	case "adam":
		return NewAdam(lr, n), nil
	case "sgd":
		return &SGD{LR: lr}, nil
	}
	return nil, fmt.Errorf("metalearn: unknown optimizer %q (allowed: adam, sgd)", name)
}
