package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// TestStatusNamesDamage: trmaml status of a damaged run directory says
// which file is damaged and how (the manifest check's refusal), counts it
// as damaged, and names a deleted config.yaml of a sealed run instead of
// finding no run there.
func TestStatusNamesDamage(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	trainSmall(t, dir)
	status := func() (string, error) {
		var stdout, stderr bytes.Buffer
		err := dispatch([]string{"status", dir}, &stdout, &stderr)
		return stdout.String(), err
	}
	if out, err := status(); err != nil || !strings.Contains(out, "1 cells: 1 finished") {
		t.Fatalf("undamaged: %v\n%s", err, out)
	}

	cfgPath := filepath.Join(dir, rundir.ConfigFile)
	yml, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cfgPath, bytes.Replace(yml, []byte("seed: 1\n"), []byte("seed: 2\n"), 1), 0o644)
	out, err := status()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"damaged", rundir.ConfigFile, "seed: 1 when sealed, now 2", "1 cells: 1 damaged"} {
		if !strings.Contains(out, want) {
			t.Errorf("edited seed: want %q in\n%s", want, out)
		}
	}

	os.Remove(cfgPath)
	if out, err := status(); err == nil || !strings.Contains(err.Error(), rundir.ConfigFile) {
		t.Errorf("deleted config.yaml: %v, want a refusal naming it\n%s", err, out)
	}
}

// trainSmall trains a small sine run of 20 iterations into dir.
func trainSmall(t *testing.T, dir string) {
	t.Helper()
	c, err := configs.Parse("small.yaml", []byte("name: small\nmodel: {kind: mlp, mlp: {hidden: [8]}}\nmeta: {iterations: 20, batch: 10}\neval: {every: 10, instances: 490, train_instances: 100, batch: 245, query: 5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Train(context.Background(), c, dir, run.Options{}); err != nil {
		t.Fatal(err)
	}
}
