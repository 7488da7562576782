package rundir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"gopkg.in/yaml.v3"
)

// ManifestFile seals a run directory: the SHA-256 of every file of
// StateFiles() as the last save left it. It is written last in each save,
// and every command that reads the directory verifies it (Verify).
const ManifestFile = "manifest.json"

// manifestVersion is the version of the manifest's format.
const manifestVersion = 1

// Manifest is manifest.json.
type Manifest struct {
	Version int `json:"version"`
	// Config is config.yaml's content when sealed, so that a changed file
	// is refused naming the fields that changed.
	Config string `json:"config"`
	// Files are the sealed files, in StateFiles() order.
	Files []FileSum `json:"files"`
	// Overrides are the deliberate config changes of the run (trmaml
	// resume -override), in order.
	Overrides []Override `json:"overrides,omitempty"`
}

// FileSum seals one file: its first Bytes bytes have the SHA-256 SHA256.
// For metrics.csv and p.csv of an unfinished run these are the rows up to
// the checkpoint; rows a killed save appended after them are allowed (resume
// redoes them). Every other file must be exactly Bytes long.
type FileSum struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Override is one deliberate config change: the settings ("field=value")
// given to resume at the checkpoint of Iteration, and the hash of
// config.yaml before them, which that checkpoint carries.
type Override struct {
	Iteration int      `json:"iteration"`
	Set       []string `json:"set"`
	Before    string   `json:"config_sha256_before"`
}

// Sets returns every override setting of m, in order.
func (m *Manifest) Sets() []string {
	var s []string
	for _, o := range m.Overrides {
		s = append(s, o.Set...)
	}
	return s
}

// Sum returns the entry of file name, if sealed.
func (m *Manifest) Sum(name string) (FileSum, bool) {
	for _, f := range m.Files {
		if f.Name == name {
			return f, true
		}
	}
	return FileSum{}, false
}

// HashBytes is the hex SHA-256 of b: the hash of a file in the manifest and
// of config.yaml in a checkpoint.
func HashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Seal writes dir's manifest from the state files present, keeping the
// overrides of the manifest there (and appending add): the last step of
// each save. model.json and result.json are sealed only when finished is
// true, so that a kill between them and the manifest leaves a run that
// resume finishes.
func Seal(dir string, finished bool, add ...Override) error {
	m := Manifest{Version: manifestVersion}
	if old, err := readManifest(dir); err == nil {
		m.Overrides = old.Overrides
	}
	m.Overrides = append(m.Overrides, add...)
	for _, name := range append(StateFiles(), ValidationFiles()...) {
		if !finished && (name == ModelFile || name == ResultFile) {
			continue
		}
		n, sum, err := sumFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if name == ConfigFile {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			m.Config = string(raw)
		}
		m.Files = append(m.Files, FileSum{Name: name, Bytes: n, SHA256: sum})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, ManifestFile), append(b, '\n'))
}

// sumFile returns the size and hex SHA-256 of the file at path, read in
// pieces rather than whole (a checkpoint is megabytes).
func sumFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// ErrUnsealed is returned (wrapped) by Verify for a run directory without a
// manifest: one written before run directories were sealed.
var ErrUnsealed = errors.New("has no " + ManifestFile)

func readManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w (the manifest is damaged: restore it from a copy of the run)", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: data after the manifest's JSON object", path)
	}
	if m.Version != manifestVersion {
		return nil, fmt.Errorf("%s: version %d, this trmaml reads version %d", path, m.Version, manifestVersion)
	}
	if c, ok := m.Sum(ConfigFile); !ok || HashBytes([]byte(m.Config)) != c.SHA256 {
		return nil, fmt.Errorf("%s: its config does not match its own hash of %s (the manifest is damaged)", path, ConfigFile)
	}
	return &m, nil
}

