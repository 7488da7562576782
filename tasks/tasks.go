// Package tasks is the table of the built-in task families: importing it
// registers each with configs (configs.RegisterFamily), in the table's
// order, which is the order of their sections in a written config. A new
// family is one package beside these and one line in the table.
package tasks

import (
	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/tasks/imagefolder"
	"github.com/trmaml/trmaml/tasks/linreg"
	"github.com/trmaml/trmaml/tasks/omniglot"
	"github.com/trmaml/trmaml/tasks/sinusoid"
)

func init() {
	for _, f := range []configs.Family{
		sinusoid.Family{}, // first: the family of configs.Defaults
		omniglot.Family{},
		linreg.Family{},
		imagefolder.Family{},
	} {
		configs.RegisterFamily(f)
	}
}
