package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"os/signal"
	"strings"

	"github.com/trmaml/trmaml/configs"
)

const dataUsage = `usage: trmaml data NAME [flags]
       trmaml data check [DIR] -config FILE
Fetches the data of task family NAME, once per machine; NAME is one of: %s.
"trmaml data NAME -h" lists its flags. "trmaml data check" reads the folder DIR (default: the one
the config names) as the config lays it out and lists its groups, classes and images per split with
their counts and sizes, and every problem it finds, without training.
`

// dataCmd runs "trmaml data NAME": the data command of the registered
// family NAME (configs.DataCommander).
func dataCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "check" {
		return dataCheck(args[1:], stdout, stderr)
	}
	known := strings.Join(configs.DataFamilies(), ", ")
	var cmd configs.DataCommander
	if len(args) > 0 {
		if f, ok := configs.LookupFamily(args[0]); ok {
			cmd, _ = f.(configs.DataCommander)
		}
	}
	if cmd == nil {
		fmt.Fprintf(stderr, dataUsage, known)
		switch {
		case len(args) == 0:
			return fmt.Errorf("data: missing dataset name (known: %s)", known)
		case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
			return flag.ErrHelp
		}
		return fmt.Errorf("data: unknown dataset %q (known: %s)", args[0], known)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return cmd.DataCommand(ctx, args[1:], stdout, stderr)
}

// dataCheck runs "trmaml data check [DIR] -config FILE" (DIR may come
// before or after the flags): the family's DataCheck (configs.DataChecker).
func dataCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("data check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config YAML file, or the name of a built-in config, whose task section lays the folder out (required)")
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 && dir == "" {
		dir = fs.Arg(0)
		fs.Parse(fs.Args()[1:])
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("data check: unexpected arguments %v", fs.Args())
	}
	if *path == "" {
		return errors.New("data check: -config FILE is required: the config says how the folder is laid out")
	}
	cfg, err := configs.Load(*path)
	if errors.Is(err, iofs.ErrNotExist) && !strings.ContainsAny(*path, "/.") {
		cfg, err = configs.Builtin(*path)
	}
	if err != nil {
		return err
	}
	fam, err := cfg.Family()
	if err != nil {
		return err
	}
	checker, ok := fam.(configs.DataChecker)
	if !ok {
		return fmt.Errorf("data check: task family %q reads no folder (%s)", fam.Name(), *path)
	}
	return checker.DataCheck(cfg, dir, stdout)
}
