package custommodel

import (
	"math"
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/models"
)

// Name is ResConv's model.kind: a config chooses it with
// model: {kind: resconv, resconv: {filters: 8}} once a program imports this
// package.
const Name = "resconv"

// Config is the section model.resconv.
type Config struct {
	// Filters >= 1 of both convolutions.
	Filters int `yaml:"filters"`
}

// Model registers ResConv: its config side with configs and its graph
// with models, from this package's init function; nothing in the framework
// names it.
type Model struct{}

func init() {
	configs.RegisterModel(Model{})
	models.Register(Name, Model{})
}

func (Model) Name() string    { return Name }
func (Model) NewSection() any { return &Config{Filters: 8} }

// Check refuses images its single 2x2 pool cannot halve and outputs that
// are not class scores.
func (Model) Check(c configs.Config, io configs.IO, k *configs.Checker) {
	s := c.Model.Section().(*Config)
	k.Between("model.resconv.filters", s.Filters, 1, 256)
	if io.Height < 2 || io.Width < 2 || io.Height%2 != 0 || io.Width%2 != 0 {
		k.Fail("model.kind", Name, "needs images of even height and width >= 2 for its 2x2 pool, the task family gives %s", io)
	}
	if !io.Classes {
		k.Fail("model.kind", Name, "is a classifier: the task family's outputs are not class scores (%s)", io)
	}
}

// Memory estimates the graphs roughly: every image's activations at full
// resolution, twice per filter, for support and query images of both
// graphs, in float64.
func (Model) Memory(c configs.Config, io configs.IO) configs.MemoryEstimate {
	f := float64(c.Model.Section().(*Config).Filters)
	perImage := 8 * 4 * f * float64(io.Height*io.Width)
	images := func(tasks, query int) float64 {
		return float64(tasks*io.Outputs) * float64(c.Task.Support*(c.Inner.Steps+1)+query)
	}
	return configs.MemoryEstimate{
		TrainGraph: 3 * perImage * images(c.Meta.Batch, c.Task.Query),
		EvalGraph:  perImage * images(c.Eval.Batch, c.Eval.Query),
	}
}

func (Model) Shrink(c configs.Config) []configs.Shrunk {
	s := *c.Model.Section().(*Config)
	small := s
	small.Filters = 1
	return []configs.Shrunk{{Path: "model.resconv.filters", Value: s.Filters, Section: &small}}
}

func (Model) CPUs(configs.Config) int { return 2 }

// Build implements models.Builder: He-initialised kernels and weights,
// zero biases and shifts, unit scales.
func (Model) Build(section any, io configs.IO) (models.Built, error) {
	m := ResConv{H: io.Height, W: io.Width, C: io.Channels, Filters: section.(*Config).Filters, Ways: io.Outputs}
	return models.Built{
		Net: m, InShape: []int{m.H, m.W, m.C}, Record: m,
		Init: func(rng *rand.Rand) ([]float64, error) {
			var w []float64
			for i, s := range m.ParamShapes() {
				n := s.TotalSize()
				switch {
				case len(s) == 2: // kernels and the linear weight
					std := math.Sqrt(2 / float64(s[0]))
					for range n {
						w = append(w, std*rng.NormFloat64())
					}
				case i == 1 || i == 5: // batch-norm scales
					for range n {
						w = append(w, 1)
					}
				default:
					w = append(w, make([]float64, n)...)
				}
			}
			return w, nil
		},
	}, nil
}
