package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOmniglotDataFlag: -data names the data root of an Omniglot run; a
// root without the data is refused, before a run directory is made, with
// the config file, the line of data.root and the command that fetches it.
func TestOmniglotDataFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "omni.yaml")
	yaml := "name: omni\ntask:\n  family: omniglot\n  support: 1\n  query: 5\nmodel:\n  kind: conv4\n  conv4: {filters: 4}\n  dtype: float32\n" +
		"meta: {batch: 2}\neval: {batch: 4, final_instances: 25}\ndata:\n  root: /nonexistent/config-root\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	out := filepath.Join(dir, "run")
	var stdout, stderr bytes.Buffer
	err := dispatch([]string{"train", "-config", cfg, "-data", empty, "-out", out}, &stdout, &stderr)
	for _, want := range []string{cfg + ": data.root: omniglot data missing in data root " + empty, "trmaml data omniglot -dir " + empty, "(data root from the command line)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not contain %q", err, want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("run directory made: %v", err)
	}
	// Without -data the config's root is used, and named at its line.
	err = dispatch([]string{"train", "-config", cfg, "-out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), cfg+":13: data.root: omniglot data missing in data root /nonexistent/config-root") ||
		!strings.Contains(err.Error(), "(data root from the config)") {
		t.Errorf("error %v does not name the config's data root at its line", err)
	}
}
