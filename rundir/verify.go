package rundir

import (
	"errors"
	"fmt"
	"github.com/trmaml/trmaml/internal/shell"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/configs"
)

// ErrFinishUnsealed is returned (wrapped) by Verify for a run whose
// model.json and result.json are bound to its final checkpoint while its
// manifest has no entry for them: a manifest that lost the entries, or a
// kill between the finished run's last files and its seal. Resume seals
// them; every other reader refuses the directory naming the manifest.
var ErrFinishUnsealed = errors.New("no entry for model.json and result.json, which are bound to the run's final checkpoint")

// Verify checks the run directory dir and returns it. What the directory
// must hold is derived from its state, not from its manifest: config.yaml;
// once there is a checkpoint, metrics.csv and p.csv with the rows through
// its last evaluation; model.json and result.json when finished. Each file
// is checked against its bindings (bind.go), which do not depend on the
// manifest: the checkpoint's own hash, seed and config hash, its hashes of
// the rows, the hashes of the checkpoint in model.json and result.json and
// their own. Then each against manifest.json: a file that fails its
// bindings is blamed, and a manifest that disagrees with files that are
// bound to each other, lacks an entry the state requires or lists one it
// does not, is blamed instead (DIR/manifest.json). A checkpoint newer than
// the manifest is accepted only as the one state a kill during a save
// leaves: an unfinished run whose checkpoint verifies, names the sealed one
// as its predecessor and whose rows are there. Every command that reads a
// run directory calls Verify first; a refusal names the file and what
// differs. Files written before the bindings are checked against the
// manifest only, and Sealed.Note says so.
func Verify(dir string) (*Sealed, error) {
	m, err := readManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if !fileExists(filepath.Join(dir, ConfigFile)) {
			return nil, fmt.Errorf("%s has no %s: not a run directory (or one killed before its config was written: start it again with train)", dir, ConfigFile)
		}
		return nil, fmt.Errorf("%s %w: restore it from a copy of the run; if its files are bound to each other (written by this trmaml), trmaml seal -run %s recomputes it", dir, ErrUnsealed, shell.Quote(dir))
	}
	if err != nil {
		return nil, err
	}
	v := &verifier{dir: dir, m: m, s: &Sealed{Manifest: *m}}
	if err := v.verify(); err != nil {
		return nil, err
	}
	return v.s, nil
}

// Note is one line saying which files of s could be checked against the
// manifest only (written before the bindings), or "".
func (s *Sealed) Note(dir string) string {
	if len(s.Unbound) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s not bound to a checkpoint (written before the bindings, or without a checkpoint): checked against %s only", dir, strings.Join(s.Unbound, ", "), ManifestFile)
}

// verifier is one check of a run directory: by Verify, against the
// manifest m, or by SealExisting (m nil), which requires every binding.
type verifier struct {
	dir    string
	m      *Manifest
	s      *Sealed
	cfgRaw []byte
	ck     Checkpoint
	ckHash string
	// state is the checkpoint's StateHash.
	state string
	last  int
	rows  map[string][]byte
	bound map[string]bool
}

func (v *verifier) path(name string) string { return filepath.Join(v.dir, name) }

func (v *verifier) listed(name string) (FileSum, bool) {
	if v.m == nil {
		return FileSum{}, false
	}
	return v.m.Sum(name)
}

// manifestErr blames the manifest.
func (v *verifier) manifestErr(format string, args ...any) error {
	return fmt.Errorf("%s: %s (the manifest is damaged or from another run: restore it from a copy of the run, or remove it and run trmaml seal -run %s, which recomputes it from the files bound to each other)",
		v.path(ManifestFile), fmt.Sprintf(format, args...), shell.Quote(v.dir))
}

// unbound records that file name has no binding: Verify checks it against
// the manifest only; SealExisting refuses it.
func (v *verifier) unbound(name, why string) error {
	if v.m == nil {
		return fmt.Errorf("%s: %s, so that it belongs to this run cannot be proven: restore the run from a copy (with its manifest.json), or start it again with trmaml train into a new directory", v.path(name), why)
	}
	if !slices.Contains(v.s.Unbound, name) {
		v.s.Unbound = append(v.s.Unbound, name)
	}
	return nil
}

