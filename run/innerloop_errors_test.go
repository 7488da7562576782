package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/innerloops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A user's inner loops with bugs, registered as a program of its own would:
// one whose Builder fails (brokenbuild), one whose own graph ops do not fit
// (brokenops: it adds the support inputs to the first parameter).
type brokenLoop struct{ name string }

func (l brokenLoop) Name() string                         { return l.name }
func (brokenLoop) NewSection() any                        { return &struct{}{} }
func (brokenLoop) Check(configs.Config, *configs.Checker) {}

type brokenOps struct{}

func (brokenOps) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }
func (brokenOps) Adapt(s *graph.Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	if _, err := graph.Axpy(theta[0], s.X, 1); err != nil {
		return nil, err
	}
	return theta, nil
}

type builderFunc func(configs.Config, bool) (innerloops.Built, error)

func (f builderFunc) Build(c configs.Config, firstOrder bool) (innerloops.Built, error) {
	return f(c, firstOrder)
}

func init() {
	configs.RegisterInnerLoop(brokenLoop{"brokenbuild"})
	innerloops.Register("brokenbuild", builderFunc(func(configs.Config, bool) (innerloops.Built, error) {
		return innerloops.Built{}, errors.New("no graph today")
	}))
	configs.RegisterInnerLoop(brokenLoop{"brokenops"})
	innerloops.Register("brokenops", builderFunc(func(configs.Config, bool) (innerloops.Built, error) {
		return innerloops.Built{Loop: brokenOps{}}, nil
	}))
}

// TestInnerLoopErrorsNameTheLoop: an error of building a registered inner
// loop, of its Builder or of its graph's own ops, names the loop by its
// registered name (and, for the graph, its Go type).
func TestInnerLoopErrorsNameTheLoop(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind string
		want string
	}{
		{"brokenbuild", `inner loop "brokenbuild": no graph today`},
		{"brokenops", `graph: inner loop "brokenops" (run.brokenOps): graph: axpy(1): needs two inputs of one shape`},
	} {
		cfg := tinyConfig()
		cfg.Inner.Kind = c.kind
		if _, err := Build(cfg, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("inner.kind %s: error %v, want it to say %q", c.kind, err, c.want)
		}
	}
}
