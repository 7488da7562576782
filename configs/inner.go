package configs

import (
	"fmt"
	"slices"
)

// InnerLoop is the config side of a registered inner loop (inner.kind):
// its section under inner and its checks. The loop's graph is registered
// with package innerloops; nothing else in the framework knows its name.
type InnerLoop interface {
	// Name is the value of inner.kind and the key of the loop's section.
	Name() string
	// NewSection returns the section's defaults: a pointer to a struct,
	// with no fields for a loop without settings of its own.
	NewSection() any
	// Check validates the section (c.Inner.Section()) with k's helpers.
	Check(c Config, k *Checker)
}

// innerLoops is the table of registered inner loops, in registration
// order.
var innerLoops []InnerLoop

// RegisterInnerLoop adds an inner loop (call it from the loop package's
// init function). It panics on a name registered twice, one that cannot
// be the key of its section inner.NAME (internal/regname) or a section
// that is not a pointer to a struct.
func RegisterInnerLoop(l InnerLoop) {
	if _, ok := LookupInnerLoop(l.Name()); ok {
		panic(fmt.Sprintf("configs: inner loop %q registered twice", l.Name()))
	}
	checkRegistered("inner loop", l.Name(), l.NewSection(), InnerConfig{})
	innerLoops = append(innerLoops, l)
}

// LookupInnerLoop returns the registered inner loop called name.
func LookupInnerLoop(name string) (InnerLoop, bool) {
	i := slices.IndexFunc(innerLoops, func(l InnerLoop) bool { return l.Name() == name })
	if i < 0 {
		return nil, false
	}
	return innerLoops[i], true
}

// InnerLoopNames lists the registered inner loops in registration order.
func InnerLoopNames() []string {
	names := make([]string, len(innerLoops))
	for i, l := range innerLoops {
		names[i] = l.Name()
	}
	return names
}

// Section returns the section of the chosen inner loop (inner.kind), or
// nil for an unregistered kind.
func (c InnerConfig) Section() any { return c.Sections[c.Kind] }

// The built-in inner loops' config sides; their graphs are package
// innerloops'. sgd is MAML's loop and the default.
func init() {
	for _, l := range []InnerLoop{
		plainLoop{"sgd"},     // MAML: Steps steps of size Alpha
		plainLoop{"metasgd"}, // Meta-SGD: a learned step size per parameter
		anilLoop{},           // ANIL: the head alone adapted
		mamlppLoop{},         // MAML++: learned step sizes per step and tensor, multi-step loss
	} {
		RegisterInnerLoop(l)
	}
}

// plainLoop is an inner loop with no settings beyond inner.steps and
// inner.alpha.
type plainLoop struct{ name string }

func (l plainLoop) Name() string         { return l.name }
func (plainLoop) NewSection() any        { return &struct{}{} }
func (plainLoop) Check(Config, *Checker) {}

// ANILConfig is the section inner.anil.
type ANILConfig struct {
	// Head >= 1 is the number of the model's last parameter tensors the
	// inner loop adapts (2: the output layer's weight and bias).
	Head int `yaml:"head"`
}

type anilLoop struct{}

func (anilLoop) Name() string    { return "anil" }
func (anilLoop) NewSection() any { return &ANILConfig{Head: 2} }
func (anilLoop) Check(c Config, k *Checker) {
	if s, ok := c.Inner.Sections["anil"].(*ANILConfig); ok {
		k.between("inner.anil.head", s.Head, 1, maxHead)
	}
}

// maxHead bounds inner.anil.head, far beyond any model's tensor count.
const maxHead = 1000

// MAMLPPConfig is the section inner.mamlpp.
type MAMLPPConfig struct {
	// MSLIterations >= 0: with > 0 (and inner.steps >= 2) the
	// meta-objective is MAML++'s multi-step loss, the query losses after
	// every inner step weighted from uniform toward the last step over the
	// first MSLIterations meta-iterations (package innerloops); 0 scores
	// the last step alone.
	MSLIterations int `yaml:"msl_iterations"`
}

type mamlppLoop struct{}

func (mamlppLoop) Name() string    { return "mamlpp" }
func (mamlppLoop) NewSection() any { return &MAMLPPConfig{} }
func (mamlppLoop) Check(c Config, k *Checker) {
	if c.EvalSteps() != c.Inner.Steps { // its step sizes are learned step by step
		k.fail("eval.steps", c.Eval.Steps, "must be 0 or inner.steps = %d: inner loop mamlpp learns its step sizes step by step", c.Inner.Steps)
	}
	if s, ok := c.Inner.Sections["mamlpp"].(*MAMLPPConfig); ok {
		k.between("inner.mamlpp.msl_iterations", s.MSLIterations, 0, MaxIterations)
		if s.MSLIterations > 0 && c.Inner.Steps < 2 {
			k.Fail("inner.mamlpp.msl_iterations", s.MSLIterations, "weighs the query losses of several inner steps: needs inner.steps >= 2, got %d", c.Inner.Steps)
		}
	}
}
