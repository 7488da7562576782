// Package cli is the trmaml command: Main runs it with the models, task
// families, methods and inner loops registered in the program. The command
// (cmd/trmaml) is Main with the built-in ones; a program of one's own
// with blank imports of further packages is a trmaml that knows those too
// (docs/extending.md):
//
//	trmaml train [-config FILE] [-seed N] [-out DIR]
//	trmaml resume -run DIR [-override FIELD=VALUE]...
//	trmaml seal -run DIR
//	trmaml eval -run DIR [-seed N] [-set FIELD=VALUE]...
//	trmaml experiment -config FILE -out DIR [-jobs N | -cell I | -list | -report | -slurm]
//	trmaml status [-config FILE] DIR
//	trmaml report -out DIR RUNDIR...
//	trmaml plot -out DIR RUNDIR...
//	trmaml compare -runs A B
//	trmaml tradeoff -out DIR RUNDIR...
//	trmaml theory -out DIR
//	trmaml data omniglot [-dir DIR] [-verify] [-info]
//
// Without -config, train runs the built-in quick sinusoid experiment
// (configs/sine_quick.yaml).
package cli
