// Package graph builds the gorgonia expression graphs of meta-learning:
// models whose forward pass takes its parameters as nodes (MLP, CNN, or a
// model of one's own from the exported layers), the inner loop unrolled
// symbolically over a batch of tasks (InnerLoop; SGD by default), losses and
// scores, and NewObjective, which turns a Spec into the meta-objective and
// its exact meta-gradient. It differentiates with its own reverse sweep
// (Graph.Grad) because gorgonia v0.9.18's Grad drops the second-order terms
// when a graph is differentiated through its own gradients
// (TestGorgoniaNestedGradIsWrong), and its LogSumExp is wrong on vectors
// (TestGorgoniaLogSumExpIsWrong): do not use it. What runs the graphs (the
// executor, buffers, cost models, kernels) lives under graph/internal; the
// guide for model and inner-loop authors is docs/extending.md.
package graph
