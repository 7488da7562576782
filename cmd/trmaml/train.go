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
