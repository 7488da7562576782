package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models/mlp"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/tasks/sinusoid"
)

// TestDivergedRunStopsAndEvaluates: Adam with a huge learning rate stops
// with a non-finite error naming the iteration (not a JSON error from
// writing an infinite checkpoint), and eval evaluates the last good
// checkpoint.
func TestDivergedRunStopsAndEvaluates(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.LR = 1e300
	c.Meta.Iterations = 200
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Train(context.Background(), c, dir, Options{})
	if !errors.Is(err, metalearn.ErrNonFinite) && !errors.Is(err, metalearn.ErrNonFiniteState) || !strings.Contains(err.Error(), "at iteration ") {
		t.Fatalf("diverging Adam run: %v, want a non-finite error naming the iteration", err)
	}
	res, err := Evaluate(context.Background(), dir, 0, Options{})
	if err != nil {
		t.Fatalf("eval of the stopped run: %v", err)
	}
	if !strings.Contains(res.Source, "checkpoint.json at iteration ") || res.Iterations%c.Eval.Every != 0 {
		t.Errorf("evaluated %q at iteration %d, want the last checkpoint", res.Source, res.Iterations)
	}
}

// TestNonFiniteAtIterationZeroNamesScale: a valid config whose scale makes
// the first evaluation overflow is refused naming the fields that set it.
func TestNonFiniteAtIterationZeroNamesScale(t *testing.T) {
	t.Parallel()
	for _, edit := range []func(c *configs.Config){
		func(c *configs.Config) { mlp.Section(*c).InitStd = 1e200 },
		func(c *configs.Config) { c.Task.Section("sinusoid").(*sinusoid.Config).XMin = -1e300 },
	} {
		c := tinyConfig()
		edit(&c)
		if err := c.Validate(); err != nil {
			t.Skipf("the config is refused before training: %v", err)
		}
		_, err := Train(context.Background(), c, filepath.Join(t.TempDir(), "run"), Options{})
		if !errors.Is(err, metalearn.ErrNonFinite) || !strings.Contains(err.Error(), "model.mlp.init_std = ") || !strings.Contains(err.Error(), "task.sinusoid.x_min = ") {
			t.Errorf("non-finite first evaluation: %v, want the scale's fields named", err)
		}
	}
}

// TestDivergenceSaysWhatToChange: a run that diverges after iteration 0,
// whether a training step or an evaluation meets the first non-finite loss,
// stops naming the run, the iteration, the settings to make smaller and
// the checkpoint kept; its metrics.csv stays readable.
func TestDivergenceSaysWhatToChange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		every int
	}{
		{"in a training step", 5},
		{"in an evaluation", 1},
	} {
		cfg := tinyConfig()
		cfg.Meta.Optimizer, cfg.Meta.LR, cfg.Meta.Iterations, cfg.Eval.Every = "sgd", 2, 100, c.every
		dir := filepath.Join(t.TempDir(), "run")
		_, err := Train(context.Background(), cfg, dir, Options{})
		if err == nil {
			t.Fatalf("%s: the diverging run finished", c.name)
		}
		for _, want := range []string{"tiny: training stopped", "at iteration ", "diverged", "meta.lr = 2", "inner.alpha = ", "from the last evaluation"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", c.name, err, want)
			}
		}
		if _, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
