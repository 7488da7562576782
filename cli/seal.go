package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/trmaml/trmaml/rundir"
)

// sealCmd recomputes the manifest of a run directory that lost it, from
// files that are bound to each other (rundir.SealExisting); it refuses
// anything it cannot prove and rewrites no file.
func sealCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "run directory that lost its manifest.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("seal: give exactly -run DIR")
	}
	lock, err := rundir.LockRun(*dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := rundir.SealExisting(*dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sealed %s: %s recomputed from files bound to each other (no file was changed)\n", *dir, filepath.Join(*dir, rundir.ManifestFile))
	return nil
}
