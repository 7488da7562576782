package results_test

import (
	"encoding/csv"
	"fmt"
	"github.com/trmaml/trmaml/metalearn"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
	"github.com/trmaml/trmaml/rundir"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestTCritical95(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		want float64
	}{{0, 0}, {1, 0}, {2, 12.7062}, {3, 4.3027}, {5, 2.7764}, {30, 2.0452}} {
		if got := results.TCritical95(c.n); !near(got, c.want, 1e-4) {
			t.Errorf("TCritical95(%d) = %.5f, want %.4f", c.n, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		xs         []float64
		mean, half float64
		n          int
	}{
		// s = 1, half = 4.3027 / sqrt(3).
		{[]float64{1, 2, 3}, 2, 4.3027 / math.Sqrt(3), 3},
		// NaN left out; s = sqrt(2), half = 12.7062 * sqrt(2) / sqrt(2).
		{[]float64{1, math.NaN(), 3}, 2, 12.7062, 2},
		// s = sqrt((9 + 1 + 1 + 1) / 3) = 2; t(3 dof) = 3.1824, half = 3.1824 * 2 / sqrt(4).
		{[]float64{0, 4, 4, 4}, 3, 3.1824, 4},
		{[]float64{7}, 7, 0, 1},
	} {
		e := results.Summarize(c.xs)
		if !near(e.Mean, c.mean, 1e-12) || !near(e.Half, c.half, 1e-3) || e.N != c.n {
			t.Errorf("Summarize(%v) = %+v, want mean %g half %.4f n %d", c.xs, e, c.mean, c.half, c.n)
		}
	}
	if e := results.Summarize([]float64{math.NaN()}); !math.IsNaN(e.Mean) || e.N != 0 {
		t.Errorf("Summarize(NaN) = %+v, want NaN mean over 0 values", e)
	}
}

// writeRuns writes synthetic runs into a new directory and returns it.
func writeRuns(t *testing.T, specs ...resultstest.Spec) string {
	t.Helper()
	root := t.TempDir()
	for _, s := range specs {
		if err := s.Write(filepath.Join(root, fmt.Sprintf("%s-seed%d", s.Config.Name, s.Config.Seed))); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func loadGroups(t *testing.T, root string) []*results.Group {
	t.Helper()
	dirs, unfinished, err := results.Discover([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(unfinished) > 0 {
		t.Fatalf("unfinished runs %v", unfinished)
	}
	groups, err := results.LoadGroups(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return groups
}

func TestLoad(t *testing.T) {
	t.Parallel()
	s := resultstest.New("sine", "trmaml", "second", 4, 5, 1)
	dir := filepath.Join(t.TempDir(), "run")
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Name != "sine" || r.Config.Seed != 4 || r.Config.Task.Support != 5 {
		t.Errorf("config %+v", r.Config)
	}
	if !slices.Equal(r.Iterations, []int{0, 100, 200}) {
		t.Errorf("iterations %v", r.Iterations)
	}
	if bm := r.Column(results.BatchMean); !math.IsNaN(bm[0]) || bm[1] != 4 {
		t.Errorf("batch_mean %v, want NaN then 4", bm)
	}
	if got := r.Column(results.TestMean); !slices.Equal(got, []float64{7, 14, 21}) {
		t.Errorf("test_mean %v", got)
	}
	if !slices.Equal(r.P.Tasks, resultstest.TrainTasks) || !slices.Equal(r.P.Weights[2], []float64{0.1, 0.1, 0.4, 0.4}) {
		t.Errorf("p %+v", r.P)
	}
	if r.Result.MetaTest.Worst != 5 || !slices.Equal(r.FinalP(), []float64{0.1, 0.1, 0.4, 0.4}) {
		t.Errorf("result %+v", r.Result)
	}
	if results.TestStd.String() != "test_std" {
		t.Errorf("TestStd.String() = %q", results.TestStd.String())
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, file string
		edit       func(string) string
		want       []string // substrings of the error
	}{
		{"bad number", "metrics.csv", func(s string) string { return strings.Replace(s, "100,10,", "100,ten,", 1) },
			[]string{"metrics.csv:3:", "elapsed_seconds", `"ten"`}},
		{"empty test value", "metrics.csv", func(s string) string { return strings.Replace(s, ",14,", ",,", 1) },
			[]string{"metrics.csv:3:", "column test_mean is empty"}},
		{"header", "metrics.csv", func(s string) string { return strings.Replace(s, "test_std", "test_sd", 1) },
			[]string{"metrics.csv:1:", "header"}},
		{"short row", "metrics.csv", func(s string) string { return strings.Replace(s, ",27\n", "\n", 1) },
			[]string{"metrics.csv", "line 4", "wrong number of fields"}},
		{"iteration order", "metrics.csv", func(s string) string { return strings.Replace(s, "\n200,", "\n50,", 1) },
			[]string{"metrics.csv:4:", "iteration 50 does not follow 100"}},
		{"no rows", "metrics.csv", func(s string) string { return s[:strings.Index(s, "\n")+1] },
			[]string{"metrics.csv", "no evaluation rows"}},
		{"p iterations", "p.csv", func(s string) string { return strings.Replace(s, "\n200,", "\n300,", 1) },
			[]string{"p.csv", "differ from those of metrics.csv"}},
		{"p number", "p.csv", func(s string) string { return strings.Replace(s, "200,0.25,0.25,0.25,0.25", "200,0.25,0.25,0.25,x", 1) },
			[]string{"p.csv:4:", `"amplitude [4.96,4.97)"`}},
		{"json syntax", "result.json", func(s string) string { return strings.Replace(s, `"worst":`, `"worst"`, 1) },
			[]string{"result.json:", "invalid character"}},
		{"json type", "result.json", func(s string) string { return strings.Replace(s, `"seed": 1`, `"seed": "one"`, 1) },
			[]string{"result.json:5:", "seed"}},
		{"per task", "result.json", func(s string) string { return strings.Replace(s, `"per_task": [`, `"per_task": [9,`, 1) },
			[]string{"result.json", "meta_test has 6 per_task values for 5 tasks"}},
		{"config", "config.yaml", func(s string) string { return strings.Replace(s, "algorithm: maml", "algorithm: reptile", 1) },
			[]string{"config.yaml:", "algorithm"}},
		// result.json copied from another run, or with impossible values.
		{"other seed", "result.json", func(s string) string { return strings.Replace(s, `"seed": 1`, `"seed": 2`, 1) },
			[]string{"result.json: seed: 2, but config.yaml says 1"}},
		{"other algorithm", "result.json", func(s string) string { return strings.Replace(s, `"algorithm": "maml"`, `"algorithm": "trmaml"`, 1) },
			[]string{"result.json: algorithm: trmaml, but config.yaml says maml"}},
		{"other order", "result.json", func(s string) string { return strings.Replace(s, `"order": "second"`, `"order": "first"`, 1) },
			[]string{"result.json: order: first, but config.yaml says second"}},
		{"other iterations", "result.json", func(s string) string { return strings.Replace(s, `"iterations": 200`, `"iterations": 70000`, 1) },
			[]string{"result.json: iterations: 70000, but config.yaml says 200"}},
		{"negative mean", "result.json", func(s string) string { return strings.Replace(s, `"mean": 3,`, `"mean": -3,`, 1) },
			[]string{"result.json: meta_test.mean = -3: must be a finite number >= 0"}},
		{"negative per task", "result.json", func(s string) string {
			return strings.Replace(s, `"per_task": [`+"\n      1,", `"per_task": [`+"\n      -1,", 1)
		},
			[]string{"result.json: meta_test.per_task[0] = -1: must be a finite number >= 0"}},
		{"NaN in p", "p.csv", func(s string) string {
			return strings.Replace(s, "200,0.25,0.25,0.25,0.25", "200,NaN,0.25,0.25,0.25", 1)
		},
			[]string{"p.csv:4:", "weight 1 = NaN: must be a finite number >= 0"}},
		{"p off the simplex", "p.csv", func(s string) string {
			return strings.Replace(s, "200,0.25,0.25,0.25,0.25", "200,0.5,0.25,0.25,0.25", 1)
		},
			[]string{"p.csv:4:", "weights sum to 1.25, want 1"}},
		{"negative metric", "metrics.csv", func(s string) string { return strings.Replace(s, "100,10,", "100,-10,", 1) },
			[]string{"metrics.csv:3:", "elapsed_seconds: -10: must be a finite number >= 0"}},
		{"metrics of a shorter run", "config.yaml", func(s string) string { return strings.Replace(s, "iterations: 200", "iterations: 300", 1) },
			[]string{"result.json: iterations: 200, but config.yaml says 300"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if err := resultstest.New("sine", "maml", "second", 1, 5, 1).Write(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c.file)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := c.edit(string(raw))
			if edited == string(raw) {
				t.Fatalf("edit changed nothing in %s:\n%s", c.file, raw)
			}
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			// Sealed as edited, as a writer with a bug would: these are the
			// checks beyond the manifest (TestLoadRefusesUnsealedEdits has
			// the manifest's own).
			resultstest.Reseal(t, dir)
			_, err = results.Load(dir)
			if err == nil {
				t.Fatal("loaded a corrupt run")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := results.Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("empty directory: error %v, want one naming config.yaml", err)
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	root := writeRuns(t, resultstest.New("a", "maml", "second", 1, 5, 1), resultstest.New("b", "maml", "second", 1, 5, 1))
	unfinished := filepath.Join(root, "nested", "c-seed1")
	if err := resultstest.New("c", "maml", "second", 1, 5, 1).Write(unfinished); err != nil {
		t.Fatal(err)
	}
	// Unfinished: no result.json, none sealed (a manifest of a save
	// before the end); one without metrics.csv is still a run.
	os.Remove(filepath.Join(unfinished, "result.json"))
	os.Remove(filepath.Join(unfinished, rundir.ManifestFile))
	if err := rundir.Seal(unfinished, false); err != nil {
		t.Fatal(err)
	}
	noMetrics := filepath.Join(root, "nested", "d-seed1")
	if err := resultstest.New("d", "maml", "second", 1, 5, 1).Write(noMetrics); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(noMetrics, "result.json"))
	os.Remove(filepath.Join(noMetrics, rundir.ManifestFile))
	if err := rundir.Seal(noMetrics, false); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(noMetrics, rundir.MetricsFile))
	// A finished run whose result.json was deleted is still finished,
	// and loading it names the missing file.
	deleted := filepath.Join(root, "e-seed1")
	if err := resultstest.New("e", "maml", "second", 1, 5, 1).Write(deleted); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(deleted, "result.json"))
	dirs, skipped, err := results.Discover([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 3 || !slices.Contains(dirs, deleted) || !slices.Equal(skipped, []string{unfinished, noMetrics}) {
		t.Errorf("Discover: runs %v, unfinished %v", dirs, skipped)
	}
	if _, err := results.Load(deleted); err == nil || !strings.Contains(err.Error(), "result.json: missing") {
		t.Errorf("Load of a finished run without its result.json: %v", err)
	}
	// A run directory given directly is itself the run.
	if dirs, _, _ := results.Discover(dirs[:1]); len(dirs) != 1 {
		t.Errorf("Discover(run dir) = %v", dirs)
	}
}

func TestGroups(t *testing.T) {
	t.Parallel()
	root := writeRuns(t,
		resultstest.New("sine_k5_trmaml", "trmaml", "second", 1, 5, 1),
		resultstest.New("sine_k5_trmaml", "trmaml", "second", 2, 5, 2),
		resultstest.New("sine_k5_trmaml", "trmaml", "second", 3, 5, 3),
		resultstest.New("sine_k5_maml", "maml", "second", 1, 5, 1),
		resultstest.New("sine_k5_maml-seed2", "maml", "second", 2, 5, 3), // name suffix stripped
		resultstest.New("sine_k5_maml_fo", "maml", "first", 1, 5, 1),
		resultstest.New("sine_k10_maml", "maml", "second", 1, 10, 1),
	)
	groups := loadGroups(t, root)
	var keys []string
	for _, g := range groups {
		keys = append(keys, g.Key.String())
	}
	want := []string{
		"sine_k5_maml (maml, second order, K=5)", "sine_k5_trmaml (trmaml, second order, K=5)",
		"sine_k5_maml_fo (maml, first order, K=5)", "sine_k10_maml (maml, second order, K=10)",
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("groups %q, want %q", keys, want)
	}
	if got := results.Labels(groups); !slices.Equal(got, []string{
		"MAML, second order, K=5", "TR-MAML, second order, K=5", "MAML, first order, K=5", "MAML, second order, K=10",
	}) {
		t.Errorf("labels %q", got)
	}
	if got := results.Labels(groups[:2]); !slices.Equal(got, []string{"MAML", "TR-MAML"}) {
		t.Errorf("labels %q", got)
	}

	maml, tr := groups[0], groups[1]
	if maml.Seeds() != 2 || tr.Seeds() != 3 || tr.Runs[0].Config.Seed != 1 || tr.Runs[2].Config.Seed != 3 {
		t.Fatalf("seeds: maml %d, trmaml %d", maml.Seeds(), tr.Seeds())
	}

	// Levels 1, 2, 3: every statistic is level * c, so its mean is 2c and its
	// half-width 4.3027 * c / sqrt(3) (sample std 1 of 1, 2, 3, times c).
	h3 := 4.3027 / math.Sqrt(3)
	for _, c := range []struct {
		f     results.Final
		scale float64
	}{
		{results.MetaTestMean, 3}, {results.MetaTestWorst, 5}, {results.MetaTestStd, math.Sqrt(2)},
		{results.MetaTestWeightedMean, 3}, {results.MetaTrainMean, 1.5}, {results.MetaTrainWorst, 3},
		{results.MetaTrainStd, math.Sqrt(1.125)}, {results.MetaTrainWeightedMean, 1.25}, {results.MsPerIteration, 1},
	} {
		e := tr.Final(c.f)
		if !near(e.Mean, 2*c.scale, 1e-12) || !near(e.Half, h3*c.scale, 1e-3) || e.N != 3 {
			t.Errorf("Final(%d) = %+v, want %g ± %.4f", c.f, e, 2*c.scale, h3*c.scale)
		}
	}

	// test_mean column (index 7 of the metrics, so 7*(r+1)*level).
	c := tr.Curve(results.TestMean)
	if !slices.Equal(c.Iterations, []float64{0, 100, 200}) {
		t.Fatalf("iterations %v", c.Iterations)
	}
	for r, p := range c.Points {
		scale := 7 * float64(r+1)
		if !near(p.Mean, 2*scale, 1e-12) || !near(p.Half, h3*scale, 1e-3) || p.N != 3 {
			t.Errorf("test_mean at %g: %+v, want %g ± %.4f", c.Iterations[r], p, 2*scale, h3*scale)
		}
		if want := 10 * float64(r) * 2; !near(c.Seconds[r], want, 1e-12) {
			t.Errorf("seconds at %g: %g, want %g", c.Iterations[r], c.Seconds[r], want)
		}
	}
	if b := tr.Curve(results.BatchMean); !slices.Equal(b.Iterations, []float64{100, 200}) {
		t.Errorf("batch_mean iterations %v, want the iteration-0 row left out", b.Iterations)
	}

	// p: TR-MAML ends at (0.1, 0.1, 0.4, 0.4) in every seed; MAML uniform.
	hard := results.TasksWithAmplitudeAtLeast(resultstest.TrainTasks, results.HardAmplitude)
	if !slices.Equal(hard, resultstest.TrainTasks[2:]) {
		t.Fatalf("hard tasks %q", hard)
	}
	pm := tr.PMass(hard)
	for r, want := range []float64{0.5, 0.65, 0.8} {
		if p := pm.Points[r]; !near(p.Mean, want, 1e-12) || !near(p.Half, 0, 1e-9) || p.N != 3 {
			t.Errorf("hard mass at %g: %+v, want %g ± 0", pm.Iterations[r], p, want)
		}
	}
	if p := maml.PMass(hard).Points[2]; !near(p.Mean, 0.5, 1e-12) {
		t.Errorf("MAML hard mass %+v, want uniform 0.5", p)
	}
	tasks, fp := tr.FinalP()
	if !slices.Equal(tasks, resultstest.TrainTasks) || !near(fp[3].Mean, 0.4, 1e-12) || fp[3].N != 3 {
		t.Errorf("final p %q %+v", tasks, fp)
	}
}

func TestGroupErrors(t *testing.T) {
	t.Parallel()
	root := writeRuns(t, resultstest.New("a", "maml", "second", 1, 5, 1))
	other := filepath.Join(t.TempDir(), "a-again")
	if err := resultstest.New("a", "maml", "second", 1, 5, 2).Write(other); err != nil {
		t.Fatal(err)
	}
	dirs, _, _ := results.Discover([]string{root, other})
	runs, err := results.LoadAll(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.GroupRuns(runs); err == nil || !strings.Contains(err.Error(), "both have seed 1") {
		t.Errorf("duplicate seed: error %v", err)
	}

	// Same name, algorithm, order and K but another inner step size:
	// not one group.
	changed := resultstest.New("a", "maml", "second", 2, 5, 1)
	changed.Config.Inner.Alpha *= 2
	dirs, _, _ = results.Discover([]string{writeRuns(t, resultstest.New("a", "maml", "second", 1, 5, 1), changed)})
	if runs, err = results.LoadAll(dirs); err != nil {
		t.Fatal(err)
	}
	if _, err := results.GroupRuns(runs); err == nil || !strings.Contains(err.Error(), "more than their seed") {
		t.Errorf("runs differing in inner.alpha grouped: error %v", err)
	}
	// A setting MAML does not read (TR-MAML's eta_p) does not split
	// MAML runs, even in config files that state it.
	unread := resultstest.New("a", "maml", "second", 2, 5, 1)
	unread.Config.Settings("trmaml").(*metalearn.TRMAML).PLR *= 2
	dirs, _, _ = results.Discover([]string{writeRuns(t, resultstest.New("a", "maml", "second", 1, 5, 1), unread)})
	if runs, err = results.LoadAll(dirs); err != nil {
		t.Fatal(err)
	}
	if groups, err := results.GroupRuns(runs); err != nil || len(groups) != 1 {
		t.Errorf("MAML runs differing in trmaml.p_lr: %d groups, %v", len(groups), err)
	}
}

func TestHistogram(t *testing.T) {
	t.Parallel()
	// Per-task losses level*(1..5): level 1 and level 2 (max 10), 5 bins of
	// width 2: level 1 puts 1 | 2,3 | 4,5 in bins 0, 1, 2; level 2 puts
	// 2,4,6,8,10 in bins 1, 2, 3, 4, 4 (the maximum in the last bin).
	root := writeRuns(t, resultstest.New("a", "maml", "second", 1, 5, 1), resultstest.New("b", "trmaml", "second", 1, 5, 2),
		resultstest.New("b", "trmaml", "second", 2, 5, 2))
	groups := loadGroups(t, root)
	h := results.TaskHistogram(groups, results.MetaTest, 5)
	if !slices.Equal(h.Edges, []float64{0, 2, 4, 6, 8, 10}) {
		t.Errorf("edges %v", h.Edges)
	}
	if !slices.Equal(h.Counts[0], []float64{1, 2, 2, 0, 0}) || !slices.Equal(h.Counts[1], []float64{0, 1, 1, 1, 2}) {
		t.Errorf("counts %v", h.Counts)
	}
}

func TestAmplitude(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		lo   float64
		ok   bool
	}{{"amplitude [4.95,4.96)", 4.95, true}, {"amplitude [0.1,0.2)", 0.1, true}, {"omniglot/Latin", 0, false}, {"amplitude [x,1)", 0, false}} {
		if lo, ok := results.AmplitudeLow(c.name); lo != c.lo || ok != c.ok {
			t.Errorf("AmplitudeLow(%q) = %g, %v", c.name, lo, ok)
		}
	}
	if a, ok := results.TaskAxisOf([]string{"amplitude [0.1,0.2)", "alphabet"}); ok {
		t.Errorf("TaskAxisOf of mixed names = %+v", a)
	}
	if a, ok := results.TaskAxisOf(resultstest.TrainTasks); !ok || !slices.Equal(a.Positions, []float64{0.1, 0.11, 4.95, 4.96}) ||
		a.Name != "amplitude" || a.Hard != "amplitude ≥ 4.95" {
		t.Errorf("TaskAxisOf = %+v, %v", a, ok)
	}
	if hard := results.HardTasks(resultstest.TrainTasks); !slices.Equal(hard, resultstest.TrainTasks[2:]) {
		t.Errorf("HardTasks = %q", hard)
	}
}

func TestTable(t *testing.T) {
	t.Parallel()
	root := writeRuns(t,
		resultstest.New("m", "maml", "second", 1, 5, 1),
		resultstest.New("m", "maml", "second", 2, 5, 2),
		resultstest.New("m", "maml", "second", 3, 5, 3),
		resultstest.New("tr", "trmaml", "second", 1, 5, 0.04),
		resultstest.New("m10", "maml", "second", 1, 10, 1),
	)
	tab := mustTable(t, results.Table, loadGroups(t, root))
	md := tab.Markdown()
	for _, want := range []string{
		"| Setting | Algorithm | Seeds | Mean | Worst | Std. Dev. | Meta-train weighted mean |",
		// MAML: 3c ± 4.3027*3/sqrt(3) = 6.00 ± 7.45; worst 10.00 ± 12.42.
		"| 5-shot | MAML | 3 | 6.00 ± 7.45 | 10.00 ± 12.42 |",
		// TR-MAML, one seed, level 0.04: 0.12, 0.2, 0.0566, 0.05; lowest, so bold.
		"| 5-shot | TR-MAML | 1 | **0.12** | **0.20** | **0.057** | **0.050** |",
		"| 10-shot | MAML | 1 | 3.00 | 5.00 | 1.41 | 1.25 |", // alone in its setting: no bold
		"the 5 meta-test tasks",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if tab.ShowOrder || tab.ShowName {
		t.Errorf("order or name columns shown for one order and distinct settings")
	}
	recs, err := csv.NewReader(strings.NewReader(tab.CSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[0][5] != "test_mean" || recs[1][1] != "maml" || recs[1][5] != "6" || !strings.HasPrefix(recs[1][6], "7.45") {
		t.Errorf("CSV %q", recs)
	}
}

func TestSameSettingTwoNames(t *testing.T) {
	t.Parallel()
	groups := loadGroups(t, writeRuns(t, resultstest.New("a", "maml", "second", 1, 5, 1), resultstest.New("b", "maml", "second", 1, 5, 2),
		resultstest.New("c", "trmaml", "second", 1, 5, 2)))
	if got := results.Labels(groups); !slices.Equal(got, []string{"MAML (a)", "MAML (b)", "TR-MAML"}) {
		t.Errorf("labels %q", got)
	}
	tab := mustTable(t, results.Table, groups)
	if !tab.ShowName || tab.ShowOrder || !strings.Contains(tab.Markdown(), "| 5-shot | MAML | b | 1 |") {
		t.Errorf("table of two MAML configs:\n%s", tab.Markdown())
	}
}
