package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/shell"
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
	if err := v.validationFiles(); err != nil {
		return err
	}
	for _, name := range v.ck.RowFiles() {
		if err := v.rowsAgainstManifest(name); err != nil {
			return err
		}
	}
	if _, ok := v.listed(TasksFile); ok && v.ck.TasksSHA256 == "" {
		return v.manifestErr("files: lists %s, which %s does not bind (the run does not record it)", TasksFile, CheckpointFile)
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
		for _, name := range []string{ValidationFile, BestValModelFile, MetricsFile, PFile, TasksFile, ModelFile, ResultFile} {
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
