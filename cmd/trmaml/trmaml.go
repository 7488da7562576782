// Command trmaml trains and evaluates MAML and Task-Robust MAML from YAML
// experiment files; `trmaml help` lists its commands. It is package cli's
// Main with the built-in models, families, methods and inner loops.
package main

import (
	"os"

	"github.com/trmaml/trmaml/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
