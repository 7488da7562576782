package rundir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/trmaml/trmaml/internal/shell"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
	for _, name := range StateFiles() {
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
// manifest: one killed between its config.yaml and its first seal (resume
// starts it), or whose manifest was lost (trmaml seal recomputes it).
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
	// Unbound are the files checked against the manifest only: written
	// before the bindings (bind.go), Note.
	Unbound []string
	// successor is set for a checkpoint newer than the sealed one.
	successor bool
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
	switch {
	case len(bytes.TrimSpace(e.Now)) == 0:
		what = fmt.Sprintf("the file is empty (sealed: %d bytes)", len(e.Sealed))
	case len(e.Changes) == 0:
		what = "the content differs and is not a valid config; " + firstDifference(e.Sealed, e.Now)
	}
	return fmt.Sprintf("%s: changed since the run sealed it in %s: %s (restore it; fields that may change mid-run are changed with trmaml resume -run %s -override FIELD=VALUE, see docs/run-directory.md)",
		e.Path, ManifestFile, what, shell.Quote(filepath.Dir(e.Path)))
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

// flatten maps the field paths of a YAML document, a mapping, to their
// values.
func flatten(doc []byte) (map[string]string, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("not a mapping of fields")
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
