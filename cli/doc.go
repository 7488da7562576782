// Package cli is the trmaml command: Main runs it with the models, task
// families, methods and inner loops registered in the program. The command
// (cmd/trmaml) is Main with the built-in ones; a program of one's own with
// blank imports of further packages is a trmaml that knows those too
// (docs/extending.md). Each subcommand is one file here: its flags, a call
// into the package that does the work (run, experiment, results, plots,
// slurm, rundir, theory) and what it prints. "trmaml help" lists the
// commands and docs/cli.md documents every flag; without -config, train
// runs the built-in quick sinusoid experiment (configs/sine_quick.yaml).
package cli
