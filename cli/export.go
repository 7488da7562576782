package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/export"
	"github.com/trmaml/trmaml/tfevents"
)

// exporter writes the run directory dir in one format into out (the
// -out flag, or "" for the format's default) and says what it wrote.
type exporter struct {
	help string
	run  func(dir, out string, stdout io.Writer) error
	// intoRun: the format's default -out is the exported run's own
	// directory, which -out may then name; any other run directory is
	// refused (outNotRun).
	intoRun bool
}

// exporters are the formats of trmaml export, by -format name: the one
// place a format is added.
var exporters = map[string]exporter{
	"tensorboard": {"metrics.csv and p.csv as a TensorBoard event file (default -out: RUNDIR/tensorboard)", exportTensorBoard, false},
	"safetensors": {"the trained model as named tensors with PyTorch's names and layouts (default -out: RUNDIR)", exportSafetensors, true},
}

func exportFormats() []string {
	var names []string
	for k := range exporters {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// exportCmd writes a run directory in another program's format.
func exportCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "run directory (finished, or unfinished: what it has so far)")
	var helps []string
	for _, name := range exportFormats() {
		helps = append(helps, name+": "+exporters[name].help)
	}
	format := fs.String("format", "", "`FORMAT` to write: "+strings.Join(helps, "; "))
	out := fs.String("out", "", "output directory (default: the format's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("export: give -run DIR and -format FORMAT")
	}
	e, ok := exporters[*format]
	if !ok {
		return fmt.Errorf("export: -format %q: want one of %s", *format, strings.Join(exportFormats(), ", "))
	}
	if err := noEmptyFlags(fs); err != nil {
		return err
	}
	if *out != "" && !(e.intoRun && sameDir(*out, *dir)) {
		if err := outNotRun("export", *out); err != nil {
			return err
		}
	}
	return e.run(*dir, *out, stdout)
}

func exportTensorBoard(dir, out string, stdout io.Writer) error {
	if out == "" {
		out = filepath.Join(dir, "tensorboard")
	}
	path, err := tfevents.ExportRun(dir, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (tensorboard --logdir %s shows it; a folder above it shows several runs)\n", path, out)
	return nil
}

// exportSafetensors writes the finished run's model as model.safetensors
// (package export).
func exportSafetensors(dir, out string, stdout io.Writer) error {
	path, err := export.Safetensors(dir, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "written to %s\n", path)
	return nil
}

// sameDir reports whether a and b name one existing directory.
func sameDir(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}
