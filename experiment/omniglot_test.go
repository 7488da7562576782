package experiment

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/run"
)

// TestOmniglotCPUGrid loads the CPU-scale Omniglot grid: every run is built
// on the shared data (so its config is valid and fits the data), MAML and
// TR-MAML with two seeds each.
func TestOmniglotCPUGrid(t *testing.T) {
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
	run.DataRoot = root
	defer func() { run.DataRoot = "" }()
	_, cfgs, err := Load(filepath.Join("..", "configs", "experiments", "omniglot_cpu_5way.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range cfgs {
		if c.Task.Family != "omniglot" || c.Eval.FinalInstances != 5000 || c.Order != "second" {
			t.Errorf("%s: family %s, final instances %d, order %s", c.Name, c.Task.Family, c.Eval.FinalInstances, c.Order)
		}
		seen[c.Algorithm]++
	}
	if len(cfgs) != 4 || seen["maml"] != 2 || seen["trmaml"] != 2 {
		t.Errorf("%d runs %v, want MAML and TR-MAML with 2 seeds each", len(cfgs), seen)
	}
}
