package experiment

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	omniglottask "github.com/trmaml/trmaml/tasks/omniglot"
	omniglot "github.com/trmaml/trmaml/tasks/omniglot/data"
)

// TestOmniglotCPUGrids loads the CPU-scale Omniglot grids: every run is
// built on the shared data (so its config is valid and fits the data), MAML
// and TR-MAML with three seeds each at the grid's ways.
func TestOmniglotCPUGrids(t *testing.T) {
	t.Parallel()
	opts := run.Options{DataRoot: omniglottest.Root(t), Datasets: new(configs.DataCache)}
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
			if c.Task.Family != "omniglot" || omniglottask.Section(c).Ways != grid.ways || c.Eval.FinalInstances != 5000 || c.Order != "second" {
				t.Errorf("%s: family %s, %d-way, final instances %d, order %s", c.Name, c.Task.Family, omniglottask.Section(c).Ways, c.Eval.FinalInstances, c.Order)
			}
			seen[c.Algorithm]++
		}
		if len(cfgs) != 6 || seen["maml"] != 3 || seen["trmaml"] != 3 {
			t.Errorf("%s: %d runs %v, want MAML and TR-MAML with 3 seeds each", grid.file, len(cfgs), seen)
		}
	}
}

// TestOmniglotGridOnFixture runs a small Omniglot grid (MAML and TR-MAML,
// 5-way 1-shot, a 4-filter CNN) end to end on the synthetic fixture, on
// every clone: every run finishes with a result over the fixture's
// alphabets, and a second pass leaves the finished runs alone.
func TestOmniglotGridOnFixture(t *testing.T) {
	fx := omniglottest.WriteFixture(t, 1)
	rel, err := omniglot.Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	opts := run.Options{DataRoot: fx.Root, DataRelease: &rel, Datasets: new(configs.DataCache)}
	dir := writeFiles(t, map[string]string{
		"exp.yaml": "name: g\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [first]\nseeds: [1]\n",
		"base.yaml": `name: tiny_omniglot
task:
  family: omniglot
  support: 1
  query: 2
  omniglot: {ways: 5, rotate: true, image_size: 28}
model:
  kind: conv4
  conv4: {filters: 4, blocks: 4}
inner: {steps: 1, alpha: 0.1}
meta: {iterations: 4, batch: 2}
trmaml: {p_lr: 1.0e-3}
eval: {every: 2, instances: 10, train_instances: 10, query: 2, batch: 5, final_instances: 10}
`,
	})
	_, cfgs, err := Load(filepath.Join(dir, "exp.yaml"), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	jobs := Jobs(cfgs, out)
	var log bytes.Buffer
	if err := Run(context.Background(), out, jobs, 2, &log, false, opts); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(jobs) != 2 || !strings.Contains(log.String(), "experiment: 8/8 iterations over 2 runs") {
		t.Errorf("%d jobs; log:\n%s", len(jobs), log.String())
	}
	for _, j := range jobs {
		res, err := run.Evaluate(context.Background(), j.Dir, 0, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.MetaTrain.Tasks) != 3 || len(res.MetaTest.Tasks) != 2 || res.Metric != "accuracy" {
			t.Errorf("%s: %d meta-training and %d meta-test alphabets scored by %s, want the fixture's 3 and 2 by accuracy",
				j.Dir, len(res.MetaTrain.Tasks), len(res.MetaTest.Tasks), res.Metric)
		}
	}
	keep, err := os.ReadFile(filepath.Join(jobs[0].Dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), out, jobs, 2, &log, false, opts); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(jobs[0].Dir, rundir.MetricsFile)); !bytes.Equal(again, keep) {
		t.Error("a finished run was redone")
	}
}

// TestExpandReadsNoData: Expand lists an Omniglot grid's runs where no data
// is (trmaml status and experiment -list on a login node), the same configs
// Load builds where the data is, while Load refuses the data-less root.
func TestExpandReadsNoData(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "configs", "experiments", "omniglot_paper_5way.yaml")
	_, listed, err := Expand(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path, run.Options{DataRoot: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "data") {
		t.Errorf("Load without data: %v, want a refusal naming the data", err)
	}
	_, built, err := Load(path, run.Options{DataRoot: omniglottest.Root(t), Datasets: new(configs.DataCache)})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || !reflect.DeepEqual(listed, built) {
		t.Errorf("Expand gave %d configs, Load %d, or they differ", len(listed), len(built))
	}
}
