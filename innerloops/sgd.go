package innerloops

import "github.com/trmaml/trmaml/configs"

// sgd is MAML's inner loop: graph's default (graph.InnerSGD from
// Spec.Steps and Spec.Alpha).
func init() {
	Register("sgd", builderFunc(func(configs.Config, bool) (Built, error) { return Built{}, nil }))
}
