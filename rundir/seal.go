package rundir

import (
	"errors"
	"fmt"
	"path/filepath"
)

// SealExisting writes the manifest of a run directory that has none (its
// manifest was deleted or damaged, trmaml seal) from its files, if they are
// bound to each other (bind.go): the checkpoint verifies and names
// config.yaml and the run's seed, metrics.csv and p.csv hold the rows it
// hashed, and model.json and result.json, if the run finished, name it.
// Anything else is refused naming the file and the binding it lacks; no
// file is rewritten, the manifest is only written once all is proven.
func SealExisting(dir string) error {
	if fileExists(filepath.Join(dir, ManifestFile)) {
		if _, err := readManifest(dir); err != nil {
			return fmt.Errorf("%w; or, since seal recomputes a lost manifest only, move it away (keep it) and run seal again", err)
		}
		return fmt.Errorf("%s already has a %s: it is sealed", dir, ManifestFile)
	}
	if !fileExists(filepath.Join(dir, ConfigFile)) {
		return fmt.Errorf("%s has no %s: not a run directory", dir, ConfigFile)
	}
	v := &verifier{dir: dir, s: &Sealed{}}
	if err := v.config(); err != nil {
		return err
	}
	present, err := v.checkpoint()
	if err != nil {
		return err
	}
	if present {
		if err := v.metricRows(); err != nil {
			return err
		}
		if err := v.finish(); err != nil {
			return err
		}
	}
	return Seal(dir, v.s.Finished)
}

// SealFinished seals model.json and result.json of a run for which Verify
// returns ErrFinishUnsealed (they are bound to its final checkpoint, which
// Verify proved) and returns the run verified again; any other state is
// returned as Verify returns it, unchanged.
func SealFinished(dir string) (*Sealed, error) {
	s, err := Verify(dir)
	if !errors.Is(err, ErrFinishUnsealed) {
		return s, err
	}
	if err := Seal(dir, true); err != nil {
		return nil, err
	}
	return Verify(dir)
}
