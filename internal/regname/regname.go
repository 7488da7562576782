// Package regname checks the names that methods, task families, models and
// inner loops register under. A name is a YAML key of a config (a method's
// section beside the top-level keys, task.NAME, model.NAME, inner.NAME), a
// segment of sweep axes (cvar.level) and a part of run directory names, so
// it must be a plain lowercase identifier that no fixed key of its section
// uses already.
package regname

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var valid = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ConfigKeys are the top-level keys of a config file (configs.Config's yaml
// tags, which a configs test compares with this list): a method's section
// sits beside them.
var ConfigKeys = []string{"name", "algorithm", "order", "seed", "task", "model", "inner", "meta", "eval", "data", "init"}

// Check returns why name cannot be registered as a kind ("method", "task
// family") whose section sits beside the keys reserved, or nil.
func Check(kind, name string, reserved []string) error {
	if !valid.MatchString(name) {
		return fmt.Errorf("%s %q: a name must be a lowercase letter followed by lowercase letters, digits and _ (it is a config key, a segment of sweep axes and part of run names)", kind, name)
	}
	if slices.Contains(reserved, name) {
		return fmt.Errorf("%s %q: the name is a fixed key of the config section its own would sit in (%s)", kind, name, strings.Join(reserved, ", "))
	}
	return nil
}
