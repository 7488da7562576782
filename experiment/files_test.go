package experiment

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
)

// TestEveryRepositoryFileLoads loads every config under configs/ and
// expands every experiment file under configs/experiments/ (building each
// run's setup), so that no file of the repository falls behind the schema;
// the *_base.yaml files beside the experiments are configs.
// Experiment files on Omniglot need the data and are left to
// TestOmniglotCPUGrids.
func TestEveryRepositoryFileLoads(t *testing.T) {
	n := 0
	err := filepath.WalkDir("../configs", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		n++
		if !strings.Contains(filepath.ToSlash(path), "/experiments/") || strings.HasSuffix(path, "_base.yaml") {
			if _, err := configs.Load(path); err != nil {
				t.Error(err)
			}
			return nil
		}
		if strings.Contains(filepath.Base(path), "omniglot") {
			return nil
		}
		if strings.Contains(filepath.Base(path), "imagenet") { // no data here: expanded, not built
			if _, _, err := Expand(path); err != nil {
				t.Error(err)
			}
			return nil
		}
		if _, cfgs, err := Load(path, run.Options{}); err != nil {
			t.Error(err)
		} else if len(cfgs) == 0 {
			t.Errorf("%s: an empty grid", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 25 {
		t.Errorf("found %d files under configs/: the walk missed some", n)
	}
}
