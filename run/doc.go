// Package run turns an experiment configuration into a run directory: it
// assembles the task family, model graph, trainer and evaluator the config
// names, trains with progress reporting, evaluates every few iterations, and
// writes the run directory (package rundir): the resolved config,
// metrics.csv, p.csv, checkpoint.json, model.json and result.json.
package run