// Sealed is a verified run directory.
type Sealed struct {
	Manifest
	// Config is the run's config (config.yaml, verified).
	Config configs.Config
	// Finished reports whether model.json and result.json are sealed.
	Finished bool
}

// ConfigChangedError is a config.yaml that differs from the sealed one.
type ConfigChangedError struct {
	Path string
	// Sealed and Now are the sealed content and the file's.
	Sealed, Now []byte
	// Changes are "field: sealed value -> value now" lines; empty when
	// the file is not valid YAML.
	Changes []string
}

func (e *ConfigChangedError) Error() string {
	what := strings.Join(e.Changes, "; ")
	if len(e.Changes) == 0 {
		what = "the content differs and is not a valid config; " + firstDifference(e.Sealed, e.Now)
	}
	return fmt.Sprintf("%s: changed since the run sealed it in %s: %s (restore it; fields that may change mid-run are changed with trmaml resume -run %s -override FIELD=VALUE, see docs/run-directory.md)",
		e.Path, ManifestFile, what, filepath.Dir(e.Path))
}

// firstDifference names the first line where now differs from sealed, for
// a config.yaml that can no longer be compared field by field.
func firstDifference(sealed, now []byte) string {
	a, b := strings.Split(string(sealed), "\n"), strings.Split(string(now), "\n")
	for i := range a {
		switch {
		case i >= len(b):
			return fmt.Sprintf("the file ends before line %d, sealed %q", i+1, a[i])
		case a[i] != b[i]:
			return fmt.Sprintf("line %d: sealed %q, now %q", i+1, a[i], b[i])
		}
	}
	return fmt.Sprintf("line %d: sealed the end of the file, now %q", len(a)+1, b[len(a)])
}

// Verify checks the run directory dir against its manifest and returns it:
// every sealed file present with its sealed hash, config.yaml unchanged
// (else a *ConfigChangedError naming the fields), and a checkpoint that
// carries the run's identity. A checkpoint newer than the manifest is
// accepted only as the one state a kill during a save leaves: an unfinished
// run whose checkpoint verifies, belongs to the run and names the sealed
// checkpoint as its predecessor. Every command that reads a run directory
// calls Verify first; a refusal names the file and what differs.
func Verify(dir string) (*Sealed, error) {
	m, err := readManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if !fileExists(filepath.Join(dir, ConfigFile)) {
			return nil, fmt.Errorf("%s has no %s: not a run directory (or one killed before its config was written: start it again with train)", dir, ConfigFile)
		}
		return nil, fmt.Errorf("%s %w: it was written by a trmaml from before run directories were sealed (or its manifest was deleted); if its files are as the run left them, seal it with: trmaml seal -run %s", dir, ErrUnsealed, dir)
	}
	if err != nil {
		return nil, err
	}
	s := &Sealed{Manifest: *m}
	_, s.Finished = m.Sum(ResultFile)
	var ckSum FileSum
	for _, f := range m.Files {
		path := filepath.Join(dir, f.Name)
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing, but sealed in %s: restore it from a copy of the run", path, ManifestFile)
		}
		if err != nil {
			return nil, err
		}
		switch f.Name {
		case ConfigFile:
			if HashBytes(raw) != f.SHA256 {
				if foreignManifest(dir, m, raw) {
					return nil, fmt.Errorf("%s: seals another %s than the directory's, and the checkpoint agrees with the directory's while %s does not match the manifest: the manifest is from another run or damaged; restore it from a copy of the run", filepath.Join(dir, ManifestFile), ConfigFile, MetricsFile)
				}
				return nil, configChanged(path, []byte(m.Config), raw)
			}
			continue
		case CheckpointFile:
			ckSum = f
			continue // below, with the config
		case BestValModelFile:
			if !s.Finished {
				// Rewritten before each checkpoint: a kill between the two
				// leaves the evaluation's model, which resume checks against
				// the validation rows up to the checkpoint and rewrites.
				continue
			}
		case MetricsFile, PFile, ValidationFile:
			if !s.Finished && int64(len(raw)) > f.Bytes {
				raw = raw[:f.Bytes] // rows after the checkpoint, from a killed save
			}
		}
		if err := compare(path, raw, f); err != nil {
			return nil, err
		}
	}
	if s.Config, err = configs.Parse(filepath.Join(dir, ConfigFile), []byte(m.Config)); err != nil {
		return nil, err
	}
	if ckSum.Name == "" && !s.Finished && fileExists(filepath.Join(dir, CheckpointFile)) {
		// The first checkpoint, written by a save a kill ended before
		// its seal: it must name no predecessor.
		ckSum = FileSum{Name: CheckpointFile}
	}
	if ckSum.Name != "" {
		if err := verifyCheckpoint(dir, s, ckSum); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// foreignManifest reports whether m, whose config differs from config.yaml
// (content cfg), is the odd file out rather than config.yaml: the
// checkpoint, which carries the hash of the config.yaml it was written
// under inside its own hash, names cfg, and metrics.csv is not the sealed
// one either. An edited config.yaml has neither (the checkpoint names the
// sealed config), so it is still blamed.
func foreignManifest(dir string, m *Manifest, cfg []byte) bool {
	ck, err := ReadCheckpoint(filepath.Join(dir, CheckpointFile))
	if err != nil || ck.ConfigSHA256 != HashBytes(cfg) {
		return false
	}
	sum, ok := m.Sum(MetricsFile)
	if !ok {
		return false
	}
	raw, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		return false
	}
	if _, finished := m.Sum(ResultFile); !finished && int64(len(raw)) > sum.Bytes {
		raw = raw[:sum.Bytes]
	}
	return HashBytes(raw) != sum.SHA256
}