func (v *verifier) verify() error {
	if v.m != nil {
		seen := map[string]bool{}
		for _, f := range v.m.Files {
			if !slices.Contains(StateFiles(), f.Name) || seen[f.Name] {
				return v.manifestErr("files: entry %q is not a state file or is listed twice", f.Name)
			}
			seen[f.Name] = true
		}
	}
	if err := v.config(); err != nil {
		return err
	}
	present, err := v.checkpoint()
	if err != nil || !present {
		return err
	}
	if err := v.metricRows(); err != nil {
		return err
	}
	if err := v.finish(); err != nil {
		return err
	}
	for _, name := range []string{MetricsFile, PFile} {
		if err := v.rowsAgainstManifest(name); err != nil {
			return err
		}
	}
	return nil
}

// config checks config.yaml against the manifest; the checkpoint checks it
// against its binding.
func (v *verifier) config() error {
	path := v.path(ConfigFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: missing: every run directory has its config; restore it from a copy of the run", path)
	}
	if err != nil {
		return err
	}
	v.cfgRaw = raw
	if v.m == nil {
		v.s.Manifest.Config = string(raw)
		v.s.Config, err = configs.ParseRecorded(path, raw)
		return err
	}
	if c, _ := v.m.Sum(ConfigFile); HashBytes(raw) != c.SHA256 {
		if v.checkpointNames(raw) {
			return v.manifestErr("seals another %s than the directory's, while checkpoint.json and the rows are bound to the directory's", ConfigFile)
		}
		return configChanged(path, []byte(v.m.Config), raw)
	}
	v.s.Config, err = configs.ParseRecorded(path, []byte(v.m.Config))
	return err
}

// checkpointNames reports whether the checkpoint is bound to the config
// content cfg, and metrics.csv to the checkpoint (or, for a checkpoint
// from before the row bindings, differs from the manifest too): the
// manifest, not config.yaml, is then the odd file out.
func (v *verifier) checkpointNames(cfg []byte) bool {
	ck, err := ReadCheckpoint(v.path(CheckpointFile))
	if err != nil || ck.ConfigSHA256 != HashBytes(cfg) {
		return false
	}
	raw, err := os.ReadFile(v.path(MetricsFile))
	if err != nil {
		return false
	}
	last, err := ck.LastRow()
	if err != nil {
		return false
	}
	if ck.MetricsSHA256 != "" {
		n, ok := RowsPrefix(raw, last)
		return ok && HashBytes(raw[:n]) == ck.MetricsSHA256
	}
	sum, ok := v.m.Sum(MetricsFile)
	return ok && (int64(len(raw)) < sum.Bytes || HashBytes(raw[:sum.Bytes]) != sum.SHA256)
}

