package metalearn

import (
	"fmt"
	"math"
)

// Schedule gives the meta learning rate of every iteration. It depends on
// the iteration alone, so a resumed run follows it exactly.
type Schedule interface {
	// LR is the learning rate of the update from iteration t to t+1
	// (t = 0, 1, ...).
	LR(t int) float64
}

// Constant keeps the learning rate fixed.
type Constant float64

// LR implements Schedule.
func (c Constant) LR(int) float64 { return float64(c) }

// Cosine anneals the learning rate from Max at iteration 0 to Min at
// iteration Iterations along half a cosine, as PyTorch's
// CosineAnnealingLR that the authors' Omniglot code uses:
// lr_t = Min + (Max - Min) (1 + cos(pi t / Iterations)) / 2.
// Past Iterations it stays at Min.
type Cosine struct {
	Max, Min   float64
	Iterations int
}

// LR implements Schedule.
func (c Cosine) LR(t int) float64 {
	frac := min(float64(t)/float64(c.Iterations), 1)
	return c.Min + (c.Max-c.Min)*(1+math.Cos(math.Pi*frac))/2
}

// NewSchedule returns the schedule called name: "constant" (lr throughout)
// or "cosine" (from lr to lrMin over iterations).
func NewSchedule(name string, lr, lrMin float64, iterations int) (Schedule, error) {
	switch name {
	case "constant":
		return Constant(lr), nil
	case "cosine":
		if iterations < 1 {
			return nil, fmt.Errorf("metalearn: a cosine schedule needs at least one iteration, got %d", iterations)
		}
		return Cosine{Max: lr, Min: lrMin, Iterations: iterations}, nil
	}
	return nil, fmt.Errorf("metalearn: unknown learning-rate schedule %q (allowed: constant, cosine)", name)
}

// LRSetter is an Optimizer whose learning rate a Schedule can set between
// steps: Rate reports the rate, SetLR changes it.
type LRSetter interface {
	Rate() float64
	SetLR(lr float64)
}

// SetLR implements LRSetter.
func (o *SGD) SetLR(lr float64) { o.LR = lr }

// SetLR implements LRSetter.
func (o *Adam) SetLR(lr float64) { o.LR = lr }

// Rate implements LRSetter.
func (o *SGD) Rate() float64 { return o.LR }

// Rate implements LRSetter.
func (o *Adam) Rate() float64 { return o.LR }

// scheduleStep sets opt's learning rate to s's rate for the update from
// iteration t; the Trainer calls it before that update and calls restore
// after it. restore puts back the rate opt had, its base rate, so that the
// optimizer's saved state, and any check of it against a config, never
// depends on the schedule.
func scheduleStep(opt Optimizer, s Schedule, t int) (restore func(), err error) {
	o, ok := opt.(LRSetter)
	if !ok {
		return nil, fmt.Errorf("metalearn: optimizer %T has no settable learning rate for a schedule", opt)
	}
	base := o.Rate()
	o.SetLR(s.LR(t))
	return func() { o.SetLR(base) }, nil
}
