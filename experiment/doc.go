// Package experiment runs a grid of training runs (algorithms x sweep axes x orders x
// seeds over one base config) with a pool of workers, one line of progress
// per active run and an overall ETA. Re-running an experiment resumes it:
// finished runs are skipped and unfinished ones continue from their
// checkpoints. spec.go reads and expands the experiment file, pool.go runs
// the grid, board.go draws the progress, cell.go reads the cells' states.
package experiment
