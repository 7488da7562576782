package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/trmaml/trmaml/configs"
)

const dataUsage = `usage: trmaml data NAME [flags]
Fetches the data of task family NAME, once per machine; NAME is one of: %s.
"trmaml data NAME -h" lists its flags.
`

// dataCmd runs "trmaml data NAME": the data command of the registered
// family NAME (configs.DataCommander).
func dataCmd(args []string, stdout, stderr io.Writer) error {
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
