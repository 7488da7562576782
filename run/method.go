package run

import (
	"fmt"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
)

// NewMethod returns the metalearn.Method that cfg.Algorithm names, with the
// settings of its config section.
func NewMethod(cfg configs.Config) (metalearn.Method, error) {
	switch cfg.Algorithm {
	case "maml":
		return &metalearn.MAML{}, nil
	case "trmaml":
		return &metalearn.TRMAML{PLR: cfg.TRMAML.PLR}, nil
	case "trmaml_entropic":
		return &metalearn.EntropicTRMAML{PLR: cfg.Entropic.PLR}, nil
	case "cvar":
		return &metalearn.CVaR{Level: cfg.CVaR.Level, PLR: cfg.CVaR.PLR}, nil
	}
	return nil, fmt.Errorf("run: algorithm %q has no method (allowed: %v)", cfg.Algorithm, configs.Algorithms)
}

// movesP reports whether the algorithm's task distribution changes during
// training, so that result.json and model.json record its final value.
func movesP(algorithm string) bool { return algorithm != "maml" }

// cvarLevel is the CVaR level that result.json records: the config's for
// algorithm cvar, 0 (omitted) for the others.
func cvarLevel(cfg configs.Config) float64 {
	if cfg.Algorithm == "cvar" {
		return cfg.CVaR.Level
	}
	return 0
}
