package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/data/omniglot"
	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/run"
)

// TestOmniglotDataFlag: -data names the data root of an Omniglot run; a
// root without the data is refused, before a run directory is made, with
// the config file, the line of data.root and the command that fetches it.
func TestOmniglotDataFlag(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "omni.yaml")
	yaml := "name: omni\ntask:\n  family: omniglot\n  support: 1\n  query: 5\nmodel:\n  cnn: {filters: 4}\n  dtype: float32\n" +
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
	if err == nil || !strings.Contains(err.Error(), cfg+":12: data.root: omniglot data missing in data root /nonexistent/config-root") ||
		!strings.Contains(err.Error(), "(data root from the config)") {
		t.Errorf("error %v does not name the config's data root at its line", err)
	}
}

// TestOmniglotTrainAndEvalOnFixture: trmaml train and trmaml eval of an
// Omniglot config end to end on the synthetic fixture (given by -data, and
// accepted as content through run.DataRelease), so the command's Omniglot
// path runs on every clone.
func TestOmniglotTrainAndEvalOnFixture(t *testing.T) {
	fx := omniglottest.WriteFixture(t, 1)
	rel, err := omniglot.Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	run.DataRelease = &rel
	defer func() { run.DataRelease = nil }()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "omni.yaml")
	yaml := "name: omni\ntask:\n  family: omniglot\n  support: 1\n  query: 2\n  omniglot: {ways: 5}\nmodel:\n  cnn: {filters: 4}\n  dtype: float32\n" +
		"meta: {iterations: 2, batch: 2}\neval: {every: 2, instances: 10, train_instances: 10, query: 2, batch: 5, final_instances: 10}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"train", "-config", cfg, "-data", fx.Root, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("train: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, run.ResultFile)); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := dispatch([]string{"eval", "-run", out, "-data", fx.Root}, &stdout, &stderr); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, run.EvalFile))
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	var res run.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.MetaTest.Tasks, ","); got != "Angelic,Tengwar" || len(res.MetaTrain.Tasks) != 3 {
		t.Errorf("evaluated meta-test alphabets %s and %d meta-training ones, want the fixture's Angelic,Tengwar and 3", got, len(res.MetaTrain.Tasks))
	}
}
