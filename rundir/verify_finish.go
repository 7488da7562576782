package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/trmaml/trmaml/internal/shell"
)

// finishedListed reports whether the manifest lists model.json or
// result.json: it sealed a finished run.
func (v *verifier) finishedListed() bool {
	_, r := v.listed(ResultFile)
	_, m := v.listed(ModelFile)
	return r || m
}

// final reports whether the checkpoint is the end of training.
func (v *verifier) final() bool {
	return v.ck.Pending == nil && v.ck.State.Iteration == v.s.Config.Meta.Iterations
}

// finish decides whether the run is finished and checks model.json and
// result.json: their bindings, and the manifest's entries for them.
func (v *verifier) finish() error {
	names := []string{ModelFile, ResultFile}
	if v.m != nil && v.finishedListed() {
		for _, name := range names {
			if _, ok := v.m.Sum(name); !ok {
				return v.manifestErr("files: no entry for %s: a finished run seals %s and %s", name, ModelFile, ResultFile)
			}
		}
		v.s.Finished = true
		for _, name := range names {
			entry, _ := v.m.Sum(name)
			path := v.path(name)
			raw, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) && !v.final() {
				return v.manifestErr("files: lists %s, but the checkpoint is at iteration %d of %d: the run is unfinished", name, v.ck.State.Iteration, v.s.Config.Meta.Iterations)
			}
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s: missing, but sealed in %s: restore it from a copy of the run", path, ManifestFile)
			}
			if err != nil {
				return err
			}
			b, err := v.binding(path, raw)
			if err != nil {
				return err
			}
			switch {
			case b.Bound && (int64(len(raw)) != entry.Bytes || HashBytes(raw) != entry.SHA256):
				return v.manifestErr("files: the entry of %s does not match the file, which is bound to %s", name, CheckpointFile)
			case !b.Bound:
				if err := compare(path, raw, entry); err != nil {
					return err
				}
				if err := v.unbound(name, "no state_sha256"); err != nil {
					return err
				}
			}
		}
		if !v.final() {
			return v.manifestErr("files: lists %s and %s, but the checkpoint is at iteration %d of %d: the run is unfinished", ModelFile, ResultFile, v.ck.State.Iteration, v.s.Config.Meta.Iterations)
		}
		return v.noRowsAfter()
	}
	// No entry for either: the run is finished if both are bound to its
	// final checkpoint (a lost entry, or a kill before the seal), else it
	// is unfinished and they are ignored (a kill while finishing).
	for _, name := range names {
		path := v.path(name)
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		b, err := ReadBinding(path, raw)
		if v.m != nil && (err != nil || !b.Bound || b.State != v.state) {
			return nil
		}
		if _, err := v.binding(path, raw); err != nil {
			return err
		}
	}
	if !v.final() {
		return nil
	}
	if v.m != nil {
		return fmt.Errorf("%s: files: %w: the manifest lost them, or a kill came before the finished run's seal (trmaml resume -run %s seals them)", v.path(ManifestFile), ErrFinishUnsealed, shell.Quote(v.dir))
	}
	v.s.Finished = true
	return v.noRowsAfter()
}

// binding checks the binding of model.json or result.json (content raw):
// its own hash and its checkpoint's.
func (v *verifier) binding(path string, raw []byte) (Binding, error) {
	b, err := ReadBinding(path, raw)
	if err != nil {
		return b, err
	}
	if !b.Bound {
		return b, v.unbound(filepath.Base(path), "it has no state_sha256 (written before the bindings)")
	}
	if b.State != v.state {
		return b, fmt.Errorf("%s: state_sha256 %.12s… is not the state of %s (%.12s…): it was computed from another run or another checkpoint; restore it from a copy of the run", path, b.State, CheckpointFile, v.state)
	}
	return b, nil
}
