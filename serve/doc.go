// Package serve is trmaml serve: a local web page over run directories
// (one run, a grid, or a folder of them) that lists each run's state as
// trmaml status reads it and draws its curves (meta-test and meta-train
// mean and worst, CVaR where a run records it, the task weights p over
// iterations, the final per-task values of a finished run), updating as
// metrics.csv and p.csv grow.
//
// The page is one embedded HTML file with a small script that draws SVG:
// it needs no network beyond the server. The server is read-only: it
// writes nothing into run directories and takes no lock, not even the
// brief shared one of dirlock.Holder (a run's lock is looked up in the
// kernel's lock table instead), so it never delays or refuses a run.
package serve
