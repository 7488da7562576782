// Package innerloops shows an inner loop written outside package graph
// from its exported pieces (graph.Support's Cost and Gradients,
// graph.ScaledStep) and plugged into graph.NewObjective through
// graph.Spec.Inner: Meta-SGD's learned per-parameter step sizes, the
// package's Example, with its second-order meta-gradient checked against
// finite differences of the full two-level objective. The built-in loops a
// config chooses (inner.kind) are package github.com/trmaml/trmaml/innerloops.
package innerloops
