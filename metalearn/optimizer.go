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
