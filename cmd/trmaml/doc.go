// Command trmaml trains, resumes, evaluates and reports MAML, TR-MAML and
// the other task-robust methods from YAML experiment files, alone or as
// grids, locally or on Slurm. Each subcommand is one file here: its flags,
// a call into the package that does the work (run, experiment, results,
// plots, slurm, rundir, theory) and what it prints. "trmaml help" lists the
// commands; docs/cli.md documents every flag. Without -config, train runs
// the built-in quick sinusoid experiment (configs/sine_quick.yaml).
package main
