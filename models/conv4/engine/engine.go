// Package engine builds the conv4 model's graph (package models): a
// program that trains imports it, one that only reads configs and run
// directories imports package conv4 alone and links no engine.
package engine

import (
	"fmt"
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/models"
	"github.com/trmaml/trmaml/models/conv4"
)

func init() { models.Register(conv4.Name, builder{}) }

type builder struct{}

// Build implements models.Builder.
func (builder) Build(section any, io configs.IO) (models.Built, error) {
	s := section.(*conv4.Config)
	cnn, err := graph.Conv4{
		Filters: s.Filters, Blocks: s.Blocks, Channels: io.Channels, Height: io.Height, Width: io.Width,
		Pool: s.Pool, BatchNorm: s.BatchNorm, Hidden: s.Hidden,
	}.CNN(io.Outputs)
	if err != nil {
		return models.Built{}, &configs.ConfigError{Field: "model.conv4", Problem: fmt.Sprintf("%v (inputs %s)", err, io)}
	}
	return models.Built{
		Net: cnn, InShape: cnn.InShape(),
		Init:   func(rng *rand.Rand) ([]float64, error) { return cnn.Init(rng), nil },
		Record: cnn,
	}, nil
}