// verifyCheckpoint checks checkpoint.json against its sealed sum and the
// run's identity.
func verifyCheckpoint(dir string, s *Sealed, sum FileSum) error {
	path := filepath.Join(dir, CheckpointFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ck, err := DecodeCheckpoint(path, raw)
	if err != nil {
		return err
	}
	if HashBytes(raw) != sum.SHA256 {
		if s.Finished || ck.Previous != sum.SHA256 {
			return fmt.Errorf("%s: does not match %s (sha256 %.12s…, sealed %.12s…): it was changed, damaged or copied from another run; restore it from a copy of the run", path, ManifestFile, HashBytes(raw), sum.SHA256)
		}
		if err := successorRows(dir, path, ck); err != nil {
			return err
		}
	}
	return CheckIdentity(path, ck, s)
}

// successorRows refuses a checkpoint newer than the sealed one unless the
// metric files hold the row of its last evaluation: a save writes that row
// before the checkpoint, so a kill between the checkpoint and the manifest
// leaves it there. Without it the checkpoint was copied in (say, the last
// checkpoint of a finished copy of the run), and it is blamed, not the
// metric files.
func successorRows(dir, path string, ck Checkpoint) error {
	last, err := ck.LastRow()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range []string{MetricsFile, PFile} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if !hasRow(raw, last) {
			return fmt.Errorf("%s: iteration %d, newer than the checkpoint sealed in %s, but %s has no row for its evaluation at iteration %d, which a save writes first: the checkpoint was copied in from elsewhere (another copy of the run?); restore the sealed checkpoint", path, ck.State.Iteration, ManifestFile, name, last)
		}
	}
	return nil
}

// hasRow reports whether the CSV content raw has a complete line for
// iteration it.
func hasRow(raw []byte, it int) bool {
	prefix := []byte(strconv.Itoa(it) + ",")
	for line := range bytes.Lines(raw) {
		if bytes.HasPrefix(line, prefix) && bytes.HasSuffix(line, []byte("\n")) {
			return true
		}
	}
	return false
}