// checkpoint checks checkpoint.json: its hash, its identity, and its
// agreement with the manifest. present is false for a run without one
// (stopped before its first save).
func (v *verifier) checkpoint() (present bool, err error) {
	path := v.path(CheckpointFile)
	entry, listed := v.listed(CheckpointFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if listed {
			return false, fmt.Errorf("%s: missing, but sealed in %s: restore it from a copy of the run", path, ManifestFile)
		}
		if v.m == nil {
			return false, fmt.Errorf("%s has no %s: nothing was trained, nothing to seal (trmaml resume -run %s starts the run from its %s)", v.dir, CheckpointFile, shell.Quote(v.dir), ConfigFile)
		}
		_, res := v.m.Sum(ResultFile)
		_, model := v.m.Sum(ModelFile)
		if res && !model && !fileExists(v.path(ModelFile)) {
			// A result without its training state (written by a tool or
			// a test, never by train): checked against the manifest.
			v.s.Finished = true
			return false, v.manifestOnly(CheckpointFile + " to bind it to")
		}
		for _, name := range []string{MetricsFile, PFile, ModelFile, ResultFile} {
			if _, ok := v.m.Sum(name); ok {
				return false, v.manifestErr("files: lists %s but no %s, which every save sealing %s writes", name, CheckpointFile, name)
			}
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if v.ck, err = DecodeCheckpoint(path, raw); err != nil {
		return false, err
	}
	if v.last, err = v.ck.LastRow(); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if err := CheckIdentity(path, v.ck, v.s); err != nil {
		if v.m == nil && v.boundToRows() {
			// Without a manifest, the checkpoint and its rows agree:
			// config.yaml is the odd file out.
			return false, fmt.Errorf("%s: not the config %s was written under (config_sha256 %.12s…, this file hashes to %.12s…), while the checkpoint and its rows agree: the file was edited or is another run's; restore it from a copy of the run",
				v.path(ConfigFile), CheckpointFile, v.ck.ConfigSHA256, HashBytes(v.cfgRaw))
		}
		return false, err
	}
	v.ckHash = HashBytes(raw)
	if v.state, err = v.ck.StateHash(); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if v.m == nil {
		return true, nil
	}
	switch {
	case !listed && v.ck.Previous == "" && len(v.m.Files) == 1:
		// The first checkpoint, written by a save a kill ended before its
		// seal: the manifest lists config.yaml alone.
	case !listed:
		return false, v.manifestErr("files: no entry for %s, which the run has (iteration %d)", CheckpointFile, v.ck.State.Iteration)
	case v.ckHash == entry.SHA256:
	case v.ck.Previous == entry.SHA256 && !v.finishedListed():
		// A kill between the checkpoint and the manifest: the rows of its
		// last evaluation must be there (metricRows).
		v.s.successor = true
	case v.boundToRows() && v.manifestRowsMatch():
		return false, v.manifestErr("files: the entry of %s (sha256 %.12s…) does not match the file (%.12s…), which is bound to the run's config.yaml and rows", CheckpointFile, entry.SHA256, v.ckHash)
	default:
		return false, fmt.Errorf("%s: does not match %s (sha256 %.12s…, sealed %.12s…): it was changed, damaged or copied from another run; restore it from a copy of the run", path, ManifestFile, v.ckHash, entry.SHA256)
	}
	return true, nil
}

func (v *verifier) finishedListed() bool {
	_, r := v.listed(ResultFile)
	_, m := v.listed(ModelFile)
	return r || m
}

// boundToRows reports whether the checkpoint has row hashes and both metric
// files hold those rows.
func (v *verifier) boundToRows() bool {
	for _, name := range []string{MetricsFile, PFile} {
		raw, err := os.ReadFile(v.path(name))
		n, ok := RowsPrefix(raw, v.last)
		if err != nil || !ok || v.ck.rowsSum(name) == "" || HashBytes(raw[:n]) != v.ck.rowsSum(name) {
			return false
		}
	}
	return true
}

// manifestRowsMatch reports whether the manifest seals metrics.csv and
// p.csv exactly through the checkpoint's last row: the manifest was sealed
// with this checkpoint.
func (v *verifier) manifestRowsMatch() bool {
	for _, name := range []string{MetricsFile, PFile} {
		e, ok := v.m.Sum(name)
		raw, err := os.ReadFile(v.path(name))
		n, found := RowsPrefix(raw, v.last)
		if !ok || err != nil || !found || int64(n) != e.Bytes || HashBytes(raw[:n]) != e.SHA256 {
			return false
		}
	}
	return true
}

// metricRows checks that metrics.csv and p.csv hold the rows through the
// checkpoint's last evaluation, as the checkpoint hashed them.
func (v *verifier) metricRows() error {
	v.rows, v.bound = map[string][]byte{}, map[string]bool{}
	found := map[string]bool{}
	for _, name := range []string{MetricsFile, PFile} {
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
	for _, name := range []string{MetricsFile, PFile} {
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

// noRowsAfter refuses rows after the last evaluation of a finished run.
func (v *verifier) noRowsAfter() error {
	for _, name := range []string{MetricsFile, PFile} {
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

// SealExisting writes the manifest of a run directory that has none (its
// manifest was deleted or damaged, trmaml seal) from its files, if they are
// bound to each other (bind.go): the checkpoint verifies and names
// config.yaml and the run's seed, metrics.csv and p.csv hold the rows it
// hashed, and model.json and result.json, if the run finished, name it.
// Anything else is refused naming the file and the binding it lacks; no
// file is rewritten, the manifest is only written once all is proven.
func SealExisting(dir string) error {
	if fileExists(filepath.Join(dir, ManifestFile)) {
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
