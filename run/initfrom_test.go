package run

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/export"
	"github.com/trmaml/trmaml/models/mlp"
	"github.com/trmaml/trmaml/rundir"
)

// TestInitFrom starts a run from another run's exported model: its initial
// model parameters are that model's, in float32, and Meta-SGD's step sizes
// after them start at inner.alpha. A file that does not fit the model is
// refused naming the tensor, before a run directory is made.
func TestInitFrom(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.Iterations, c.Eval.Every = 2, 2
	first := filepath.Join(t.TempDir(), "first")
	if _, err := Train(context.Background(), c, first, Options{}); err != nil {
		t.Fatal(err)
	}
	file, err := export.Safetensors(first, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := rundir.ReadModel(filepath.Join(first, rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	c.Init.From, c.Inner.Kind = file, "metasgd"
	s, err := Build(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.init(rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 2*len(m.W) {
		t.Fatalf("%d parameters, want the model's %d and as many step sizes", len(w), len(m.W))
	}
	for i, v := range m.W {
		if w[i] != float64(float32(v)) || w[len(m.W)+i] != c.Inner.Alpha {
			t.Fatalf("parameter %d: %v (step size %v), want %v (%v)", i, w[i], w[len(m.W)+i], float32(v), c.Inner.Alpha)
		}
	}

	other := tinyConfig()
	mlp.Section(other).Hidden = []int{9}
	other.Init.From = file
	dir := filepath.Join(t.TempDir(), "other")
	_, err = Train(context.Background(), other, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "init.from: "+file+": tensor 0.weight has shape [8 1], the model's is [9 1]") {
		t.Errorf("a file of another shape: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused run made its directory: %v", err)
	}
	broken := filepath.Join(t.TempDir(), "broken.safetensors")
	raw, _ := os.ReadFile(file)
	os.WriteFile(broken, raw[:len(raw)-3], 0o644)
	other.Init.From = broken
	if _, err := Build(other, Options{}); err == nil || !strings.Contains(err.Error(), broken+": truncated") {
		t.Errorf("a truncated file: %v", err)
	}
}
