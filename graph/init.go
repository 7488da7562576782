package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Init names a weight initialisation scheme for an MLP.
type Init string

const (
	// TruncatedNormal draws weights from a normal distribution with the given
	// standard deviation, redrawing values beyond two deviations, and sets
	// biases to zero: the MAML reference code's initialisation (std 0.01).
	TruncatedNormal Init = "truncated_normal"
	// He draws weights from N(0, 2/fan_in) (Kaiming normal, suited to ReLU)
	// and sets biases to zero.
	He Init = "he"
)

// Init returns freshly initialised flat parameters for m, drawn from rng.
func (m MLP) Init(scheme Init, std float64, rng *rand.Rand) ([]float64, error) {
	var w []float64
	for _, s := range m.ParamShapes() {
		if len(s) == 1 { // bias
			w = append(w, make([]float64, s[0])...)
			continue
		}
		sd := std
		switch scheme {
		case TruncatedNormal:
		case He:
			sd = math.Sqrt(2 / float64(s[0]))
		default:
			return nil, fmt.Errorf("graph: unknown initialisation %q (allowed: truncated_normal, he)", scheme)
		}
		for i := 0; i < s.TotalSize(); i++ {
			z := rng.NormFloat64()
			for scheme == TruncatedNormal && math.Abs(z) > 2 {
				z = rng.NormFloat64()
			}
			w = append(w, sd*z)
		}
	}
	return w, nil
}