// CheckIdentity refuses a checkpoint of another run: another seed, or a
// config other than the run's (or, for the checkpoint an override was made
// at, the config before it).
func CheckIdentity(path string, ck Checkpoint, s *Sealed) error {
	if ck.Seed != s.Config.Seed {
		return fmt.Errorf("%s: seed %d, the run's config.yaml has seed %d: the checkpoint belongs to another run", path, ck.Seed, s.Config.Seed)
	}
	cfgHash := HashBytes([]byte(s.Manifest.Config))
	if ck.ConfigSHA256 == cfgHash {
		return nil
	}
	if n := len(s.Overrides); n > 0 && s.Overrides[n-1].Iteration == ck.State.Iteration && s.Overrides[n-1].Before == ck.ConfigSHA256 {
		return nil
	}
	return fmt.Errorf("%s: config_sha256 %.12s…, the run's config.yaml hashes to %.12s…: the checkpoint belongs to another run or config", path, ck.ConfigSHA256, cfgHash)
}

// compare refuses raw, the content of path, unless it is the sealed f;
// the error names the first line that differs.
func compare(path string, raw []byte, f FileSum) error {
	if int64(len(raw)) == f.Bytes && HashBytes(raw) == f.SHA256 {
		return nil
	}
	where := ""
	if int64(len(raw)) != f.Bytes {
		where = fmt.Sprintf("%d bytes, sealed %d", len(raw), f.Bytes)
	} else {
		where = "same length, other content"
	}
	return fmt.Errorf("%s: does not match %s (%s): it was changed, damaged or copied from another run; restore it from a copy of the run", path, ManifestFile, where)
}

// configChanged describes how config.yaml's content now differs from the
// sealed one, field by field.
func configChanged(path string, sealed, now []byte) error {
	e := &ConfigChangedError{Path: path, Sealed: sealed, Now: now}
	a, errA := flatten(sealed)
	b, errB := flatten(now)
	if errA != nil || errB != nil {
		return e
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		va, okA := a[k]
		vb, okB := b[k]
		switch {
		case !okB:
			e.Changes = append(e.Changes, fmt.Sprintf("%s: %s when sealed, now absent", k, va))
		case !okA:
			e.Changes = append(e.Changes, fmt.Sprintf("%s: absent when sealed, now %s", k, vb))
		case va != vb:
			e.Changes = append(e.Changes, fmt.Sprintf("%s: %s when sealed, now %s", k, va, vb))
		}
	}
	if len(e.Changes) == 0 {
		e.Changes = []string{"the same fields, other formatting (restore the file)"}
	}
	return e
}

// flatten maps the field paths of a YAML document to their values.
func flatten(doc []byte) (map[string]string, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
			return
		}
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
	walk("", v)
	return out, nil
}

// SealExisting seals a run directory that has no manifest (one written
// before run directories were sealed), trusting its files as they are: the
// user has checked them (trmaml seal). A checkpoint without its hash or
// identity gets them, from the config.yaml beside it; one whose hash does
// not match is refused.
func SealExisting(dir string) error {
	if fileExists(filepath.Join(dir, ManifestFile)) {
		return fmt.Errorf("%s already has a %s: it is sealed", dir, ManifestFile)
	}
	cfgPath := filepath.Join(dir, ConfigFile)
	yml, err := os.ReadFile(cfgPath)
	if err != nil {
		return fmt.Errorf("%s cannot be sealed: %w", dir, err)
	}
	cfg, err := configs.Parse(cfgPath, yml)
	if err != nil {
		return err
	}
	ckPath := filepath.Join(dir, CheckpointFile)
	if raw, err := os.ReadFile(ckPath); err == nil {
		ck, err := decodeCheckpoint(ckPath, raw, false)
		if err != nil {
			return err
		}
		ck.Seed, ck.ConfigSHA256 = cfg.Seed, HashBytes(yml)
		if _, err := WriteCheckpoint(ckPath, ck); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return Seal(dir, fileExists(filepath.Join(dir, ResultFile)))
}
