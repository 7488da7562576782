package experiment

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/run"
)

// TestRunCleansStaleTemps: the temporary files an experiment killed while
// writing its report left in the experiment directory (a half-written
// figure) are gone after the experiment is run again; a file that only
// looks like one is kept.
func TestRunCleansStaleTemps(t *testing.T) {
	t.Parallel()
	dir, cfgs := oneRunGrid(t)
	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	stale := []string{".figure1.png.tmp3120957", ".p_weights.png.tmp88", ".table.md.tmp1"}
	for _, name := range append(stale, "notes.tmp1") {
		if err := os.WriteFile(filepath.Join(out, name), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Run(context.Background(), out, Jobs(cfgs, out), 1, io.Discard, false, run.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
			t.Errorf("%s outlived the re-run (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "notes.tmp1")); err != nil {
		t.Errorf("a file that is not a temporary file was removed: %v", err)
	}
}
