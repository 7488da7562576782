package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// validationFiles checks validation.csv and model_best_val.json against
// the checkpoint's hashes of them and against the manifest. Rows after the
// checkpoint's, and a best model of a later iteration, are what a kill
// between an evaluation and its checkpoint leaves in an unfinished run
// (resume writes them again); anything else that differs is refused,
// naming the file, or the manifest when the files agree with the
// checkpoint.
func (v *verifier) validationFiles() error {
	if v.ck.ValidationSHA256 == "" {
		for _, name := range []string{ValidationFile, BestValModelFile} {
			if _, ok := v.listed(name); ok {
				return v.manifestErr("files: lists %s, which %s does not bind", name, CheckpointFile)
			}
		}
		return nil
	}
	// validation.csv: the rows through the last evaluation.
	path := v.path(ValidationFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: missing: the run's checkpoint (iteration %d) needs its rows through iteration %d; restore it from a copy of the run", path, v.ck.State.Iteration, v.last)
	}
	if err != nil {
		return err
	}
	n, ok := RowsPrefix(raw, v.last)
	if !ok || HashBytes(raw[:n]) != v.ck.ValidationSHA256 {
		return fmt.Errorf("%s: the rows through iteration %d are not those %s was written with: the file was edited, cut or is another run's; restore it from a copy of the run", path, v.last, CheckpointFile)
	}
	if v.s.Finished && n != len(raw) {
		return fmt.Errorf("%s: %d bytes after the row of iteration %d, the finished run's last: the file was changed, damaged or copied from another run; restore it from a copy of the run", path, len(raw)-n, v.last)
	}
	// The manifest's entries are checked when it seals this checkpoint
	// (not its predecessor, nor only config.yaml).
	_, sealedCk := v.listed(CheckpointFile)
	sealedCk = sealedCk && !v.s.successor
	entry, listed := v.listed(ValidationFile)
	if sealedCk && !listed {
		return v.manifestErr("files: no entry for %s, which %s binds", ValidationFile, CheckpointFile)
	}
	if sealedCk {
		sealed := raw
		if !v.s.Finished && int64(len(sealed)) > entry.Bytes {
			sealed = sealed[:entry.Bytes]
		}
		if int64(len(sealed)) != entry.Bytes || HashBytes(sealed) != entry.SHA256 {
			return v.manifestErr("files: the entry of %s does not match the file, whose rows through iteration %d are those %s was written with", ValidationFile, v.last, CheckpointFile)
		}
	}

	// model_best_val.json: the file the checkpoint hashed.
	path = v.path(BestValModelFile)
	raw, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: missing, but bound to %s: restore it from a copy of the run", path, CheckpointFile)
	}
	if err != nil {
		return err
	}
	if HashBytes(raw) != v.ck.BestValSHA256 {
		var m struct {
			Iteration *int `json:"iteration"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Iteration != nil && *m.Iteration > v.last && !v.s.Finished {
			return nil // written by an evaluation after the checkpoint
		}
		return fmt.Errorf("%s: not the best model %s was written with (sha256 %.12s…, bound %.12s…): the file was changed, damaged or is another run's; restore it from a copy of the run", path, CheckpointFile, HashBytes(raw), v.ck.BestValSHA256)
	}
	entry, listed = v.listed(BestValModelFile)
	switch {
	case sealedCk && !listed:
		return v.manifestErr("files: no entry for %s, which %s binds", BestValModelFile, CheckpointFile)
	case sealedCk && (int64(len(raw)) != entry.Bytes || HashBytes(raw) != entry.SHA256):
		return v.manifestErr("files: the entry of %s does not match the file, which is bound to %s", BestValModelFile, CheckpointFile)
	}
	return nil
}
