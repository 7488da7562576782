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
	// UniformFanIn draws each layer's weights and biases from
	// U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's nn.Linear default.
	UniformFanIn Init = "uniform_fan_in"
	// UniformFanOut draws each layer's weights and biases from
	// U(-1/sqrt(fan_out), 1/sqrt(fan_out)): the PyTorch MLP of CAVIA's
	// regression code, which the DR-MAML authors' sinusoid code (AR-MAML)
	// reuses.
	UniformFanOut Init = "uniform_fan_out"
)

// Inits lists the schemes Init accepts.
var Inits = []Init{TruncatedNormal, He, UniformFanIn, UniformFanOut}

// Init returns freshly initialised flat parameters for m, drawn from rng
// (std is used by TruncatedNormal only).
func (m MLP) Init(scheme Init, std float64, rng *rand.Rand) ([]float64, error) {
	var w []float64
	for l := 0; l+1 < len(m.Sizes); l++ {
		in, out := m.Sizes[l], m.Sizes[l+1]
		switch scheme {
		case TruncatedNormal, He:
			sd := std
			if scheme == He {
				sd = math.Sqrt(2 / float64(in))
			}
			for range in * out {
				z := rng.NormFloat64()
				for scheme == TruncatedNormal && math.Abs(z) > 2 {
					z = rng.NormFloat64()
				}
				w = append(w, sd*z)
			}
			w = append(w, make([]float64, out)...) // biases
		case UniformFanIn, UniformFanOut:
			fan := in
			if scheme == UniformFanOut {
				fan = out
			}
			bound := 1 / math.Sqrt(float64(fan))
			for range in*out + out { // weights, then biases
				w = append(w, bound*(2*rng.Float64()-1))
			}
		default:
			return nil, fmt.Errorf("graph: unknown initialisation %q (allowed: %v)", scheme, Inits)
		}
	}
	return w, nil
}
