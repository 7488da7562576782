package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// boundToRows reports whether the checkpoint has row hashes and the files
// of its rows hold them.
func (v *verifier) boundToRows() bool {
	for _, name := range v.ck.RowFiles() {
		raw, err := os.ReadFile(v.path(name))
		n, ok := RowsPrefix(raw, v.last)
		if err != nil || !ok || v.ck.rowsSum(name) == "" || HashBytes(raw[:n]) != v.ck.rowsSum(name) {
			return false
		}
	}
	return true
}

// manifestRowsMatch reports whether the manifest seals the row files
// (metrics.csv, p.csv, tasks.csv) exactly through the checkpoint's last row: the manifest was sealed
// with this checkpoint.
func (v *verifier) manifestRowsMatch() bool {
	for _, name := range v.ck.RowFiles() {
		e, ok := v.m.Sum(name)
		raw, err := os.ReadFile(v.path(name))
		n, found := RowsPrefix(raw, v.last)
		if !ok || err != nil || !found || int64(n) != e.Bytes || HashBytes(raw[:n]) != e.SHA256 {
			return false
		}
	}
	return true
}

// metricRows checks that metrics.csv and p.csv (and tasks.csv, where the
// checkpoint binds it) hold the rows through the checkpoint's last
// evaluation, as the checkpoint hashed them.
func (v *verifier) metricRows() error {
	v.rows, v.bound = map[string][]byte{}, map[string]bool{}
	found := map[string]bool{}
	for _, name := range v.ck.RowFiles() {
		raw, err := os.ReadFile(v.path(name))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: missing: the run's checkpoint (iteration %d) needs its rows through iteration %d; restore it from a copy of the run", v.path(name), v.ck.State.Iteration, v.last)
		}
		if err != nil {
			return err
		}
		v.rows[name] = raw
		_, found[name] = RowsPrefix(raw, v.last)
	}
	if !found[MetricsFile] && !found[PFile] {
		newer := ""
		if v.s.successor {
			newer = ", newer than the checkpoint sealed in " + ManifestFile + ","
		}
		return fmt.Errorf("%s: iteration %d%s but %s and %s have no row for its last evaluation at iteration %d, which a save writes first: the checkpoint was copied in from elsewhere (another copy of the run?); restore the run's checkpoint", v.path(CheckpointFile), v.ck.State.Iteration, newer, MetricsFile, PFile, v.last)
	}
	for _, name := range v.ck.RowFiles() {
		raw := v.rows[name]
		n, ok := RowsPrefix(raw, v.last)
		if !ok {
			return fmt.Errorf("%s: no complete row for iteration %d, the last evaluation of %s: rows were deleted or cut; restore it from a copy of the run", v.path(name), v.last, CheckpointFile)
		}
		sum := v.ck.rowsSum(name)
		if sum == "" {
			if err := v.unbound(name, CheckpointFile+" was written before rows were bound to it (no "+strings.TrimSuffix(name, ".csv")+"_sha256)"); err != nil {
				return err
			}
			continue
		}
		if HashBytes(raw[:n]) != sum {
			return fmt.Errorf("%s: the rows through iteration %d are not those %s was written with: the file was edited, cut or is another run's; restore it from a copy of the run", v.path(name), v.last, CheckpointFile)
		}
		v.bound[name] = true
	}
	return nil
}

// noRowsAfter refuses rows after the last evaluation of a finished run.
func (v *verifier) noRowsAfter() error {
	for _, name := range v.ck.RowFiles() {
		if n, _ := RowsPrefix(v.rows[name], v.last); n != len(v.rows[name]) {
			return fmt.Errorf("%s: %d bytes after the row of iteration %d, the finished run's last: the file was changed, damaged or copied from another run; restore it from a copy of the run", v.path(name), len(v.rows[name])-n, v.last)
		}
	}
	return nil
}

// rowsAgainstManifest checks the manifest's entry of metrics.csv or p.csv:
// required with a sealed checkpoint; for rows bound to the checkpoint a
// mismatch is the manifest's, for rows from before the bindings the file's.
func (v *verifier) rowsAgainstManifest(name string) error {
	if v.m == nil {
		return nil
	}
	entry, ok := v.m.Sum(name)
	if !ok {
		if _, ck := v.m.Sum(CheckpointFile); ck {
			return v.manifestErr("files: no entry for %s, which a run with a checkpoint has", name)
		}
		return nil // the first checkpoint's save, killed before its seal
	}
	raw := v.rows[name]
	if !v.s.Finished && int64(len(raw)) > entry.Bytes {
		raw = raw[:entry.Bytes] // rows after the checkpoint, from a killed save
	}
	if int64(len(raw)) == entry.Bytes && HashBytes(raw) == entry.SHA256 {
		return nil
	}
	if v.bound[name] {
		return v.manifestErr("files: the entry of %s does not match the file, whose rows through iteration %d are those %s was written with", name, v.last, CheckpointFile)
	}
	return compare(v.path(name), raw, entry)
}

// manifestOnly checks every file the manifest lists against it, and
// notes each as unbound (it has no why).
func (v *verifier) manifestOnly(why string) error {
	for _, f := range v.m.Files {
		if f.Name == ConfigFile {
			continue
		}
		path := v.path(f.Name)
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: missing, but sealed in %s: restore it from a copy of the run", path, ManifestFile)
		}
		if err != nil {
			return err
		}
		if err := compare(path, raw, f); err != nil {
			return err
		}
		if err := v.unbound(f.Name, "no "+why); err != nil {
			return err
		}
	}
	return nil
}
