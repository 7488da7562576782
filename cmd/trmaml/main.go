package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/display"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
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

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	err := dispatchContext(interruptContext(os.Stderr), os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "trmaml:", err)
	}
	os.Exit(exitCode(err))
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
  trmaml report -out DIR RUNDIR...                   the paper's tables (Markdown, CSV), mean +- 95%% CI over seeds, per-task values (per_task.*)
  trmaml plot -out DIR RUNDIR...                     Figure 1, p-weights or adversary, first- vs second-order figures (PNG)
  trmaml compare -runs A B                           two runs side by side
  trmaml tradeoff -out DIR RUNDIR...                 mean vs worst-task loss of MAML, TR-MAML, entropic TR-MAML, CVaR levels
  trmaml theory -out DIR                             Theorem 1 measured: duality gap vs T (docs/theorem1_gap.png)
  trmaml data omniglot [-dir DIR] [-verify] [-info]  download (or check, or list) the Omniglot data
  trmaml data check [DIR] -config FILE               an image folder's groups, classes, images and problems, as the config lays it out
  trmaml version                                     Release, Go toolchain and the engine's build (CPU, BLAS, kernels)
train, resume, eval and experiment take -data DIR, the Omniglot data root (default: the
config's data.root, else $TRMAML_DATA, else the user cache directory).
SIGINT, SIGTERM or SIGUSR1 stops train, resume and experiment at a checkpoint of the current
iteration, with exit status 75; the same command again resumes.
Built-in configs (files in configs/): %v
`

func dispatch(args []string, stdout, stderr io.Writer) error {
	return dispatchContext(context.Background(), args, stdout, stderr)
}

// dispatchContext runs the command of args; ctx done stops training at a
// checkpoint (run.ErrInterrupted).
func dispatchContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, configs.BuiltinNames())
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
		fmt.Fprintf(stdout, usage, configs.BuiltinNames())
		return nil
	}
	fmt.Fprintf(stderr, usage, configs.BuiltinNames())
	return fmt.Errorf("unknown command %q", args[0])
}

func train(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config YAML file, e.g. configs/sine_k5_trmaml.yaml, or a built-in config's `NAME` (trmaml configs lists them; default: the built-in sine_quick)")
	var sets setFlags
	fs.Var(&sets, "set", "change `FIELD=VALUE` of the config (repeatable), e.g. meta.iterations=60: decoded and checked as in a config file; config.yaml records the result")
	seed := fs.Uint64("seed", 0, "random seed, overriding the config's")
	out := fs.String("out", "", "new run directory (default: runs/NAME-seedN, or runs/NAME-seedN-2, ... if taken)")
	opts := dataFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("train: unexpected arguments %v", fs.Args())
	}
	cfg, file, err := loadTrainConfig(*path)
	if err != nil {
		return err
	}
	if cfg, err = configs.Override(cfg, "-set", sets, func(string) bool { return true }); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			cfg.Seed = *seed
		}
	})
	dir := *out
	if dir == "" {
		dir = freshDir(filepath.Join("runs", fmt.Sprintf("%s-seed%d", cfg.Name, cfg.Seed)))
	}
	fmt.Fprintf(stdout, "training %s (%s, %s order, seed %d) into %s\n", cfg.Name, cfg.Algorithm, cfg.Order, cfg.Seed, dir)
	noteBLAS(stderr)
	opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
	res, err := run.Train(ctx, cfg, dir, *opts)
	var cerr *configs.ConfigError
	if errors.As(err, &cerr) && file != "" && !slices.ContainsFunc(sets, func(s string) bool { return strings.HasPrefix(s, cerr.Field+"=") }) {
		return configErrorAt(file, cerr, opts.DataRoot)
	}
	if err != nil {
		return err
	}
	printResult(stdout, res)
	cost := fmt.Sprintf("%.3f ms per iteration", res.Timing.MsPerIteration)
	if c := res.Timing.CPU; c != nil {
		cost += fmt.Sprintf(" (CPU: %.1f s training, %.1f s evaluation)", c.TrainSeconds, c.EvalSeconds)
	}
	fmt.Fprintf(stdout, "%s; results in %s\n", cost, filepath.Join(dir, rundir.ResultFile))
	return nil
}

// loadTrainConfig loads train's -config: the file of that name if there
// is one, else the built-in config of that name; the built-in sine_quick
// when it is empty. file is the path of the file read ("" for a built-in).
func loadTrainConfig(name string) (cfg configs.Config, file string, err error) {
	if name == "" {
		name = "sine_quick"
	} else if _, statErr := os.Stat(name); statErr == nil || !slices.Contains(configs.BuiltinNames(), name) {
		cfg, err = configs.Load(name)
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsRune(name, '/') {
			err = fmt.Errorf("%w, and no built-in config has that name (trmaml configs lists them)", err)
		}
		return cfg, name, err
	}
	cfg, err = configs.Builtin(name)
	return cfg, "", err
}

// configsCmd lists the built-in configs, one line each: name, family,
// algorithm, iterations and what it is.
func configsCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("configs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("configs: unexpected arguments %v", fs.Args())
	}
	for _, name := range configs.BuiltinNames() {
		cfg, err := configs.Builtin(name)
		if err != nil {
			return err
		}
		summary, err := configs.BuiltinSummary(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-28s %-9s %-15s %7d it.  %s\n", name, cfg.Task.Family, cfg.Algorithm, cfg.Meta.Iterations, summary)
	}
	fmt.Fprintln(stdout, "trmaml train -config NAME trains one; its file is configs/NAME.yaml")
	return nil
}

func resume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "unfinished run directory")
	var sets setFlags
	fs.Var(&sets, "override", "change `FIELD=VALUE` from the checkpoint on (repeatable): meta.iterations, eval.*; recorded in manifest.json and result.json")
	opts := dataFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("resume: give exactly -run DIR")
	}
	noteBLAS(stderr)
	opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
	res, err := run.Resume(ctx, *dir, *opts, sets...)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	return nil
}

// sealCmd recomputes the manifest of a run directory that lost it, from
// files that are bound to each other (rundir.SealExisting); it refuses
// anything it cannot prove and rewrites no file.
func sealCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "run directory that lost its manifest.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("seal: give exactly -run DIR")
	}
	lock, err := rundir.Lock(*dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := rundir.SealExisting(*dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sealed %s: %s recomputed from files bound to each other (no file was changed)\n", *dir, filepath.Join(*dir, rundir.ManifestFile))
	return nil
}

func evaluate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "run directory written by trmaml train")
	seed := fs.Uint64("seed", 0, "evaluation seed (default: the run's own, reproducing result.json)")
	var sets setFlags
	fs.Var(&sets, "set", "evaluate under a changed `FIELD=VALUE` (repeatable): eval.* fields, "+strings.Join(configs.EvalFields(), ", ")+"; written to evaluation-CHANGES.json")
	opts := dataFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("eval: give exactly -run DIR")
	}
	noteBLAS(stderr)
	res, err := run.Evaluate(context.Background(), *dir, *seed, *opts, sets...)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	if t := res.Timing; t.EvalSeconds > 0 {
		cpu := ""
		if t.CPU != nil {
			cpu = fmt.Sprintf(", %.1f s of CPU", t.CPU.EvalSeconds)
		}
		fmt.Fprintf(stdout, "%d instances in %.1f s%s: %.0f instances per second (%s, GOMAXPROCS %d)\n",
			t.EvalInstances, t.EvalSeconds, cpu, float64(t.EvalInstances)/t.EvalSeconds, t.Engine, t.Procs)
	}
	fmt.Fprintf(stdout, "written to %s\n", filepath.Join(*dir, rundir.EvalFileFor(sets)))
	return nil
}

func experimentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("experiment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "experiment YAML file (see configs/experiments/)")
	out := fs.String("out", "", "experiment directory (re-running resumes it)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs trained at once")
	cell := fs.Int("cell", -1, "train or resume only cell `I` of the grid (numbered from 0 in the order -list shows), then exit: what scheduler array tasks run")
	list := fs.Bool("list", false, "list the grid's cells: index, run directory and state (finished, running, interrupted, failed, not started)")
	reportOnly := fs.Bool("report", false, "write only the table and figures of the finished cells, training nothing")
	var sf slurmFlags
	sf.add(fs)
	opts := dataFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || *out == "" || fs.NArg() > 0 {
		return errors.New("experiment: give -config FILE and -out DIR")
	}
	if *jobs < 1 {
		return fmt.Errorf("experiment: -jobs must be >= 1, got %d", *jobs)
	}
	modes := 0
	for _, name := range []string{"cell", "list", "report", "slurm"} {
		if isSet(fs, name) {
			modes++
		}
	}
	if modes > 1 {
		return errors.New("experiment: give at most one of -cell, -list, -report and -slurm")
	}
	for _, name := range []string{"dry-run", "cpus", "mem", "time", "max-running", "sbatch"} {
		if isSet(fs, name) && !sf.submit {
			return fmt.Errorf("experiment: -%s goes with -slurm", name)
		}
	}
	if !*list && !*reportOnly && !sf.submit { // only where it trains here
		noteBLAS(stderr)
	}
	opts.Datasets = new(configs.DataCache) // the grid check and the runs load the data once
	load := experiment.Load
	if *list { // listing needs no data
		load = func(path string, _ run.Options) (experiment.Spec, []configs.Config, error) {
			return experiment.Expand(path)
		}
	}
	spec, cfgs, err := load(*path, *opts)
	if err != nil {
		return err
	}
	grid := experiment.Jobs(cfgs, *out)
	switch {
	case sf.submit:
		return submitSlurm(sf, spec, *path, *out, grid, *opts, stdout)
	case *list:
		return listCells(grid, stdout)
	case *reportOnly:
		if err := experiment.CheckOut(*out, grid); err != nil {
			return err
		}
		return experimentReport(grid, *out, stdout, stderr)
	case isSet(fs, "cell"):
		if *cell >= 0 && *cell < len(grid) {
			fmt.Fprintf(stdout, "experiment %s: cell %d of %d, %s\n", *path, *cell, len(grid), grid[*cell].Dir)
		}
		opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
		return experiment.RunCell(ctx, *out, grid, *cell, *opts)
	}
	fmt.Fprintf(stdout, "experiment %s: %d runs, %d at a time, in %s\n", *path, len(grid), *jobs, *out)
	runErr := experiment.Run(ctx, *out, grid, *jobs, stderr, isTerminal(stderr), *opts)
	if errors.Is(runErr, dirlock.ErrHeld) || errors.Is(runErr, experiment.ErrForeign) || errors.Is(runErr, run.ErrInterrupted) {
		return runErr
	}
	// Figures and table cover the experiment's runs that finished, even if
	// some failed.
	return errors.Join(runErr, experimentReport(grid, *out, stdout, stderr))
}

// experimentReport writes the table and figures of the grid's runs that
// exist into out.
func experimentReport(grid []experiment.Job, out string, stdout, stderr io.Writer) error {
	var dirs []string
	for _, j := range grid {
		if _, err := os.Stat(j.Dir); err == nil {
			dirs = append(dirs, j.Dir)
		}
	}
	groups, release, err := openReport(dirs, out, true, stderr)
	if err != nil {
		return err
	}
	defer release()
	if err := results.WriteReport(groups, out, stdout); err != nil {
		return err
	}
	return plots.WriteReport(groups, out, "png", plots.Double, stdout) // trmaml plot's defaults
}

// listCells prints one line per cell: index, run directory, state.
func listCells(grid []experiment.Job, w io.Writer) error {
	cells, err := experiment.Cells(grid)
	if err != nil {
		return err
	}
	for _, c := range cells {
		fmt.Fprintf(w, "%d\t%s\t%s\n", c.Index, c.Name(), c.State)
	}
	return nil
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func printResult(w io.Writer, r *rundir.Result) {
	if r.Output == "best_val" {
		fmt.Fprintf(w, "evaluated: the model of iteration %d, the best on the meta-validation tasks (meta.output best_val)\n", r.BestValIteration)
	}
	metric, err := metalearn.MetricNamed(r.Metric)
	if err != nil {
		metric = metalearn.MSE
	}
	m := display.Of(metric)
	rows := []struct {
		name string
		s    rundir.Stats
	}{{"meta-train", r.MetaTrain}, {"meta-test", r.MetaTest}}
	defer func() { // CVaR at eval.cvar_alpha's levels, if any
		for _, row := range rows {
			for _, c := range row.s.CVaR {
				fmt.Fprintf(w, "%-10s CVaR_%v %.4g\n", row.name, c.Alpha, m.Show(c.Value))
			}
		}
	}()
	if metric == metalearn.MSE {
		fmt.Fprintf(w, "%-10s %9s %9s %9s  %s\n", "task set", "mean", "worst", "std", "worst task")
		for _, row := range rows {
			fmt.Fprintf(w, "%-10s %9.4f %9.4f %9.4f  %s\n", row.name, row.s.Mean, row.s.Worst, row.s.Std, row.s.WorstTask)
		}
		return
	}
	// A classification run: the paper's Table 2 columns, in percent.
	fmt.Fprintf(w, "%-10s %9s %9s %9s %9s  %s  (%s)\n", "task set", "weighted", "mean", "worst", "std", "worst task", m.Axis("task"))
	for _, row := range rows {
		s := row.s
		fmt.Fprintf(w, "%-10s %9.2f %9.2f %9.2f %9.2f  %s\n", row.name, m.Show(s.WeightedMean), m.Show(s.Mean), m.Show(s.Worst), m.Show(s.Std), s.WorstTask)
	}
}

// dataFlag adds -data, the Omniglot data root of the command's runs, to the
// options it returns.
func dataFlag(fs *flag.FlagSet) *run.Options {
	opts := new(run.Options)
	fs.Func("data", "Omniglot data root holding omniglot/ (overrides the config's data.root and $TRMAML_DATA; not written into config.yaml)", func(v string) error {
		if v == "" {
			return errors.New("must not be empty")
		}
		opts.DataRoot = v
		return nil
	})
	return opts
}

// configErrorAt places a config error of the file at path at the line of
// its field, when the file states it and it was used: a data root given by
// -data (dataRoot) is not the file's data.root.
func configErrorAt(path string, cerr *configs.ConfigError, dataRoot string) error {
	data, err := os.ReadFile(path)
	if err != nil || (cerr.Field == "data.root" && dataRoot != "") {
		return fmt.Errorf("%s: %w", path, cerr)
	}
	c := configs.Defaults()
	lines, err := configs.DecodeStrict(path, data, &c)
	if err != nil || lines[cerr.Field] == 0 {
		return fmt.Errorf("%s: %w", path, cerr)
	}
	return fmt.Errorf("%s:%d: %w", path, lines[cerr.Field], cerr)
}

// freshDir returns base, or base-2, base-3, ... if base exists: the default
// run directory never collides with an earlier run.
func freshDir(base string) string {
	dir := base
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return dir
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// setFlags collects the repeatable -set FIELD=VALUE flag.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, " ") }

func (s *setFlags) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// noteBLAS prints graph.BLASNote, if there is one, before a command that
// trains or evaluates: a forced older OpenBLAS kernel set would otherwise
// show only in the timings.
func noteBLAS(stderr io.Writer) {
	if n := graph.BLASNote(); n != "" {
		fmt.Fprintln(stderr, "trmaml: note:", n)
	}
}
