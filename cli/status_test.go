package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusFolderOfExperiments: trmaml status of a folder holding
// experiment directories (as scripts/robust_*.sh lay them out) prints each
// experiment's cells under its name; a folder with none is refused.
func TestStatusFolderOfExperiments(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	first := filepath.Join(root, "a", "maml-second-seed1")
	trainSmall(t, first)
	if err := os.CopyFS(filepath.Join(root, "b", "maml-second-seed1"), os.DirFS(first)); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(root, "logs"), 0o755) // not an experiment: left out

	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"status", root}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{filepath.Join(root, "a") + ":", filepath.Join(root, "b") + ":", "meta-test MSE mean"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "1 cells: 1 finished"); n != 2 {
		t.Errorf("%d experiments summarised, want 2:\n%s", n, out)
	}
	if strings.Contains(out, "logs") {
		t.Errorf("a folder without runs is listed:\n%s", out)
	}

	err := dispatch([]string{"status", filepath.Join(root, "logs")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "holds no run directories") {
		t.Errorf("empty folder: %v, want a refusal", err)
	}
}
