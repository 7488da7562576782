package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/treetest"
	"github.com/trmaml/trmaml/results/resultstest"
	"github.com/trmaml/trmaml/rundir"
)

// TestQuickRunEndToEnd runs the README's first command (the built-in quick
// sine experiment) and checks what it writes, including that TR-MAML's
// adversary moved weight onto the five hard tasks.
func TestQuickRunEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the 20,000-iteration quick experiment")
	}
	dir := filepath.Join(t.TempDir(), "quick")
	var out, errOut bytes.Buffer
	if err := dispatch([]string{"train", "-out", dir}, &out, &errOut); err != nil {
		t.Fatalf("train: %v\n%s", err, errOut.String())
	}
	for _, f := range rundir.StateFiles() {
		if f == rundir.ValidationFile || f == rundir.BestValModelFile {
			continue // the sinusoid family has no meta-validation tasks
		}
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var res rundir.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.MetaTest.PerTask) != 490 || len(res.FinalP) != 100 {
		t.Fatalf("%d meta-test tasks and %d task weights, want 490 and 100", len(res.MetaTest.PerTask), len(res.FinalP))
	}
	hard := 0.0
	for i, name := range res.MetaTrain.Tasks {
		if strings.HasPrefix(name, "amplitude [4.9") {
			hard += res.FinalP[i]
		}
	}
	if hard <= 0.05 {
		t.Errorf("weight on the 5 hard tasks is %.3f, not above the uniform 0.05", hard)
	}
	if !(res.MetaTest.Worst >= res.MetaTest.Mean && res.MetaTest.Std > 0) {
		t.Errorf("implausible statistics %+v", res.MetaTest)
	}
	if rows := strings.Count(mustRead(t, filepath.Join(dir, rundir.MetricsFile)), "\n"); rows != 1+11 {
		t.Errorf("metrics.csv has %d lines, want a header and 11 evaluations", rows)
	}
	if !strings.Contains(out.String(), "meta-test") {
		t.Errorf("no result table printed:\n%s", out.String())
	}

	out.Reset()
	if err := dispatch([]string{"eval", "-run", dir}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "meta-test") {
		t.Errorf("eval printed no table:\n%s", out.String())
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBadInputRefused: bad configs, flags and directories are refused
// with a message naming the file, line, field or flag, and leave every file
// and directory under the test's root as it was: no run or output
// directory, no lock file.
func TestBadInputRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cfg := filepath.Join(root, "bad.yaml")
	if err := os.WriteFile(cfg, []byte("name: bad\ninner:\n  alpha: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	few := filepath.Join(root, "few.yaml")
	if err := os.WriteFile(few, []byte("name: few\neval:\n  instances: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	fakeRun := filepath.Join(root, "run")
	for _, f := range []string{file, filepath.Join(fakeRun, rundir.ConfigFile)} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("name: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	quick := filepath.Join("..", "configs", "experiments", "quick.yaml")
	// A grid of two finished runs, to report, plot and export.
	grid := filepath.Join(root, "synthetic")
	writeSynthetic(t, grid,
		resultstest.New("sine_k5_maml", "maml", "second", 1, 5, 1),
		resultstest.New("sine_k5_trmaml", "trmaml", "second", 1, 5, 0.8))
	gridRun := filepath.Join(grid, "sine_k5_maml-seed1")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"train", "-config", cfg, "-out", filepath.Join(root, "out")}, []string{"bad.yaml:3", "inner.alpha", "> 0"}},
		{[]string{"train", "-config", filepath.Join(root, "missing.yaml"), "-out", filepath.Join(root, "out")}, []string{"missing.yaml"}},
		{[]string{"train", "-config", few, "-out", filepath.Join(root, "out")}, []string{"few.yaml", "eval.instances", ">= 490"}},
		{[]string{"eval", "-run", filepath.Join(root, "nothing")}, []string{"nothing"}},
		{[]string{"eval"}, []string{"-run DIR"}},
		{[]string{"fly"}, []string{"unknown command"}},
		{[]string{"resume", "-run", empty}, []string{empty, "not a run directory"}},
		{[]string{"eval", "-run", empty}, []string{empty, "not a run directory"}},
		{[]string{"seal", "-run", empty}, []string{empty, "not a run directory"}},
		// -report of a grid no cell of which has started read ./runs.
		{[]string{"experiment", "-config", quick, "-out", filepath.Join(root, "grid"), "-report"}, []string{filepath.Join(root, "grid"), "no run of this experiment"}},
		{[]string{"experiment", "-config", quick, "-out", empty, "-report"}, []string{empty, "no run of this experiment"}},
		// -list listed the cells of a grid in a file or in a run directory.
		{[]string{"experiment", "-config", quick, "-out", file, "-list"}, []string{file, "not a directory"}},
		{[]string{"experiment", "-config", quick, "-out", fakeRun, "-list"}, []string{fakeRun, "it is a run directory"}},
		{[]string{"experiment", "-config", quick, "-out", file, "-report"}, []string{file, "not a directory"}},
		// Flags the chosen mode ignores: -list printed the cells whatever
		// -jobs, -format or -width said; -slurm's report job wrote PNGs
		// under -format pdf.
		{[]string{"experiment", "-config", quick, "-out", filepath.Join(root, "grid"), "-list", "-jobs", "4"}, []string{"-jobs", "-list"}},
		{[]string{"experiment", "-config", quick, "-out", filepath.Join(root, "grid"), "-list", "-format", "pdf"}, []string{"-format", "-list"}},
		{[]string{"experiment", "-config", quick, "-out", filepath.Join(root, "grid"), "-cell", "0", "-width", "single"}, []string{"-width", "-cell"}},
		{[]string{"experiment", "-config", quick, "-out", filepath.Join(root, "grid"), "-report", "-jobs", "2"}, []string{"-jobs", "-report"}},
		{[]string{"experiment", "-config", quick, "-out", filepath.Join(root, "grid"), "-slurm", "-dry-run", "-format", "pdf"}, []string{"-format", "-slurm"}},
		// theory had no upper bounds: these panicked (makeslice) or ran
		// for ever, after creating -out and its lock.
		{[]string{"theory", "-out", filepath.Join(root, "th"), "-tmin", "10", "-tmax", "100", "-seeds", "2", "-batch", "1000000000000000"}, []string{"-batch 1000000000000000", "[1, 10000]"}},
		{[]string{"theory", "-out", filepath.Join(root, "th"), "-tmin", "10", "-tmax", "100", "-seeds", "100000000000000"}, []string{"-seeds 100000000000000", "[2, 1000]"}},
		{[]string{"theory", "-out", filepath.Join(root, "th"), "-tmin", "10", "-tmax", "100", "-per-decade", "100000000000000"}, []string{"-per-decade 100000000000000", "[1, 100]"}},
		{[]string{"theory", "-out", filepath.Join(root, "th"), "-tmin", "10", "-tmax", "1000000000000"}, []string{"-tmax 1000000000000", "[1, 100000000]"}},
		// Flags after the directories were taken as directories:
		// "-addr does not exist", "give one run or experiment directory".
		{[]string{"serve", fakeRun, "-addr", "nohost"}, []string{`-addr "nohost"`, "HOST:PORT"}},
		{[]string{"status", fakeRun, "-config", ""}, []string{"-config is empty"}},
		// An empty -out or -config was taken as the flag's default.
		{[]string{"train", "-out", "", "-set", "meta.iterations=1"}, []string{"-out", "empty"}},
		{[]string{"train", "-config", "", "-set", "meta.iterations=1", "-out", filepath.Join(root, "cfg")}, []string{"-config", "empty"}},
		{[]string{"export", "-run", fakeRun, "-format", "tensorboard", "-out", ""}, []string{"-out", "empty"}},
		{[]string{"status", "-config", "", fakeRun}, []string{"-config", "empty"}},
		// An -out that is a run directory got the tables, figures or
		// exports among the run's files, unlisted by its manifest.
		{[]string{"report", "-out", gridRun, grid}, []string{"report: -out " + gridRun, "is a run directory", "config.yaml", "manifest"}},
		{[]string{"plot", "-out", gridRun, grid}, []string{"plot: -out " + gridRun, "is a run directory"}},
		{[]string{"tradeoff", "-out", gridRun, grid}, []string{"tradeoff: -out " + gridRun, "is a run directory"}},
		{[]string{"report", "-out", fakeRun, grid}, []string{"report: -out " + fakeRun, "is a run directory"}},
		{[]string{"theory", "-out", fakeRun, "-tmin", "10", "-tmax", "100"}, []string{"theory: -out " + fakeRun, "is a run directory"}},
		{[]string{"export", "-run", gridRun, "-format", "tensorboard", "-out", gridRun}, []string{"export: -out " + gridRun, "is a run directory"}},
		{[]string{"export", "-run", gridRun, "-format", "tensorboard", "-out", fakeRun}, []string{"export: -out " + fakeRun, "is a run directory"}},
		{[]string{"export", "-run", gridRun, "-format", "safetensors", "-out", fakeRun}, []string{"export: -out " + fakeRun, "is a run directory"}},
		// An error of building the inner loop's graph named no loop.
		{[]string{"train", "-config", "sine_k5_maml", "-set", "inner.kind=anil", "-set", "inner.anil.head=9", "-out", filepath.Join(root, "anil")},
			[]string{`graph: inner loop "anil" (innerloops.ANIL): inner.anil.head = 9: must be in [1, 6]`}},
		// -seed and -set seed= both given: -seed won silently.
		{[]string{"train", "-seed", "2", "-set", "seed=3", "-set", "meta.iterations=1", "-out", filepath.Join(root, "seeds")}, []string{"-seed 2", "-set seed=3", "give the seed once"}},
	}
	for _, c := range cases {
		before := treetest.Of(t, root)
		var out, errOut bytes.Buffer
		err := dispatch(c.args, &out, &errOut)
		if err == nil {
			t.Errorf("%v: accepted", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not mention %q", c.args, err, w)
			}
		}
		if diff := before.Diff(treetest.Of(t, root)); diff != "" {
			t.Errorf("%v: refused, but changed the files:\n%s", c.args, diff)
		}
	}
}

// TestExperimentWritesTableAndFigures runs a tiny grid (2 algorithms x 2
// orders x 2 seeds) through the CLI and checks the experiment directory gets
// every run, the table and the figures; a second invocation only resumes.
func TestExperimentWritesTableAndFigures(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	base := "name: tiny\nmodel: {kind: mlp, mlp: {hidden: [8]}}\nmeta: {iterations: 20, batch: 10}\n" +
		"eval: {every: 10, instances: 490, train_instances: 100, batch: 245, query: 5}\n"
	exp := "name: tiny\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [second, first]\nseeds: [1, 2]\n"
	for name, body := range map[string]string{"base.yaml": base, "exp.yaml": exp} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(tmp, "out")
	for i := 0; i < 2; i++ {
		var stdout, stderr bytes.Buffer
		if err := dispatch([]string{"experiment", "-config", filepath.Join(tmp, "exp.yaml"), "-out", out, "-jobs", "2"}, &stdout, &stderr); err != nil {
			t.Fatalf("experiment: %v\n%s", err, stderr.String())
		}
	}
	for _, f := range []string{"table.md", "table.csv", "figure1.png", "p_weights.png", "orders.png", "trmaml-first-seed2/result.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	table := mustRead(t, filepath.Join(out, "table.md"))
	for _, w := range []string{"MAML", "TR-MAML", "first", "second"} {
		if !strings.Contains(table, w) {
			t.Errorf("table.md lacks %q:\n%s", w, table)
		}
	}
}

// TestHelpExitsZero: -h of every command, like trmaml -h, is not an error.
func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-h"}, {"help"}, {"train", "-h"}, {"resume", "-h"}, {"eval", "-help"}, {"experiment", "-h"}, {"report", "-h"}, {"plot", "-h"}, {"compare", "-h"}, {"data", "-h"}, {"data", "omniglot", "-h"}} {
		var out, errOut bytes.Buffer
		if code := exitCode(dispatch(args, &out, &errOut)); code != 0 {
			t.Errorf("trmaml %v exits %d, want 0", args, code)
		}
		if out.Len()+errOut.Len() == 0 {
			t.Errorf("trmaml %v printed no help", args)
		}
	}
	if code := exitCode(dispatch([]string{"train", "-bogus"}, io.Discard, io.Discard)); code != 2 {
		t.Errorf("an unknown flag exits %d, want 2", code)
	}
}

// TestExportIntoOwnRun: safetensors' default -out is the exported run's
// own directory, and naming it (in any spelling) stays allowed; another
// format's -out, or another run's directory, is refused (TestBadInputRefused).
func TestExportIntoOwnRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	var out, errOut bytes.Buffer
	if err := dispatch([]string{"train", "-config", "sine_k5_maml", "-out", dir, "-set", "meta.iterations=2", "-set", "eval.every=1",
		"-set", "eval.instances=490", "-set", "eval.train_instances=100", "-set", "eval.query=10"}, &out, &errOut); err != nil {
		t.Fatalf("train: %v\n%s", err, errOut.String())
	}
	for _, o := range []string{dir, dir + string(filepath.Separator) + "."} {
		if err := dispatch([]string{"export", "-run", dir, "-format", "safetensors", "-out", o}, &out, &errOut); err != nil {
			t.Errorf("export -out %s, the run's own directory: %v", o, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Error(err)
	}
	if err := dispatch([]string{"export", "-run", dir, "-format", "tensorboard", "-out", dir}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "is a run directory") {
		t.Errorf("tensorboard -out the run's directory: %v, want refused", err)
	}
}
