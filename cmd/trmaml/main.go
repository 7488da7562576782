// Command trmaml trains and evaluates MAML and Task-Robust MAML from YAML
// experiment files.
//
//	trmaml train [-config FILE] [-seed N] [-out DIR]
//	trmaml resume -run DIR [-override FIELD=VALUE]...
//	trmaml seal -run DIR
//	trmaml eval -run DIR [-seed N] [-set FIELD=VALUE]...
//	trmaml experiment -config FILE -out DIR [-jobs N]
//	trmaml report -out DIR RUNDIR...
//	trmaml plot -out DIR RUNDIR...
//	trmaml compare -runs A B
//	trmaml tradeoff -out DIR RUNDIR...
//	trmaml theory -out DIR
//	trmaml data omniglot [-dir DIR] [-verify] [-info]
//
// Without -config, train runs the built-in quick sinusoid experiment
// (configs/sine_quick.yaml).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

func main() {
	err := dispatch(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "trmaml:", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is 0 for success and for -h (help was asked for, so it is not an
// error; the flag package has printed it), 2 for every error.
func exitCode(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

const usage = `usage:
  trmaml train [-config FILE] [-seed N] [-out DIR]   meta-train into a new run directory
  trmaml resume -run DIR [-override F=V]...          finish an interrupted run (from its checkpoint, or from the start);
                                                     -override changes meta.iterations or eval.* from the checkpoint on
  trmaml seal -run DIR                               seal a run directory written before manifests (check its files first)
  trmaml eval -run DIR [-seed N] [-set F=V]...       re-evaluate a run (evaluation.json; under -set changes evaluation-F=V.json)
  trmaml experiment -config FILE -out DIR [-jobs N]  run (or resume) a grid of runs, e.g. configs/experiments/quick.yaml
  trmaml report -out DIR RUNDIR...                   the paper's tables (Markdown, CSV), mean +- 95%% CI over seeds, per-task values (per_task.*)
  trmaml plot -out DIR RUNDIR...                     Figure 1, p-weights or adversary, first- vs second-order figures (PNG)
  trmaml compare -runs A B                           two runs side by side
  trmaml tradeoff -out DIR RUNDIR...                 mean vs worst-task loss of MAML, TR-MAML, entropic TR-MAML, CVaR levels
  trmaml theory -out DIR                             Theorem 1 measured: duality gap vs T (docs/theorem1_gap.png)
  trmaml data omniglot [-dir DIR] [-verify] [-info]  download (or check, or list) the Omniglot data
train, resume, eval and experiment take -data DIR, the Omniglot data root (default: the
config's data.root, else $TRMAML_DATA, else the user cache directory).
Built-in configs (files in configs/): %v
`

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, configs.BuiltinNames())
		return errors.New("missing command")
	}
	switch args[0] {
	case "train":
		return train(args[1:], stdout, stderr)
	case "resume":
		return resume(args[1:], stdout, stderr)
	case "eval":
		return evaluate(args[1:], stdout, stderr)
	case "seal":
		return sealCmd(args[1:], stdout, stderr)
	case "experiment":
		return experimentCmd(args[1:], stdout, stderr)
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
	case "help", "-h", "-help", "--help":
		fmt.Fprintf(stdout, usage, configs.BuiltinNames())
		return nil
	}
	fmt.Fprintf(stderr, usage, configs.BuiltinNames())
	return fmt.Errorf("unknown command %q", args[0])
}

func train(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "experiment YAML file (default: the built-in sine_quick)")
	seed := fs.Uint64("seed", 0, "random seed, overriding the config's")
	out := fs.String("out", "", "new run directory (default: runs/NAME-seedN, or runs/NAME-seedN-2, ... if taken)")
	opts := dataFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("train: unexpected arguments %v", fs.Args())
	}
	var cfg configs.Config
	var err error
	if *path == "" {
		cfg, err = configs.Builtin("sine_quick")
	} else {
		cfg, err = configs.Load(*path)
	}
	if err != nil {
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
	opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
	res, err := run.Train(cfg, dir, *opts)
	var cerr *run.ConfigError
	if errors.As(err, &cerr) && *path != "" {
		return configErrorAt(*path, cerr, opts.DataRoot)
	}
	if err != nil {
		return err
	}
	printResult(stdout, res)
	fmt.Fprintf(stdout, "%.3f ms per iteration; results in %s\n", res.Timing.MsPerIteration, filepath.Join(dir, rundir.ResultFile))
	return nil
}

func resume(args []string, stdout, stderr io.Writer) error {
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
	opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
	res, err := run.Resume(*dir, *opts, sets...)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	return nil
}

// sealCmd seals a run directory written before run directories carried a
// manifest, trusting its files as they are.
func sealCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "run directory without manifest.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("seal: give exactly -run DIR")
	}
	lock, err := rundir.Open(*dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := rundir.SealExisting(*dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sealed %s: %s now holds the hashes of its files as they are\n", *dir, filepath.Join(*dir, rundir.ManifestFile))
	return nil
}

func evaluate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "run directory written by trmaml train")
	seed := fs.Uint64("seed", 0, "evaluation seed (default: the run's own, reproducing result.json)")
	var sets setFlags
	fs.Var(&sets, "set", "evaluate under a changed `FIELD=VALUE` (repeatable): eval.* fields, task.omniglot.resize, task.omniglot.rotate_eval; written to evaluation-CHANGES.json")
	opts := dataFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("eval: give exactly -run DIR")
	}
	res, err := run.Evaluate(*dir, *seed, *opts, sets...)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	fmt.Fprintf(stdout, "written to %s\n", filepath.Join(*dir, rundir.EvalFileFor(sets)))
	return nil
}

func experimentCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("experiment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "experiment YAML file (see configs/experiments/)")
	out := fs.String("out", "", "experiment directory (re-running resumes it)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs trained at once")
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
	opts.Datasets = new(run.Datasets) // the grid check and the runs load the data once
	_, cfgs, err := experiment.Load(*path, *opts)
	if err != nil {
		return err
	}
	grid := experiment.Jobs(cfgs, *out)
	fmt.Fprintf(stdout, "experiment %s: %d runs, %d at a time, in %s\n", *path, len(grid), *jobs, *out)
	runErr := experiment.Run(*out, grid, *jobs, stderr, isTerminal(stderr), *opts)
	if errors.Is(runErr, dirlock.ErrHeld) || errors.Is(runErr, experiment.ErrForeign) {
		return runErr
	}
	// Figures and table cover the experiment's runs that finished, even if
	// some failed.
	report := []string{"-out", *out}
	for _, j := range grid {
		report = append(report, j.Dir)
	}
	if err := reportCmd(report, stdout, stderr); err != nil {
		return errors.Join(runErr, err)
	}
	return errors.Join(runErr, plotCmd(report, stdout, stderr))
}

func printResult(w io.Writer, r *rundir.Result) {
	m, err := metalearn.MetricNamed(r.Metric)
	if err != nil {
		m = metalearn.MSE
	}
	rows := []struct {
		name string
		s    rundir.Stats
	}{{"meta-train", r.MetaTrain}, {"meta-test", r.MetaTest}}
	if m == metalearn.MSE {
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
func configErrorAt(path string, cerr *run.ConfigError, dataRoot string) error {
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
