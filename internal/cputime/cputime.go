// Package cputime reads the processor time of the whole process, the
// measure of a run's or a benchmark's cost on a machine shared with other
// work, where wall-clock time also counts the others.
package cputime
