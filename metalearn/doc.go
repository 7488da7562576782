// Package metalearn implements the meta-learning algorithms of "Task-Robust
// Model-Agnostic Meta-Learning" (Collins, Mokhtari, Shakkottai): MAML, which
// minimises the average post-adaptation loss over the meta-training
// distribution, and TR-MAML (Algorithm 1), which minimises the worst task's
// loss through a stochastic descent-ascent over the weights w and a
// distribution p on the task simplex, and the family between them: entropic
// TR-MAML (exponentiated-gradient ascent of p) and CVaR at level a (p on the
// capped simplex). One driver, Trainer, runs them all; a Method decides how p
// is chosen and updated. It also holds the optimizers, the learning-rate
// schedules and the paper's evaluation protocol (Evaluator).
//
// The package knows nothing about sinusoids, images or gorgonia, nor how
// reports name and scale what it computes (package results/display): the
// task family is a TaskSet and the model with its unrolled inner loop is an
// Objective (package graph builds one from a model; package data holds the
// task families). A method's settings (MethodSettings, the config section)
// and its run state (the Method their New returns) are separate types.
//
// # Using it as a library
//
// The shape of a program, as in learn2learn:
//
//	tr, err := metalearn.NewTrainer(obj, train, w0, metalearn.Settings{
//		Method:     metalearn.TRMAML{PLR: 1e-4}.New(),
//		Iterations: 1000,
//	})
//	err = tr.Run(ctx, nil) // or: for ... { tr.Step() }
//	w, p := tr.Solution()
//	stats, err := metalearn.NewEvaluator(evalObj, K, J, 1, 1).Evaluate(w, test, 490, rng)
//
// Settings' zero values are documented defaults (MAML, Adam at 1e-3, the
// Objective's batch shape, the last iterate). A run stopped through its
// context is checkpointed by Snapshot and the Optimizer's exported fields,
// and continues bit for bit after Restore.
//
// The Examples show each piece working: ExampleTrainer (TR-MAML against
// MAML on sinusoid tasks), ExampleTrainer_Snapshot (stopped through its
// context, checkpointed, resumed bit for bit), ExampleMethod (a Method of
// one's own, ChaseWorst, with a hand-written Step loop) and
// ExampleEvaluator. Package run drives
// the Trainer from a config file into a run directory (package rundir),
// which package results reads; its Example trains, loads and tabulates two
// runs.
package metalearn
