// Package plots draws the report figures from statistics computed by
// packages results and theory: Figure 1 of the paper (curves of the average
// and worst task value and the final meta-test histogram of MAML and
// TR-MAML, in the runs' metric: MSE or accuracy in percent), the TR-MAML
// task weights of sinusoid runs, what the adversary does on classification
// runs (the training distribution beside the final p, and per-task
// accuracy, tasks by name), the comparison of first- and second-order
// meta-gradients, the trade-off between mean and worst-task loss of MAML,
// TR-MAML and the CVaR levels, and Theorem 1's measured duality gap
// against the number of iterations. Every
// figure is a row of panels with one shared legend above, written as a PNG
// at 180 dpi with fonts of 10-12 pt. Plotting never computes a statistic
// itself.
package plots
