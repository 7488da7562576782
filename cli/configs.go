package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/trmaml/trmaml/configs"
)

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
	width := 0 // the longest name's, so that the columns line up
	for _, name := range configs.BuiltinNames() {
		width = max(width, len(name))
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
		fmt.Fprintf(stdout, "%-*s %-11s %-15s %7d it.  %s\n", width, name, cfg.Task.Family, cfg.Algorithm, cfg.Meta.Iterations, summary)
	}
	fmt.Fprintln(stdout, "trmaml train -config NAME trains one; its file is configs/NAME.yaml")
	return nil
}
