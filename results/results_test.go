package results_test

import (
	"encoding/csv"
	"fmt"
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
	// A file given as a path is refused, not skipped: beside a folder of
	// runs it was left out without a word.
	file := filepath.Join(root, "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := results.Discover([]string{root, file}); err == nil || err.Error() != file+" is not a directory (give a run directory or a folder of runs)" {
		t.Errorf("Discover of a file: %v", err)
	}
	// A symbolic link to a run directory or a folder of runs is followed:
	// it was found to hold no runs.
	for _, target := range []string{deleted, root} {
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		found, _, err := results.Discover([]string{link})
		if want := map[string]int{deleted: 1, root: 3}[target]; err != nil || len(found) != want {
			t.Errorf("Discover(link to %s) = %v, %v; want %d runs", target, found, err, want)
		}
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

// TestDiscoverMissing: a path that does not exist is named as such, not
// as a bare lstat error.
func TestDiscoverMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-runs")
	_, _, err := results.Discover([]string{missing})
	if want := missing + " does not exist (give a run directory or a folder of runs)"; err == nil || err.Error() != want {
		t.Errorf("Discover: %v, want %q", err, want)
	}
}
