package custommodel_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	_ "github.com/trmaml/trmaml/examples/custommodel" // registers model.kind resconv
	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	omniglot "github.com/trmaml/trmaml/tasks/omniglot/data"
)

const resconvYAML = `
name: resconv_tiny
algorithm: trmaml
task:
  family: omniglot
  support: 1
  query: 2
  omniglot: {ways: 3, rotate: false, image_size: %SIZE%}
model:
  kind: resconv
  resconv: {%SECTION%}
  dtype: float32
inner: {steps: 1, alpha: 0.1}
meta: {iterations: 2, batch: 2}
trmaml: {p_lr: 1.0e-3}
eval: {every: 2, instances: 4, train_instances: 4, query: 2, batch: 2, final_instances: 4}
`

func resconvConfig(size, section string) []byte {
	return []byte(strings.NewReplacer("%SIZE%", size, "%SECTION%", section).Replace(resconvYAML))
}

// TestResConvFromYAML trains the model of this package, registered from
// its init function, from a config through package run, as trmaml train
// does, and reads what model.json records.
func TestResConvFromYAML(t *testing.T) {
	cfg, err := configs.Parse("resconv.yaml", resconvConfig("8", "filters: 2"))
	if err != nil {
		t.Fatal(err)
	}
	fx := omniglottest.WriteFixture(t, 1)
	rel, err := omniglot.Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	res, err := run.Train(context.Background(), cfg, dir, run.Options{DataRoot: fx.Root, DataRelease: &rel})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metric != "accuracy" || !(res.MetaTest.Mean >= 0 && res.MetaTest.Mean <= 100) {
		t.Errorf("metric %s, mean %v: want accuracy in [0, 100]", res.Metric, res.MetaTest.Mean)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	var m rundir.Model
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Kind != "resconv" || !strings.Contains(string(m.Net), `"Filters": 2`) {
		t.Errorf("model.json: kind %q, net %s; want resconv with 2 filters", m.Kind, m.Net)
	}
}

// TestResConvRefusals: the model's own checks and the strict decoding of
// its section name the file, line and field.
func TestResConvRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		yaml []byte
		want string
	}{
		{"odd image", resconvConfig("9", "filters: 2"), `model.kind = "resconv": needs images of even height and width >= 2 for its 2x2 pool, the task family gives 9x9x1 inputs, 3 outputs`},
		{"misspelt key", resconvConfig("8", "filter: 2"), `resconv.yaml:11: unknown field "filter" in model.resconv (allowed: filters)`},
		{"range", resconvConfig("8", "filters: 0"), `resconv.yaml:11: model.resconv.filters = 0: must be in [1, 256]`},
		{"unknown kind", []byte("model: {kind: resnet}\n"), `resconv.yaml:1: model.kind = "resnet": is not registered (registered: `},
	} {
		_, err := configs.Parse("resconv.yaml", c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %s", c.name, err, c.want)
		}
	}
}
