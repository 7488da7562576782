package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/rundir"
)

// TestDivergenceWarning: a run whose last mean meta-test loss is 1000
// times its first (iteration 0) or more is said to have probably diverged,
// with what to make smaller; one below the factor, one that learned, one
// scored in accuracy, one started from a trained model (init.from) and one
// without two evaluations are not.
func TestDivergenceWarning(t *testing.T) {
	t.Parallel()
	sine := tinyConfig()
	omniglot := tinyConfig()
	omniglot.Task.Family = "omniglot"
	from := tinyConfig()
	from.Init.From = "elsewhere/model.json"
	rows := func(testMeans ...float64) string {
		s := rundir.MetricsHeaderFor("mse")
		for i, v := range testMeans {
			batch := "1"
			if i == 0 {
				batch = ""
			}
			s += fmt.Sprintf("%d,1,%s,%s,1,1,1,%v,1,1\n", 10*i, batch, batch, v)
		}
		return s
	}
	for _, c := range []struct {
		name string
		cfg  configs.Config
		csv  string
		want []string // nil: no warning
	}{
		{"grew 1000 times", sine, rows(4, 5, 4000), []string{"grew from 4 at iteration 0 to 4000 at iteration 20 (1e+03 times, 1000 or more)", "probably diverged", "make meta.lr = 0.001 or inner.alpha = 0.001 smaller"}},
		{"grew 1e12 times", sine, rows(4, 4e12), []string{"to 4e+12 at iteration 10", "probably diverged"}},
		{"grew 999 times", sine, rows(4, 3996), nil},
		{"fell back", sine, rows(4, 4e6, 3), nil},
		{"learned", sine, rows(4, 0.5, 0.1), nil},
		{"one evaluation", sine, rows(4), nil},
		{"zero at iteration 0", sine, rows(0, 5), nil},
		{"accuracy", omniglot, rows(0.2, 0.9), nil},
		{"init.from", from, rows(1e-9, 1e-5), nil},
		{"no metrics.csv", sine, "", nil},
	} {
		dir := t.TempDir()
		if c.csv != "" {
			if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(c.csv), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got := DivergenceWarning(dir, c.cfg)
		if c.want == nil && got != "" {
			t.Errorf("%s: warning %q, want none", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warning %q, want it to say %q", c.name, got, w)
			}
		}
	}
}

// TestTrainWarnsOfDivergence: a run whose meta-learning rate makes its loss
// huge but finite finishes with the warning in Options.Warnings; a run that
// learns finishes without one. Resume, of the finished run, warns again.
func TestTrainWarnsOfDivergence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lr   float64
		warn bool
	}{{100, true}, {0.001, false}} {
		cfg := tinyConfig()
		cfg.Meta.LR, cfg.Meta.Iterations = c.lr, 100
		var warnings bytes.Buffer
		dir := filepath.Join(t.TempDir(), "run")
		if _, err := Train(context.Background(), cfg, dir, Options{Warnings: &warnings}); err != nil {
			t.Fatalf("meta.lr = %v: %v", c.lr, err)
		}
		// Resuming the finished run shows its result, and the warning again.
		if _, err := Resume(context.Background(), dir, Options{Warnings: &warnings}); err != nil {
			t.Fatalf("resume of the finished run: %v", err)
		}
		got := warnings.String()
		if n := strings.Count(got, "warning: "+dir+": the mean meta-test loss grew"); (n == 2) != c.warn || (n == 0) == c.warn {
			t.Errorf("meta.lr = %v: %d divergence warnings from train and resume, want them: %v\n%s", c.lr, n, c.warn, got)
		}
		if c.warn && !strings.Contains(got, "probably diverged; make meta.lr = 100 or inner.alpha = 0.001 smaller") {
			t.Errorf("meta.lr = %v: warnings %q do not say what to make smaller", c.lr, got)
		}
	}
}
