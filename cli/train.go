package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

func train(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config YAML file, e.g. configs/sine_k5_trmaml.yaml, or a built-in config's `NAME` (trmaml configs lists them; default: the built-in sine_quick)")
	var sets setFlags
	fs.Var(&sets, "set", "change `FIELD=VALUE` of the config (repeatable), e.g. meta.iterations=60: decoded and checked as in a config file; config.yaml records the result")
	seed := fs.Uint64("seed", 0, "random seed, overriding the config's")
	out := fs.String("out", "", "new run directory (default: runs/NAME-seedN, or runs/NAME-seedN-2, ... if taken)")
	opts := dataFlag(fs)
	opts.Warnings = stderr // the run's warnings, beside its progress
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("train: unexpected arguments %v", fs.Args())
	}
	if err := noEmptyFlags(fs); err != nil {
		return err
	}
	var (
		cfg  configs.Config
		file string // the config file read, "" for a built-in
		err  error
	)
	if *path == "" {
		cfg, err = configs.Builtin("sine_quick")
	} else {
		cfg, file, err = configs.LoadNamed(*path)
	}
	if err != nil {
		return err
	}
	if cfg, err = configs.Override(cfg, "-set", sets, func(string) bool { return true }); err != nil {
		return err
	}
	for _, set := range sets { // after all of them: -set algorithm=cvar -set cvar.level=0.3 is read
		field, _, _ := strings.Cut(set, "=")
		if err := cfg.CheckRead(field); err != nil {
			return fmt.Errorf("-set %s: %w", set, err)
		}
	}
	if isSet(fs, "seed") {
		for _, set := range sets {
			if field, _, _ := strings.Cut(set, "="); field == "seed" {
				return fmt.Errorf("train: -seed %d and -set %s: give the seed once", *seed, set)
			}
		}
		cfg.Seed = *seed
	}
	dir := *out
	if dir == "" {
		dir = rundir.Fresh(filepath.Join("runs", fmt.Sprintf("%s-seed%d", cfg.Name, cfg.Seed)))
	}
	fmt.Fprintf(stdout, "training %s (%s, %s order, seed %d) into %s\n", cfg.Name, cfg.Algorithm, cfg.Order, cfg.Seed, dir)
	noteBLAS(stderr)
	opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
	res, err := run.Train(ctx, cfg, dir, *opts)
	// A config error of the file's own field (not one -set or -data gave)
	// names the file and the field's line.
	var cerr *configs.ConfigError
	if errors.As(err, &cerr) && file != "" && !slices.ContainsFunc(sets, func(s string) bool { return strings.HasPrefix(s, cerr.Field+"=") }) {
		if cerr.Field == "data.root" && opts.DataRoot != "" {
			return fmt.Errorf("%s: %w", file, cerr)
		}
		return cerr.At(file)
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
