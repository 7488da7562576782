package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/trmaml/trmaml/export"
)

// exportCmd writes a finished run's model in another format (package
// export's Formats).
func exportCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "finished run directory")
	format := fs.String("format", "safetensors", "output format, one of: "+fmt.Sprint(export.FormatNames()))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("export: give exactly -run DIR [-format F]")
	}
	path, err := export.Run(*dir, *format)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "written to %s\n", path)
	return nil
}
