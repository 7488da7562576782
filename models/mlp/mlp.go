// Package mlp is the fully connected network (model.kind mlp): hidden
// layers of one activation and a linear output layer, on the flattened
// input. Its config section is model.mlp.
package mlp

import (
	"fmt"
	"slices"

	"github.com/trmaml/trmaml/configs"
	"gopkg.in/yaml.v3"
)

// Name is the model's model.kind value.
const Name = "mlp"

// Bounds of the section's fields.
const (
	MaxWidth  = 100_000 // each hidden entry (paper: 40)
	MaxLayers = 16      // len(hidden) (paper: 2)
)

// Config is the section model.mlp.
type Config struct {
	// Hidden lists the hidden layer widths, each >= 1; empty gives a linear
	// model.
	Hidden []int `yaml:"hidden"`
	// Activation is the hidden nonlinearity: "relu", "tanh", "sigmoid" or
	// "softplus".
	Activation string `yaml:"activation"`
	// Init is the weight initialisation: "truncated_normal" (as in the
	// authors' code), "he", "uniform_fan_in" (PyTorch's nn.Linear) or
	// "uniform_fan_out" (CAVIA's regression MLP); see graph.Init.
	Init string `yaml:"init"`
	// InitStd > 0 is the standard deviation of the truncated normal
	// initialisation (the other schemes do not use it).
	InitStd float64 `yaml:"init_std"`
}

// Model is the MLP.
type Model struct{}

func init() { configs.RegisterModel(Model{}) }

// Name implements configs.Model.
func (Model) Name() string { return Name }

// NewSection implements configs.Model: the paper's sinusoid network, two
// hidden layers of 40 ReLUs.
func (Model) NewSection() any {
	return &Config{Hidden: []int{40, 40}, Activation: "relu", Init: "truncated_normal", InitStd: 0.01}
}

// Section is c's model.mlp section.
func Section(c configs.Config) *Config { return c.Model.Sections[Name].(*Config) }

// Check implements configs.Model.
func (Model) Check(c configs.Config, _ configs.IO, k *configs.Checker) {
	s := Section(c)
	if len(s.Hidden) > MaxLayers {
		k.Fail("model.mlp.hidden", fmt.Sprintf("a list of %d", len(s.Hidden)), "must have at most %d entries", MaxLayers)
	}
	for i, h := range s.Hidden {
		k.Between(fmt.Sprintf("model.mlp.hidden[%d]", i), h, 1, MaxWidth)
	}
	k.OneOf("model.mlp.activation", s.Activation, "relu", "tanh", "sigmoid", "softplus")
	k.OneOf("model.mlp.init", s.Init, "truncated_normal", "he", "uniform_fan_in", "uniform_fan_out")
	k.Float("model.mlp.init_std", s.InitStd, s.InitStd > 0, "> 0")
}

// ScaleFields names the initialisation's scale (a run whose first
// evaluation is not finite lists it).
func (Model) ScaleFields(c configs.Config) string {
	return fmt.Sprintf("model.mlp.init_std = %g", Section(c).InitStd)
}

// Memory implements configs.Model: graph nodes hold, per instance and inner
// step, a copy of the parameters and the activations of every point, and
// the backward sweeps hold as much again. The factors are upper estimates
// measured on the sine configs (the paper's K=5 run with eval.query 1000
// and eval.batch 100 estimates 0.32 GiB; six such runs at once held 1.8 GB
// resident). Computed in float64 so that no size product overflows.
func (Model) Memory(c configs.Config, io configs.IO) configs.MemoryEstimate {
	const float = 8 // bytes per value
	in, out := io.Inputs(), io.Outputs
	params, units := 0.0, float64(in+out)
	prev := float64(in)
	for _, h := range append(slices.Clone(Section(c).Hidden), out) {
		params += prev*float64(h) + float64(h)
		units += float64(h)
		prev = float64(h)
	}
	units -= float64(out) // the output layer is counted once below, in the loss
	graph := func(tasks, query, innerSteps int, factor float64) float64 {
		t, steps := float64(tasks), float64(innerSteps)
		perStep := t * (params + float64(c.Task.Support)*units)
		final := t * float64(query) * units
		return factor * float * (params + steps*perStep + final)
	}
	return configs.MemoryEstimate{
		TrainGraph: graph(c.Meta.Batch, c.Task.Query, c.Inner.Steps, 8),
		EvalGraph:  graph(c.Eval.Batch, c.Eval.Query, c.EvalSteps(), 4) + float*float64(max(c.Eval.Instances, c.Eval.TrainInstances)),
	}
}

// Shrink implements configs.Model: every hidden width at 1.
func (Model) Shrink(c configs.Config) []configs.Shrunk {
	s := *Section(c)
	small := s
	small.Hidden = slices.Repeat([]int{1}, len(s.Hidden))
	return []configs.Shrunk{{Path: "model.mlp.hidden", Value: s.Hidden, Section: &small}}
}

// CPUs implements configs.Model: the MLP's graphs are too small to share.
func (Model) CPUs(configs.Config) int { return 1 }

// Legacy implements configs.LegacyModel: the fields were model.hidden,
// model.activation, model.init and model.init_std.
func (Model) Legacy(key string, value *yaml.Node) ([]*yaml.Node, bool) {
	switch key {
	case "hidden", "activation", "init", "init_std":
		return []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: value.Line}, value}, true
	}
	return nil, false
}

// Tensors implements configs.Exporter with the names of a torch.nn.Sequential
// of Linear layers and activations: "0.weight" [out, in], "0.bias", then
// "2.weight", ... (the activations hold no parameters).
func (Model) Tensors(c configs.Config, io configs.IO, w []float64) ([]configs.Tensor, error) {
	sizes := append(append([]int{io.Inputs()}, Section(c).Hidden...), io.Outputs)
	var out []configs.Tensor
	for l := 0; l+1 < len(sizes); l++ {
		in, o := sizes[l], sizes[l+1]
		if len(w) < in*o+o {
			return nil, fmt.Errorf("mlp: %d parameters left for layer %d of %dx%d", len(w), l, in, o)
		}
		weight := make([]float64, in*o)
		for i := range in { // graph's (in, out) row-major to PyTorch's [out, in]
			for j := range o {
				weight[j*in+i] = w[i*o+j]
			}
		}
		out = append(out,
			configs.Tensor{Name: fmt.Sprintf("%d.weight", 2*l), Shape: []int{o, in}, Data: weight},
			configs.Tensor{Name: fmt.Sprintf("%d.bias", 2*l), Shape: []int{o}, Data: slices.Clone(w[in*o : in*o+o])})
		w = w[in*o+o:]
	}
	return out, nil
}
