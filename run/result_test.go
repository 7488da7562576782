package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/rundir"
)

// TestResultRecordsMetricAndMasses: a run names its metric and records every
// task's mass in result.json.
func TestResultRecordsMetricAndMasses(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.Iterations = 1
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Train(context.Background(), c, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"metric": "mse"`) {
		t.Error(`result.json does not name its metric "mse"`)
	}
	var r rundir.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	for _, s := range []rundir.Stats{r.MetaTrain, r.MetaTest} {
		if len(s.Masses) != len(s.Tasks) || slices.ContainsFunc(s.Masses, func(m float64) bool { return m != 1 }) {
			t.Errorf("masses %v, want 1 for each of %d sinusoid tasks", s.Masses, len(s.Tasks))
		}
	}
	if !strings.Contains(string(raw), `"masses": [`) {
		t.Error("result.json has no masses")
	}
}

// TestLegacyResultReadsAsMSE: result.json from before the metric and masses
// fields is read as MSE with every task of mass 1 (the sinusoid family, the
// only one then); recorded values are kept.
func TestLegacyResultReadsAsMSE(t *testing.T) {
	t.Parallel()
	legacy := `{"name": "old", "algorithm": "maml",
		"meta_test": {"mean": 1, "worst": 2, "per_task": [1, 2], "tasks": ["a", "b"]},
		"meta_train": {"mean": 1, "per_task": [1, 1, 1], "tasks": ["a", "b", "c"]}}`
	var r rundir.Result
	if err := json.Unmarshal([]byte(legacy), &r); err != nil {
		t.Fatal(err)
	}
	if r.Metric != "mse" {
		t.Errorf("metric %q, want mse", r.Metric)
	}
	if !slices.Equal(r.MetaTest.Masses, []float64{1, 1}) || !slices.Equal(r.MetaTrain.Masses, []float64{1, 1, 1}) {
		t.Errorf("masses %v and %v, want all 1", r.MetaTest.Masses, r.MetaTrain.Masses)
	}

	recorded := `{"metric": "accuracy", "meta_train": {"per_task": [0.5, 0.9], "tasks": ["a", "b"], "masses": [0.25, 1]}}`
	if err := json.Unmarshal([]byte(recorded), &r); err != nil {
		t.Fatal(err)
	}
	if r.Metric != "accuracy" || !slices.Equal(r.MetaTrain.Masses, []float64{0.25, 1}) {
		t.Errorf("recorded metric and masses not kept: %q, %v", r.Metric, r.MetaTrain.Masses)
	}
	if err := json.Unmarshal([]byte(`{"meta_test": {"masses": "x"}}`), &r); err == nil {
		t.Error("masses of the wrong type accepted")
	}
}
