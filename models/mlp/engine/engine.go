// Package engine builds the mlp model's graph (package models): a
// program that trains imports it, one that only reads configs and run
// directories imports package mlp alone and links no engine.
package engine

import (
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/models"
	"github.com/trmaml/trmaml/models/mlp"
)

func init() { models.Register(mlp.Name, builder{}) }

type builder struct{}

// Build implements models.Builder.
func (builder) Build(section any, io configs.IO) (models.Built, error) {
	s := section.(*mlp.Config)
	sizes := append(append([]int{io.Inputs()}, s.Hidden...), io.Outputs)
	net, err := graph.NewMLP(sizes, graph.Activation(s.Activation))
	if err != nil {
		return models.Built{}, &configs.ConfigError{Field: "model.mlp", Problem: err.Error()}
	}
	return models.Built{
		Net: net, InShape: []int{io.Inputs()},
		Init: func(rng *rand.Rand) ([]float64, error) {
			return net.Init(graph.Init(s.Init), s.InitStd, rng)
		},
		Record: net,
	}, nil
}
