// Package graph builds the gorgonia expression graphs of meta-learning: models
// whose forward pass takes its parameters as nodes, the inner SGD loop unrolled
// symbolically over a batch of tasks, and a differentiation entry point that
// stays exact when a graph is differentiated through its own gradients, which
// is what second-order MAML needs.
//
// gorgonia v0.9.18's Grad is not used: its reverse sweep reuses the derivative
// recorded on every node by an earlier Grad call, so the second differentiation
// of MAML silently drops the second-order terms (see TestGorgoniaNestedGradIsWrong).
// Graph.Grad is this package's own reverse sweep over the ops' SymDiff rules.
//
// Models (MLP, CNN), losses (MSELoss, SoftmaxCrossEntropy) and scores
// (Accuracy) plug into NewObjective through a Spec; the ops they are built
// from live in ops_*.go, one family per file, each with its derivative, and
// run in float64 or float32 (Spec.Dtype). Large matrix products go to
// gonum's pure-Go BLAS, or to OpenBLAS when built with -tags openblas.
//
// A model or an inner loop written in another package composes the same
// way: the ops are exported as layers (layers.go: MatMul, Conv3x3,
// BatchNormMaxPool, ...) and the inner loop as pieces (inner.go: InnerLoop,
// Support, SGDStep, ScaledStep), with examples in examples/custommodel and
// package innerloops and a guide in docs/extending.md.
//
// What runs the graphs lives under graph/internal, a package per job: exec
// (the evaluation order, liveness and runs), memory (the pooled and
// scratch buffers, off Go's heap), wincost (the Winograd cost model), cpu
// and blas (the machine and the matrix products), vec (the SIMD kernels).
//
// gorgonia's LogSumExp cannot be refused here, being a composition of
// sound ops, but in v0.9.18 it computes the wrong value on vectors and fails
// to build on matrices (TestGorgoniaLogSumExpIsWrong): do not use it.
package graph
