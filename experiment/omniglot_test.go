package experiment

import (
	"github.com/trmaml/trmaml/tasks/omniglot"
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/run"
)

// TestOmniglotCPUGrids loads the CPU-scale Omniglot grids: every run is
// built on the shared data (so its config is valid and fits the data), MAML
// and TR-MAML with three seeds each at the grid's ways.
func TestOmniglotCPUGrids(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs the shared Omniglot data (skipped with -short)")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "shared", "data"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "omniglot", "images_background.zip")); err != nil {
		t.Fatalf("the shared Omniglot data is missing: %v (run with -short to skip)", err)
	}
	opts := run.Options{DataRoot: root, Datasets: new(run.Datasets)}
	for _, grid := range []struct {
		file string
		ways int
	}{
		{"omniglot_cpu_5way.yaml", 5},
		{"omniglot_cpu_20way.yaml", 20},
	} {
		_, cfgs, err := Load(filepath.Join("..", "configs", "experiments", grid.file), opts)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, c := range cfgs {
			if c.Task.Family != "omniglot" || c.Task.Section("omniglot").(*omniglot.Config).Ways != grid.ways || c.Eval.FinalInstances != 5000 || c.Order != "second" {
				t.Errorf("%s: family %s, %d-way, final instances %d, order %s", c.Name, c.Task.Family, c.Task.Section("omniglot").(*omniglot.Config).Ways, c.Eval.FinalInstances, c.Order)
			}
			seen[c.Algorithm]++
		}
		if len(cfgs) != 6 || seen["maml"] != 3 || seen["trmaml"] != 3 {
			t.Errorf("%s: %d runs %v, want MAML and TR-MAML with 3 seeds each", grid.file, len(cfgs), seen)
		}
	}
}
