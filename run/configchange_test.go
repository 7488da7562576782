package run

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// TestConfigChangeNamed: a config.yaml changed after it was sealed is
// refused listing each changed field with its sealed and current value; a
// cut that leaves valid YAML lists the fields it removed, and one that does
// not names the first line that differs.
func TestConfigChangeNamed(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Settings("trmaml").(*metalearn.TRMAML).PLR = 0.01
	yml, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(yml), "trmaml:\n  p_lr: 0.01") + len("trmaml:\n  p_lr: 0")
	if cut < len("trmaml:\n  p_lr: 0") {
		t.Fatalf("no p_lr: 0.01 in\n%s", yml)
	}
	for _, tc := range []struct {
		name string
		now  string
		want []string
	}{
		{"edited", strings.Replace(strings.Replace(string(yml), "seed: 1\n", "seed: 2\n", 1), "alpha: 0.001", "alpha: 0.002", 1),
			[]string{"seed: 1 when sealed, now 2", "inner.alpha: 0.001 when sealed, now 0.002"}},
		{"cut into valid YAML", string(yml[:cut]),
			[]string{"trmaml.p_lr: 0.01 when sealed, now 0", "eval.every: 10 when sealed, now absent"}},
		{"cut into invalid YAML", string(yml[:strings.Index(string(yml), "[0.1, 5]")+4]),
			[]string{"not a valid config; line 14: sealed \"    test_amplitudes: [0.1, 5]\", now \"    test_amplitudes: [0.1\""}},
		// An emptied file, or one holding no mapping, was reported as the
		// change of a field with no name (": absent when sealed, now null")
		// followed by every field of the config.
		{"emptied", "", []string{"the file is empty (sealed: " + strconv.Itoa(len(yml)) + " bytes)"}},
		{"not a mapping", "5\n", []string{"not a valid config; line 1: sealed \"name: tiny\", now \"5\""}},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, rundir.ConfigFile)
		os.WriteFile(path, yml, 0o644)
		if err := rundir.Seal(dir, false); err != nil {
			t.Fatal(err)
		}
		if _, err := rundir.Verify(dir); err != nil {
			t.Fatalf("undamaged: %v", err)
		}
		os.WriteFile(path, []byte(tc.now), 0o644)
		_, err := rundir.Verify(dir)
		var changed *rundir.ConfigChangedError
		if !errors.As(err, &changed) || !strings.HasPrefix(err.Error(), path+": changed since the run sealed it") {
			t.Errorf("%s: %v, want a ConfigChangedError naming %s", tc.name, err, path)
			continue
		}
		if strings.Contains(err.Error(), ": absent when sealed") || strings.Contains(err.Error(), "; : ") {
			t.Errorf("%s: %v\nnames a field without a name", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to contain %q", tc.name, err, w)
			}
		}
	}
}
