// Package innerloops holds inner loops written outside package graph from
// its exported pieces (graph.Support's Cost and Gradients, graph.SGDStep,
// graph.ScaledStep) and plugged into graph.NewObjective through
// graph.Spec.Inner: ANIL, which adapts only the head, and MAML++'s learned
// per-step, per-tensor step sizes. Meta-SGD's learned per-parameter step
// sizes are the package's Example. The tests check each loop's
// second-order meta-gradient against finite differences of the full
// two-level objective.
package innerloops
