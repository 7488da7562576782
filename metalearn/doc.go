// Package metalearn implements the meta-learning algorithms of "Task-Robust
// Model-Agnostic Meta-Learning" (Collins, Mokhtari, Shakkottai): MAML, which
// minimises the average post-adaptation loss over the meta-training
// distribution, TR-MAML (Algorithm 1), which minimises the worst task's loss
// through a stochastic descent-ascent over the weights w and a distribution p
// on the task simplex, and the methods between and beside them. One driver,
// Trainer, runs them all; a Method decides how p is chosen and updated. It
// also holds the optimizers, the learning-rate schedules and the paper's
// evaluation protocol (Evaluator). It knows nothing of task families, models
// or reports: a family is a TaskSet, a model with its unrolled inner loop an
// Objective (package graph). The Examples show each piece: ExampleTrainer,
// ExampleTrainer_Snapshot (stopped, checkpointed, resumed bit for bit),
// ExampleMethod (a Method of one's own) and ExampleEvaluator.
package metalearn
