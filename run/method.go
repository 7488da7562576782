package run

import (
	"fmt"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
)

// NewMethod returns the registered metalearn.Method that cfg.Algorithm
// names, with the settings of its config section.
func NewMethod(cfg configs.Config) (metalearn.Method, error) {
	m, err := cfg.NewMethod()
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return m, nil
}

// movesP reports whether the algorithm's task distribution changes during
// training, so that result.json and model.json record its final value.
func movesP(algorithm string) bool {
	info, ok := metalearn.LookupMethod(algorithm)
	return !ok || !info.FixedP
}

// cvarLevel is what result.json records as cvar_level: the level of a
// CVaR run, 0 (omitted) for the others. The field is CVaR's alone: another
// method's swept setting (metalearn.MethodInfo.Swept) is in config.yaml,
// which is where reports read it from.
func cvarLevel(cfg configs.Config) float64 {
	if m, ok := cfg.Settings(cfg.Algorithm).(*metalearn.CVaR); ok {
		return m.Level
	}
	return 0
}
