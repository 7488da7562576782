package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/configs"
)

// evalSets applies the changes of eval -set to the run's config cfg: each
// must be a field an evaluation may change (EvalOverridable) that this run
// reads (eval.*, and its own family's fields), else it is refused listing
// those, so that no -set is accepted that changes nothing.
func evalSets(cfg configs.Config, sets []string) (configs.Config, error) {
	own := familyEvalFields(cfg)
	reads := func(path string) bool {
		return EvalOverridable(path) && (strings.HasPrefix(path, "eval.") || slices.Contains(own, path))
	}
	out, err := configs.Override(cfg, "-set", sets, reads)
	if err != nil {
		fields := "eval.*"
		if len(own) > 0 {
			fields += ", " + strings.Join(own, ", ")
		}
		return configs.Config{}, fmt.Errorf("%w (a run of task family %s reads, of what eval -set may change: %s)", err, cfg.Task.Family, fields)
	}
	return out, nil
}

// familyEvalFields are the fields of cfg's family an evaluation may change.
func familyEvalFields(cfg configs.Config) []string {
	fam, err := cfg.Family()
	if err != nil {
		return nil
	}
	if e, ok := fam.(configs.EvalFielder); ok {
		return e.EvalFields()
	}
	return nil
}

// blameSets names the -set flag, not config.yaml (path), for an error of
// building the config under sets that names a field one of them changed.
func blameSets(path string, sets []string, err error) error {
	for _, set := range sets {
		field, _, _ := strings.Cut(set, "=")
		if strings.Contains(err.Error(), field+":") || strings.Contains(err.Error(), field+" ") {
			return fmt.Errorf("-set %s: %w (the run's %s is fine; this change is not)", set, err, path)
		}
	}
	return fmt.Errorf("%s: %w", path, err)
}
