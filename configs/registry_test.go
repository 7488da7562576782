package configs_test

import (
	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/tasks/omniglot"
	"github.com/trmaml/trmaml/tasks/sinusoid"

	_ "github.com/trmaml/trmaml/models/builtin" // the built-in models
	_ "github.com/trmaml/trmaml/tasks"          // the built-in task families
)

// Accessors of the registered sections the tests read.
func trmaml(c configs.Config) *metalearn.TRMAML { return c.Settings("trmaml").(*metalearn.TRMAML) }
func entropic(c configs.Config) *metalearn.EntropicTRMAML {
	return c.Settings("trmaml_entropic").(*metalearn.EntropicTRMAML)
}
func cvar(c configs.Config) *metalearn.CVaR  { return c.Settings("cvar").(*metalearn.CVaR) }
func sine(c configs.Config) *sinusoid.Config { return c.Task.Section(sinusoid.Name).(*sinusoid.Config) }
func omni(c configs.Config) *omniglot.Config { return c.Task.Section(omniglot.Name).(*omniglot.Config) }
