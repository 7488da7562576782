// Package results loads finished run directories (written by trmaml train)
// and computes every statistic the reports show: curves and final
// statistics averaged over seeds with Student-t 95% confidence intervals,
// histograms of per-task values, the TR-MAML task weights p, the paper's
// results tables (Table 1 for regression, Table 2 for classification), every
// task's final value (per_task.csv) and the CVaR trade-off table. Each
// run names its metric (metalearn.Metric), which decides what "worst" and
// "best" mean and how values are shown. Plots and tables only read what
// this package computes.
package results
