package cli

import (
	"flag"
	"strings"
	"time"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/slurm"
)

// slurmFlags are experiment's flags for -slurm.
type slurmFlags struct {
	submit, dryRun bool
	cpus, memMiB   int
	time           time.Duration
	maxRunning     int
	sbatch         map[string]string
}

func (f *slurmFlags) add(fs *flag.FlagSet) {
	fs.BoolVar(&f.submit, "slurm", false, "submit the unfinished cells as a Slurm job array, and a report job after it (docs/cluster.md)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "with -slurm: write DIR/slurm/*.sbatch and print the sbatch commands, submitting nothing")
	fs.IntVar(&f.cpus, "cpus", 0, "with -slurm: --cpus-per-task of each cell (default: 2 for Omniglot, 1 for sine)")
	fs.IntVar(&f.memMiB, "mem", 0, "with -slurm: --mem of each cell in `MiB` (default: the config's memory estimate x 1.5)")
	fs.DurationVar(&f.time, "time", 0, "with -slurm: --time of each cell, e.g. 6h (default: measured or estimated time x 1.5 + 10m)")
	fs.IntVar(&f.maxRunning, "max-running", 0, "with -slurm: cells running at once (--array=...%N; default: all)")
	f.sbatch = map[string]string{}
	fs.Func("sbatch", "with -slurm: an sbatch long option `NAME=VALUE` (or NAME) for both jobs, e.g. partition=gpu; repeatable; overrides the experiment file's slurm: section", func(v string) error {
		k, val, _ := strings.Cut(v, "=")
		if err := slurm.CheckOption(k, val); err != nil {
			return err
		}
		f.sbatch[k] = val
		return nil
	})
}

// request is the Slurm request of the flags for the experiment spec, read
// from specPath, run in out (experiment.Submit).
func (f slurmFlags) request(spec experiment.Spec, specPath, out, dataRoot string) slurm.Request {
	return slurm.Request{
		CPUs: f.cpus, MemMiB: f.memMiB, Time: f.time, MaxRunning: f.maxRunning, DryRun: f.dryRun, Sbatch: f.sbatch,
		Name: spec.Name, File: spec.Slurm, Spec: specPath, Out: out, Data: dataRoot,
	}
}
