// Package rundir is the format of a run directory, the directory trmaml
// train writes and every reader (reports, plots, comparisons) reads: its
// file names, the types stored there (Result, Stats, Timing, Model, the
// checkpoint) and the readers and writers of its CSV and JSON files. It
// links no engine, so that reporting does not depend on gorgonia or the
// data sets; package run writes through it.
//
// Every file is written to a temporary name and renamed (package
// atomicfile), so a crash never leaves one half-written; a directory is
// locked (package dirlock) while a process writes it.
//
// The package Example reads a finished run directory; package results'
// Example trains two tiny runs (package run), loads them and prints their
// table. docs/run-directory.md describes every file.
package rundir
