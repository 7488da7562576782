package results_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

// accuracyRuns writes MAML (levels 1, 1.2) and TR-MAML (levels 0.5, 0.7)
// classification runs, two seeds each, and loads their groups.
func accuracyRuns(t *testing.T) []*results.Group {
	t.Helper()
	return loadGroups(t, writeRuns(t,
		resultstest.NewAccuracy("omni_maml", "maml", "second", 1, 1, 1),
		resultstest.NewAccuracy("omni_maml", "maml", "second", 2, 1, 1.2),
		resultstest.NewAccuracy("omni_trmaml", "trmaml", "second", 1, 1, 0.5),
		resultstest.NewAccuracy("omni_trmaml", "trmaml", "second", 2, 1, 0.7)))
}

func TestLoadAccuracyRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := resultstest.NewAccuracy("omni", "trmaml", "second", 1, 1, 1).Write(dir); err != nil {
		t.Fatal(err)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Score.Metric != metalearn.Accuracy {
		t.Errorf("score %+v, want accuracy", r.Score)
	}
	// The worst alphabet is the least accurate one.
	if tr := r.Result.MetaTrain; tr.WorstTask != "Greek" || !near(tr.Worst, 0.7, 1e-15) {
		t.Errorf("worst meta-training alphabet %q (%v), want Greek (0.7)", tr.WorstTask, tr.Worst)
	}
}

// TestRunWithoutMetricRefused: a run directory whose result.json has
// neither metric nor masses (a format older than the first release) is
// refused naming the file and the field, not read as MSE.
func TestRunWithoutMetricRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := resultstest.New("sine", "maml", "second", 1, 5, 1).Write(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "result.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	legacy := regexp.MustCompile(`(?s)\s*"metric": "mse",|,\s*"masses": \[[^]]*\]`).ReplaceAllString(string(raw), "")
	if strings.Contains(legacy, "metric") || strings.Contains(legacy, "masses") {
		t.Fatalf("edit left metric or masses in:\n%s", legacy)
	}
	if err := os.WriteFile(path, []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	resultstest.Reseal(t, dir)
	if _, err := results.Load(dir); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "metric") {
		t.Errorf("a result.json without metric: %v, want a refusal naming %s and metric", err, path)
	}
}

func TestLoadScoreErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"unknown metric", func(s string) string { return strings.Replace(s, `"metric": "accuracy"`, `"metric": "f1"`, 1) },
			`metric: unknown metric "f1" (allowed: mse, accuracy)`},
		// Recorded as if the largest accuracy were the worst.
		{"worst in the loss direction", func(s string) string {
			return strings.Replace(s, `"worst": 0.6,`+"\n"+`    "worst_task": "Sylheti"`, `"worst": 0.9,`+"\n"+`    "worst_task": "Atlantean"`, 1)
		}, "meta_test.worst = 0.9, but the per_task values give 0.6"},
		// An accuracy is a fraction of the query points: never above 1.
		{"accuracy above 1", func(s string) string {
			return strings.Replace(s, `"per_task": [`+"\n      0.9,", `"per_task": [`+"\n      1.5,", 1)
		}, "meta_test.mean = 0.75, but the per_task values give 0.9"},
		{"mean accuracy above 1", func(s string) string { return strings.Replace(s, `"mean": 0.75,`, `"mean": 75,`, 1) },
			"meta_test.mean = 75, but the per_task values give 0.75"},
		// CVaR is a statistic of the per-task values, as worst is.
		{"cvar not of the per-task values", func(s string) string {
			return strings.Replace(s, `"meta_test": {`, `"meta_test": {"cvar": [{"alpha": 0.5, "value": 0.1}],`, 1)
		}, "meta_test.cvar[0]: CVaR_0.5 = 0.1 is not that of the per-task values"},
		{"negative mass", func(s string) string { return strings.Replace(s, `"masses": [`, `"masses": [-1, `, 1) },
			"meta_test.masses: 5 for 4 tasks"},
		{"mass NaN-like", func(s string) string {
			return strings.Replace(s, `"masses": [`+"\n      1,", `"masses": [`+"\n      -1,", 1)
		},
			"meta_test.masses[0] = -1: must be a finite number >= 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if err := resultstest.NewAccuracy("omni", "maml", "second", 1, 1, 1).Write(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "result.json")
			raw, _ := os.ReadFile(path)
			edited := c.edit(string(raw))
			if edited == string(raw) {
				t.Fatalf("edit changed nothing:\n%s", raw)
			}
			os.WriteFile(path, []byte(edited), 0o644)
			resultstest.Reseal(t, dir)
			if _, err := results.Load(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestGroupsOfMixedScoresRefused(t *testing.T) {
	t.Parallel()
	acc := resultstest.NewAccuracy("x", "maml", "second", 2, 5, 1)
	acc.Config = resultstest.New("x", "maml", "second", 2, 5, 1).Config
	dirs, _, _ := results.Discover([]string{writeRuns(t, resultstest.New("x", "maml", "second", 1, 5, 1), acc)})
	runs, err := results.LoadAll(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.GroupRuns(runs); err == nil || !strings.Contains(err.Error(), "measures MSE but") {
		t.Errorf("an MSE and an accuracy run grouped: error %v", err)
	}
}

func TestSplitByScoreAndSampling(t *testing.T) {
	t.Parallel()
	groups := loadGroups(t, writeRuns(t, resultstest.New("s", "maml", "second", 1, 5, 1),
		resultstest.NewAccuracy("o", "maml", "second", 1, 1, 1), resultstest.New("s2", "trmaml", "second", 1, 5, 1)))
	parts := results.SplitByScore(groups)
	if len(parts) != 2 {
		t.Fatalf("%d parts, want 2", len(parts))
	}
	for _, p := range parts {
		for _, g := range p {
			if g.Score != p[0].Score {
				t.Errorf("part of %s holds a %s group", p[0].Score.Name, g.Score.Name)
			}
		}
	}
	acc := parts[0]
	if acc[0].Score.Metric != metalearn.Accuracy {
		acc = parts[1]
	}
	// C(Z, 5) for Z = 26, 55, 24, 52, 40, normalised.
	c := []float64{65780, 3478761, 42504, 2598960, 658008}
	total := 0.0
	for _, v := range c {
		total += v
	}
	for i, p := range acc[0].TaskValues(results.MetaTrain).Sampling {
		if !near(p, c[i]/total, 1e-12) {
			t.Errorf("sampling probability of %s = %v, want %v", resultstest.TrainAlphabets[i], p, c[i]/total)
		}
	}
}

func TestAccuracyHistogram(t *testing.T) {
	t.Parallel()
	groups := accuracyRuns(t)
	// Meta-test accuracies 1 - level*(0.1..0.4); the lowest, 1 - 1.2*0.4 =
	// 0.52, and the highest, 0.92, put the range at [0.5, 0.95] in bins of
	// 0.09.
	h := results.TaskHistogram(groups, results.MetaTest, 5)
	want := []float64{0.5, 0.59, 0.68, 0.77, 0.86, 0.95}
	for i := range want {
		if !near(h.Edges[i], want[i], 1e-12) {
			t.Fatalf("edges %v, want %v", h.Edges, want)
		}
	}
	// MAML: level 1 gives 0.9, 0.8, 0.7, 0.6; level 1.2 gives 0.88, 0.76,
	// 0.64, 0.52: bins (counts over both seeds, halved) 0.5:1 0.59:2
	// 0.68:2 0.77:1 0.86:2.
	if got := h.Counts[0]; !slices.Equal(got, []float64{0.5, 1, 1, 0.5, 1}) {
		t.Errorf("MAML counts %v", got)
	}
	// Meta-training accuracies 1 - level*(0.05, 0.02, 0.3, 0.1, 0.15); the
	// lowest, MAML's 0.64, puts the range at [0.6, 1], in bins of 0.08.
	tr := results.TaskHistogram(groups, results.MetaTrain, 5)
	if !near(tr.Edges[0], 0.6, 1e-12) || !near(tr.Edges[1], 0.68, 1e-12) {
		t.Errorf("meta-training edges %v", tr.Edges)
	}
	if !slices.Equal(tr.Counts[0], []float64{0.5, 0.5, 0.5, 1.5, 2}) || !slices.Equal(tr.Counts[1], []float64{0, 0, 0.5, 1, 3.5}) {
		t.Errorf("meta-training counts %v", tr.Counts)
	}
	// A perfect score falls in the last, closed bin.
	if got := h.Counts[1]; got[4] == 0 || got[0] != 0 {
		t.Errorf("TR-MAML counts %v", got)
	}
}

func TestTableAccuracyDirection(t *testing.T) {
	t.Parallel()
	tab := mustTable(t, results.Table, accuracyRuns(t))
	md := tab.Markdown()
	for _, want := range []string{
		"Task accuracy (%) statistics",
		// TR-MAML has the higher mean and worst accuracy (bold) and the
		// smaller spread (bold); values in percent.
		"| 5-way 1-shot | TR-MAML | 2 | **85.00 ± ",
		"| 5-way 1-shot | MAML | 2 | 72.50 ± ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| 5-way 1-shot | MAML | 2 | **") {
		t.Errorf("MAML's lower accuracy is bold:\n%s", md)
	}
}

// TestScoreOfFamilies: a run that has not finished is shown in the metric
// run.Train records for its family: accuracy in percent where the tasks
// are classes, MSE where they are regression.
func TestScoreOfFamilies(t *testing.T) {
	for _, c := range []struct {
		config, label, unit string
		scale               float64
	}{
		{"sine_quick", "MSE", "", 1},
		{"linreg_skewed_maml", "MSE", "", 1},
		{"omniglot_quick", "accuracy", "%", 100},
		{"miniimagenet_5way_1shot_maml", "accuracy", "%", 100},
		{"fc100_5way_1shot_trmaml", "accuracy", "%", 100},
	} {
		cfg, err := configs.Builtin(c.config)
		if err != nil {
			t.Fatal(err)
		}
		s := results.ScoreOf(cfg)
		if s.Label != c.label || s.Unit != c.unit || s.Scale != c.scale {
			t.Errorf("%s: ScoreOf = %q %q x%g, want %q %q x%g", c.config, s.Label, s.Unit, s.Scale, c.label, c.unit, c.scale)
		}
	}
}
