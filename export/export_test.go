package export_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/export"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/safetensors"
)

// TestSafetensorsMLP exports a trained MLP run: PyTorch's Linear names and
// [out, in] weights (the transpose of graph's rows), float32 values of
// model.json's w, and a run directory that still verifies.
func TestSafetensorsMLP(t *testing.T) {
	c, err := configs.Parse("x.yaml", []byte(`
model: {mlp: {hidden: [3]}}
meta: {iterations: 2}
eval: {every: 2, instances: 500, train_instances: 200, query: 5, batch: 100}
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := export.Safetensors(dir, ""); err == nil {
		t.Error("a missing run was exported")
	}
	if _, err := run.Train(context.Background(), c, dir, run.Options{}); err != nil {
		t.Fatal(err)
	}
	path, err := export.Safetensors(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Decode(path, raw)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rundir.ReadModel(filepath.Join(dir, rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"0.weight", "0.bias", "2.weight", "2.bias"}
	shapes := [][]int{{3, 1}, {3}, {1, 3}, {1}}
	if len(ts) != 4 || meta["kind"] != "mlp" {
		t.Fatalf("%d tensors, metadata %v", len(ts), meta)
	}
	for i, tn := range ts {
		if tn.Name != names[i] || len(tn.Shape) != len(shapes[i]) || tn.Shape[0] != shapes[i][0] {
			t.Errorf("tensor %d: %s %v, want %s %v", i, tn.Name, tn.Shape, names[i], shapes[i])
		}
	}
	// graph's second weight is (3, 1) rows [w6, w7, w8]; PyTorch's [1, 3].
	if got, want := ts[2].Data, m.W[6:9]; got[0] != float32(want[0]) || got[2] != float32(want[2]) {
		t.Errorf("2.weight %v, want %v", got, want)
	}
	if _, err := rundir.Verify(dir); err != nil {
		t.Errorf("the run no longer verifies: %v", err)
	}
	// Exporting the same run again is nothing new; another run's model is
	// not written over the file (it replaced it without a word).
	if _, err := export.Safetensors(dir, ""); err != nil {
		t.Errorf("exporting the run again: %v", err)
	}
	c.Seed = 2
	other := filepath.Join(t.TempDir(), "other")
	if _, err := run.Train(context.Background(), c, other, run.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := export.Safetensors(other, dir); err == nil || !strings.Contains(err.Error(), path+" already holds another model") {
		t.Errorf("exporting another run over %s: %v, want a refusal naming it", path, err)
	}
	if again, err := os.ReadFile(path); err != nil || !bytes.Equal(again, raw) {
		t.Errorf("%s changed: %v", path, err)
	}
}
