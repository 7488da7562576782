// Package metalearn implements the meta-learning algorithms of "Task-Robust
// Model-Agnostic Meta-Learning" (Collins, Mokhtari, Shakkottai): MAML, which
// minimises the average post-adaptation loss over the meta-training
// distribution, and TR-MAML (Algorithm 1), which minimises the worst task's
// loss through a stochastic descent-ascent over the weights w and a
// distribution p on the task simplex, and the family between them: entropic
// TR-MAML (exponentiated-gradient ascent of p) and CVaR at level a (p on the
// capped simplex). One driver, Trainer, runs them all; a Method decides how p
// is chosen and updated. It also holds the optimizers and the paper's
// evaluation protocol.
//
// The package knows nothing about sinusoids, images or gorgonia: the task
// family is a TaskSet and the model with its unrolled inner loop is an
// Objective.
package metalearn
