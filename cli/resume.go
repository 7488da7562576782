package cli

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/trmaml/trmaml/run"
)

func resume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "unfinished run directory")
	var sets setFlags
	fs.Var(&sets, "override", "change `FIELD=VALUE` from the checkpoint on (repeatable): meta.iterations, eval.*; recorded in manifest.json and result.json")
	opts := dataFlag(fs)
	opts.Warnings = stderr // the run's warnings, beside its progress
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
