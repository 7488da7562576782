package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImageFolderTrainAndExperiment: a folder of colour PNGs laid out as
// DIR/GROUP/CLASS/IMAGE trains MAML and TR-MAML from YAML through trmaml
// train (then eval) and trmaml experiment, in colour (channels: 3 in the
// run directory) at a size that is not square, keeping the model of the
// best meta-validation accuracy; the report calls the tasks what the
// config calls them.
func TestImageFolderTrainAndExperiment(t *testing.T) {
	t.Parallel()
	dir := writeColourFolder(t, 4, 6, 4, 20)
	tmp := t.TempDir()
	base := `name: folder
algorithm: trmaml
task:
  family: imagefolder
  support: 1
  query: 2
  imagefolder:
    dir: ` + dir + `
    ways: 3
    channels: 3
    image: [16, 12]
    resize: box
    noun: category
    splits: {train: [g1, g2], validation: [g3], test: [g4]}
model: {kind: conv4, conv4: {filters: 4, blocks: 2}}
inner: {steps: 1, alpha: 0.1}
meta: {iterations: 4, batch: 2, output: best_val}
trmaml: {p_lr: 1e-3}
eval: {every: 2, instances: 4, train_instances: 6, batch: 2}
`
	exp := "name: folders\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [second]\nseeds: [1]\n"
	for name, body := range map[string]string{"base.yaml": base, "exp.yaml": exp} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	run := filepath.Join(tmp, "run")
	if err := dispatch([]string{"train", "-config", filepath.Join(tmp, "base.yaml"), "-out", run}, &stdout, &stderr); err != nil {
		t.Fatalf("train: %v\n%s", err, stderr.String())
	}
	if cfg := mustRead(t, filepath.Join(run, "config.yaml")); !strings.Contains(cfg, "channels: 3") || !strings.Contains(cfg, "family: imagefolder") {
		t.Errorf("config.yaml of the run:\n%s", cfg)
	}
	if !strings.Contains(stdout.String(), "evaluated: the model of iteration") {
		t.Errorf("train does not say which model it evaluated:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(run, "validation.csv")); err != nil {
		t.Error(err)
	}
	if err := dispatch([]string{"eval", "-run", run}, &stdout, &stderr); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	out := filepath.Join(tmp, "grid")
	if err := dispatch([]string{"experiment", "-config", filepath.Join(tmp, "exp.yaml"), "-out", out, "-jobs", "1"}, &stdout, &stderr); err != nil {
		t.Fatalf("experiment: %v\n%s", err, stderr.String())
	}
	table := mustRead(t, filepath.Join(out, "per_task.md"))
	if !strings.Contains(table, "per category") || strings.Contains(table, "alphabet") {
		t.Errorf("per_task.md does not call the tasks categories:\n%s", table)
	}
}
