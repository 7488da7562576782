// Package run turns an experiment configuration into a run directory: it
// assembles the task family, model graph, trainer and evaluator the config
// names, trains with progress reporting, evaluates every few iterations, and
// writes the resolved config, metrics.csv, p.csv, checkpoint.json,
// model.json and result.json. Files are written to a temporary name and
// renamed (package atomicfile), so a crash never leaves one half-written.
package run
