// Package innerloops is the registry of the graphs of the inner loops a
// config can choose (inner.kind), and the built-in ones: sgd (MAML's
// plain steps, graph's default loop), metasgd, anil and mamlpp. Their
// config sides are registered with configs.RegisterInnerLoop; a loop of a
// program's own registers both the same way.
package innerloops

import (
	"fmt"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
)

// Builder builds a registered inner loop for a config.
type Builder interface {
	// Build returns the loop of c (c.Inner and its section), exact in
	// second order unless firstOrder; a nil Loop is graph's default loop,
	// plain SGD with c.Inner.Steps and c.Inner.Alpha.
	Build(c configs.Config, firstOrder bool) (Built, error)
}

// Built is an inner loop ready for graph.Spec.Inner.
type Built struct {
	Loop graph.InnerLoop
	// Own is the initial value of every one of the loop's own
	// meta-parameters (graph.InnerLoop.ParamShapes), such as learned step
	// sizes.
	Own float64
}

var builders = map[string]Builder{}

// Register adds the Builder of the inner loop called name (call it from
// the package's init function). It panics on a name registered twice.
func Register(name string, b Builder) {
	if _, ok := builders[name]; ok {
		panic(fmt.Sprintf("innerloops: inner loop %q registered twice", name))
	}
	builders[name] = b
}

// Named returns the Builder of the inner loop called name.
func Named(name string) (Builder, error) {
	if b, ok := builders[name]; ok {
		return b, nil
	}
	if _, ok := configs.LookupInnerLoop(name); !ok {
		return nil, fmt.Errorf("inner loop %q is not registered (registered: %v)", name, configs.InnerLoopNames())
	}
	return nil, fmt.Errorf("inner loop %q has no graph: import the package that registers its innerloops.Builder", name)
}

// builderFunc adapts a function to Builder.
type builderFunc func(c configs.Config, firstOrder bool) (Built, error)

func (f builderFunc) Build(c configs.Config, firstOrder bool) (Built, error) { return f(c, firstOrder) }
