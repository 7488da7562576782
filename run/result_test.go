package run

import (
	"context"
	"encoding/json"
	"fmt"
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

// TestResultWithoutMetricRefused: a result.json that names no metric, or
// gives its tasks no masses, is refused naming the file and the field; it
// is not read as some default.
func TestResultWithoutMetricRefused(t *testing.T) {
	t.Parallel()
	stats := `{"mean": 1.5, "weighted_mean": 1.5, "worst": 2, "worst_task": "b", "std": 0.5, "instances": 2, "per_task": [1, 2], "tasks": ["a", "b"]%s}`
	for _, c := range []struct{ name, doc, want string }{
		{"no metric", `{"name": "x", "algorithm": "maml", "meta_test": ` + fmt.Sprintf(stats, `, "masses": [1, 1]`) + `, "meta_train": ` + fmt.Sprintf(stats, `, "masses": [1, 1]`) + `}`, `metric: unknown metric ""`},
		{"no masses", `{"name": "x", "algorithm": "maml", "metric": "mse", "meta_test": ` + fmt.Sprintf(stats, "") + `, "meta_train": ` + fmt.Sprintf(stats, "") + `}`, "masses: 0 for 2 tasks"},
	} {
		path := filepath.Join(t.TempDir(), rundir.ResultFile)
		if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := rundir.ReadResult(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal naming %s and %q", c.name, err, path, c.want)
		}
	}
}
