package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/trmaml/trmaml/run"
)

// gcPercent is the garbage collector's target unless GOGC says otherwise.
// The graphs' activation buffers live outside Go's heap (graph's buffer
// pool), so the heap is the dataset and small state: about 50 MB for the
// 5-way CNN, with about 2 MB of garbage per iteration. At 5 the garbage
// stays within a few megabytes, for a collection every iteration or so that
// marks little (the dataset holds no pointers): a 30-iteration run's CPU
// time did not change against 20. Go's default (100) would let the heap
// double before collecting.
const gcPercent = 5

// Main runs the trmaml command with args (the arguments after the program
// name) on the process's standard streams and signals, and returns its exit
// status. It is the whole command: a program of one's own that imports
// models, families, methods or inner loops for their registration and calls
// os.Exit(cli.Main(os.Args[1:])) is a trmaml that knows them.
func Main(args []string) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx := context.Background()
	if len(args) > 0 {
		if msg := interruptMessage(args[0]); msg != "" {
			ctx = interruptContext(os.Stderr, msg)
		}
	}
	err := dispatchContext(ctx, args, os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "trmaml:", err)
	}
	return exitCode(err)
}

// exitCode is 0 for success and for -h (help was asked for, so it is not an
// error; the flag package has printed it), exitInterrupted (75) for a run
// a signal stopped at a checkpoint, 2 for every other error.
func exitCode(err error) int {
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, run.ErrInterrupted):
		return exitInterrupted
	}
	return 2
}

const usage = `usage:
  trmaml train [-config FILE|NAME] [-set F=V]... [-seed N] [-out DIR]
                                                     meta-train into a new run directory
  trmaml configs                                     NAME, family, method and summary of each built-in config (train -config NAME)
  trmaml resume -run DIR [-override F=V]...          finish an interrupted run (from its checkpoint, or from the start);
                                                     -override changes meta.iterations or eval.* from the checkpoint on
  trmaml seal -run DIR                               recompute a lost manifest.json from files bound to each other
  trmaml eval -run DIR [-seed N] [-set F=V]...       re-evaluate a run (evaluation.json; under -set changes evaluation-F=V.json)
  trmaml experiment -config FILE -out DIR [-jobs N]  run (or resume) a grid of runs, e.g. configs/experiments/quick.yaml
      ... -cell I | -list | -report                  train or resume cell I only; list the cells and their states; only the table and figures
      ... -slurm [-dry-run] [-cpus N] [-mem MiB] [-time D] [-max-running N] [-sbatch NAME=VALUE]
                                                     submit the unfinished cells to Slurm (docs/cluster.md)
  trmaml status [-config FILE] DIR                   each cell of an experiment (or one run): finished, running, interrupted, failed, not started
  trmaml serve [-addr HOST:PORT] DIR...              a local web page of runs, grids or folders of them: states and curves, live
  trmaml export -run DIR -format FORMAT [-out DIR]   a run in another program's format: tensorboard (event files), safetensors (the model)
  trmaml report -out DIR RUNDIR...                   the paper's tables (Markdown, CSV), mean +- 95% CI over seeds, per-task values (per_task.*)
  trmaml plot -out DIR RUNDIR...                     Figure 1, p-weights or adversary, first- vs second-order figures (-format png, pdf or svg)
  trmaml compare -runs A B                           two runs side by side
  trmaml tradeoff -out DIR RUNDIR...                 mean vs worst-task loss of MAML, TR-MAML, entropic TR-MAML, CVaR levels
  trmaml theory -out DIR                             Theorem 1 measured: duality gap vs T (docs/figures/theorem1_gap.png)
  trmaml data omniglot [-dir DIR] [-verify] [-info]  download (or check, or list) the Omniglot data
  trmaml data check [DIR] -config FILE               an image folder's groups, classes, images and problems, as the config lays it out
  trmaml version                                     Release, Go toolchain and the engine's build (CPU, BLAS, kernels)
train, resume, eval and experiment take -data DIR, the Omniglot data root (default: the
config's data.root, else $TRMAML_DATA, else the user cache directory).
SIGINT, SIGTERM or SIGUSR1 stops train, resume and experiment at a checkpoint of the current
iteration, with exit status 75; the same command again resumes.
Built-in configs: trmaml configs lists them with one line each (their files are in configs/).
`

func dispatch(args []string, stdout, stderr io.Writer) error {
	return dispatchContext(context.Background(), args, stdout, stderr)
}

// dispatchContext runs the command of args; ctx done stops training at a
// checkpoint (run.ErrInterrupted).
func dispatchContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("missing command")
	}
	switch args[0] {
	case "train":
		return train(ctx, args[1:], stdout, stderr)
	case "resume":
		return resume(ctx, args[1:], stdout, stderr)
	case "eval":
		return evaluate(args[1:], stdout, stderr)
	case "seal":
		return sealCmd(args[1:], stdout, stderr)
	case "experiment":
		return experimentCmd(ctx, args[1:], stdout, stderr)
	case "status":
		return statusCmd(args[1:], stdout, stderr)
	case "serve":
		return serveCmd(ctx, args[1:], stdout, stderr)
	case "export":
		return exportCmd(args[1:], stdout, stderr)
	case "configs":
		return configsCmd(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "plot":
		return plotCmd(args[1:], stdout, stderr)
	case "compare":
		return compareCmd(args[1:], stdout, stderr)
	case "theory":
		return theoryCmd(args[1:], stdout, stderr)
	case "tradeoff":
		return tradeoffCmd(args[1:], stdout, stderr)
	case "data":
		return dataCmd(args[1:], stdout, stderr)
	case "version":
		return versionCmd(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
