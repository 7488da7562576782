// Package models is the registry of the graphs of the networks a config can
// meta-learn (model.kind). A model is a package that registers its config
// side with configs.RegisterModel (its section, checks and memory
// estimate) and a package that registers its Builder here; nothing else in
// the framework knows its name. The built-in ones are mlp and conv4
// (packages models/builtin and models/builtin/engines).
package models

import (
	"fmt"
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
)

// Builder builds a registered model's network.
type Builder interface {
	// Build returns the network of section (a checked c.Model.Section())
	// on points io. Errors a config could have caused are
	// *configs.ConfigError naming the field.
	Build(section any, io configs.IO) (Built, error)
}

// Built is a model ready for graph.Spec.
type Built struct {
	// Net is the network; InShape is the shape of one input point
	// (graph.Spec.InShape).
	Net     graph.Model
	InShape []int
	// Init draws the initial meta-parameters.
	Init func(rng *rand.Rand) ([]float64, error)
	// Record describes the network in model.json (encoded as JSON), so that
	// a trained model can be read without its config.
	Record any
}

var builders = map[string]Builder{}

// Register adds the Builder of the model called name (call it from the
// package's init function). It panics on a name registered twice.
func Register(name string, b Builder) {
	if _, ok := builders[name]; ok {
		panic(fmt.Sprintf("models: model %q registered twice", name))
	}
	builders[name] = b
}

// Named returns the Builder of the model called name, or an error that
// names it and lists the registered ones.
func Named(name string) (Builder, error) {
	if b, ok := builders[name]; ok {
		return b, nil
	}
	if _, err := configs.ModelNamed(name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("model %q has no graph: import the package that registers its models.Builder", name)
}
