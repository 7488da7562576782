// Package custommodel is a model written outside package graph, from
// graph's exported layers only, the way graph.CNN is written inside it: a
// residual convolutional classifier. Its tests check its MAML meta-gradient
// against finite differences of the full two-level objective, as graph's
// tests check the built-in models, and show that a gorgonia op unsafe under
// double differentiation is refused by name.
package custommodel
