package cli

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/trmaml/trmaml/internal/dirlock"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results/resultstest"
	"github.com/trmaml/trmaml/rundir"
)

// writeSynthetic writes synthetic run directories NAME-seedN under root.
func writeSynthetic(t *testing.T, root string, specs ...resultstest.Spec) {
	t.Helper()
	for _, s := range specs {
		if err := s.Write(filepath.Join(root, fmt.Sprintf("%s-seed%d", s.Config.Name, s.Config.Seed))); err != nil {
			t.Fatal(err)
		}
	}
}

// paperLikeRuns writes MAML and TR-MAML, second order, three seeds each,
// and one first-order MAML run.
func paperLikeRuns(t *testing.T) string {
	root := t.TempDir()
	for seed, level := range []float64{1, 1.2, 1.4} {
		writeSynthetic(t, root,
			resultstest.New("sine_k5_maml", "maml", "second", uint64(seed+1), 5, level),
			resultstest.New("sine_k5_trmaml", "trmaml", "second", uint64(seed+1), 5, level*0.8))
	}
	writeSynthetic(t, root, resultstest.New("sine_k5_maml_fo", "maml", "first", 1, 5, 0.5))
	return root
}

func TestParseRunArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		dirs []string
		out  string
	}{
		{[]string{"-runs", "A", "B", "-out", "X"}, []string{"A", "B"}, "X"},
		{[]string{"-out", "X", "A", "-runs", "B", "C"}, []string{"B", "A", "C"}, "X"},
		{[]string{"A", "--", "-out"}, []string{"A", "-out"}, ""},
		{nil, nil, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var runs dirList
		fs.Var(&runs, "runs", "")
		out := fs.String("out", "", "")
		dirs, err := parseRunArgs(fs, &runs, c.args)
		if err != nil || !slices.Equal(dirs, c.dirs) || *out != c.out {
			t.Errorf("parseRunArgs(%q) = %q, -out %q, %v; want %q, %q", c.args, dirs, *out, err, c.dirs, c.out)
		}
	}
}

func TestReportCmd(t *testing.T) {
	t.Parallel()
	root := paperLikeRuns(t)
	unfinished := filepath.Join(root, "crashed-seed1")
	writeSynthetic(t, root, resultstest.New("crashed", "maml", "second", 1, 5, 1))
	// Killed before its end: no result.json, none sealed. (A sealed
	// result.json that is missing is damage, refused by report.)
	os.Remove(filepath.Join(unfinished, rundir.ResultFile))
	os.Remove(filepath.Join(unfinished, rundir.ManifestFile))
	if err := rundir.Seal(unfinished, false); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "report")
	var stdout, stderr bytes.Buffer
	if err := reportCmd([]string{"-runs", root, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "skipping "+unfinished) {
		t.Errorf("unfinished run not reported: %q", stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| Setting | Algorithm | Order | Seeds |",
		"| 5-shot | MAML | second | 3 | 3.60 ± 1.49 |", // 3 * (1, 1.2, 1.4): sample std 3 * 0.2, half 4.3027 * 0.6 / sqrt(3)
		"| 5-shot | TR-MAML | second | 3 |",
		"| 5-shot | MAML | first | 1 | **1.50** |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("table.md lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(stdout.String(), string(md)) {
		t.Errorf("table not printed:\n%s", stdout.String())
	}
	csvData, err := os.ReadFile(filepath.Join(out, "table.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(csvData), "\n"); lines != 4 {
		t.Errorf("table.csv has %d lines, want a header and 3 rows:\n%s", lines, csvData)
	}
	var files []string
	entries := outputs(out)
	for _, e := range entries {
		files = append(files, e.Name())
	}
	if want := []string{"p_travel.md", "per_task.csv", "per_task.md", "per_task_seeds.csv", "table.csv", "table.md"}; !slices.Equal(files, want) {
		t.Errorf("output directory holds %q, want %q", files, want)
	}
	travel, err := os.ReadFile(filepath.Join(out, "p_travel.md"))
	if err != nil {
		t.Fatal(err)
	}
	// One row per TR-MAML seed, none for MAML, whose p does not move.
	if rows := strings.Count(string(travel), "_trmaml seed"); rows != 3 || strings.Contains(string(travel), "_maml seed") {
		t.Errorf("p_travel.md has %d TR-MAML rows, want 3 and no MAML row:\n%s", rows, travel)
	}

	if err := reportCmd([]string{"-runs", root}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "-out") {
		t.Errorf("no -out: error %v", err)
	}
	if err := reportCmd([]string{"-out", out, t.TempDir()}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "no run directories with an evaluation") {
		t.Errorf("no runs: error %v", err)
	}
}

func TestPlotCmd(t *testing.T) {
	t.Parallel()
	root := paperLikeRuns(t)
	out := filepath.Join(t.TempDir(), "figs")
	// The temporary file of a plot killed while writing Figure 1.
	os.MkdirAll(out, 0o755)
	stray := filepath.Join(out, ".figure1.png.tmp123456")
	os.WriteFile(stray, []byte("half a PNG"), 0o644)
	var stdout, stderr bytes.Buffer
	if err := plotCmd([]string{"-out", out, root}, &stdout, &stderr); err != nil {
		t.Fatalf("plot: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Error("the killed plot's temporary file outlived the re-run")
	}
	for _, name := range []string{"figure1.png", "p_weights.png", "orders.png"} {
		path := filepath.Join(out, name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := image.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width < 1000 || cfg.Height < 500 {
			t.Errorf("%s: %dx%d, %v", name, cfg.Width, cfg.Height, err)
		}
		if !strings.Contains(stdout.String(), "wrote "+path) {
			t.Errorf("%s not reported:\n%s", name, stdout.String())
		}
	}

	// MAML alone, one order: Figure 1 only.
	only := t.TempDir()
	writeSynthetic(t, only, resultstest.New("m", "maml", "second", 1, 5, 1))
	out2 := filepath.Join(t.TempDir(), "figs")
	if err := plotCmd([]string{"-out", out2, only}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	entries := outputs(out2)
	if len(entries) != 1 || entries[0].Name() != "figure1.png" {
		t.Errorf("MAML-only plot wrote %v, want figure1.png", entries)
	}
}

func TestCompareCmd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSynthetic(t, root, resultstest.New("m", "maml", "second", 1, 5, 1), resultstest.New("tr", "trmaml", "first", 2, 5, 2))
	var stdout, stderr bytes.Buffer
	a, b := filepath.Join(root, "m-seed1"), filepath.Join(root, "tr-seed2")
	if err := compareCmd([]string{"-runs", a, b}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(stdout.String(), "\n")
	find := func(prefix string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return f
			}
		}
		t.Fatalf("no %q row in\n%s", prefix, stdout.String())
		return nil
	}
	if f := find("meta-test mean"); !slices.Equal(f[len(f)-3:], []string{"3.0000", "6.0000", "+3.0000"}) {
		t.Errorf("meta-test mean row %q", f)
	}
	if f := find("ms per iteration"); !slices.Equal(f[len(f)-3:], []string{"1.0000", "2.0000", "+1.0000"}) {
		t.Errorf("ms row %q", f)
	}
	if f := find("setting"); !strings.Contains(strings.Join(f, " "), "TR-MAML first-order K=5 seed 2") {
		t.Errorf("setting row %q", f)
	}
	if err := compareCmd([]string{a}, &stdout, &stderr); err == nil {
		t.Error("compare of one run succeeded")
	}
}

func TestCompareAccuracyRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSynthetic(t, root, resultstest.NewAccuracy("m", "maml", "second", 1, 1, 1), resultstest.NewAccuracy("tr", "trmaml", "second", 1, 1, 0.5),
		resultstest.New("sine", "maml", "second", 1, 5, 1))
	var stdout, stderr bytes.Buffer
	a, b := filepath.Join(root, "m-seed1"), filepath.Join(root, "tr-seed1")
	if err := compareCmd([]string{a, b}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	// Meta-test worst accuracy 1 - 0.4*level, in percent.
	out := strings.Join(strings.Fields(stdout.String()), " ")
	for _, want := range []string{"meta-test worst 60.0000 80.0000 +20.0000", "metric accuracy (%) accuracy (%)",
		"MAML second-order 5-way 1-shot seed 1 TR-MAML second-order 5-way 1-shot seed 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout.String())
		}
	}
	if err := compareCmd([]string{a, filepath.Join(root, "sine-seed1")}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "measures accuracy but") {
		t.Errorf("compare of an accuracy and an MSE run: error %v", err)
	}
}

// TestReportAccuracyRuns: classification runs get the paper's Table 2
// layout; beside sinusoid runs, each metric has its own table files.
func TestReportAccuracyRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSynthetic(t, root, resultstest.NewAccuracy("om", "maml", "second", 1, 1, 1), resultstest.NewAccuracy("om", "maml", "second", 2, 1, 1.2),
		resultstest.NewAccuracy("ot", "trmaml", "second", 1, 1, 0.5), resultstest.NewAccuracy("ot", "trmaml", "second", 2, 1, 0.7))
	out := filepath.Join(t.TempDir(), "report")
	var stdout, stderr bytes.Buffer
	if err := reportCmd([]string{"-out", out, root}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| Meta-train weighted mean | Meta-train mean | Meta-train worst |") ||
		!strings.Contains(string(md), "| 5-way 1-shot | TR-MAML | 2 | **96.11 ± 8.25** |") {
		t.Errorf("table.md:\n%s", md)
	}
	perTaskMD, err := os.ReadFile(filepath.Join(out, "per_task.md"))
	// Meta-training alphabets by mass (Greek, 24 characters, first);
	// TR-MAML's Greek: 1 - 0.3 level (levels 0.5, 0.7), final p 0.5.
	if err != nil || !strings.Contains(string(perTaskMD), "| Alphabet | Sampling probability | MAML | TR-MAML | TR-MAML final p |\n|---|---:|---:|---:|---:|\n| Greek | 0.0062 | ") ||
		!strings.Contains(string(perTaskMD), "| 82.00 ± 38.12 | 0.50 ± 0.00 |") || !strings.Contains(string(perTaskMD), "### 5-way 1-shot, meta-test alphabets") {
		t.Errorf("per_task.md (%v):\n%s", err, perTaskMD)
	}
	perTask, err := os.ReadFile(filepath.Join(out, "per_task.csv"))
	if err != nil || !strings.Contains(string(perTask), ",meta_train,Japanese_(hiragana),") {
		t.Errorf("per_task.csv (%v):\n%s", err, perTask)
	}

	writeSynthetic(t, root, resultstest.New("sine", "maml", "second", 1, 5, 1))
	mixed := filepath.Join(t.TempDir(), "mixed")
	if err := reportCmd([]string{"-out", mixed, root}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries := outputs(mixed)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"p_travel.md", "per_task.csv", "per_task_accuracy.md", "per_task_mse.md", "per_task_seeds.csv",
		"table_accuracy.csv", "table_accuracy.md", "table_mse.csv", "table_mse.md"}; !slices.Equal(names, want) {
		t.Errorf("mixed report wrote %q, want %q", names, want)
	}
}

func TestPlotAccuracyRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSynthetic(t, root, resultstest.NewAccuracy("om", "maml", "second", 1, 1, 1), resultstest.NewAccuracy("om", "maml", "second", 2, 1, 1.2),
		resultstest.NewAccuracy("ot", "trmaml", "second", 1, 1, 0.5), resultstest.NewAccuracy("ot", "trmaml", "second", 2, 1, 0.7))
	out := filepath.Join(t.TempDir(), "figs")
	var stdout, stderr bytes.Buffer
	if err := plotCmd([]string{"-out", out, root}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries := outputs(out)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"adversary.png", "figure1.png"}; !slices.Equal(names, want) {
		t.Errorf("plot wrote %q, want %q", names, want)
	}

	writeSynthetic(t, root, resultstest.New("sine", "trmaml", "second", 1, 5, 1))
	mixed := filepath.Join(t.TempDir(), "mixed")
	if err := plotCmd([]string{"-out", mixed, root}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	names = nil
	entries = outputs(mixed)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"accuracy_adversary.png", "accuracy_figure1.png", "mse_figure1.png", "mse_p_weights.png"}; !slices.Equal(names, want) {
		t.Errorf("mixed plot wrote %q, want %q", names, want)
	}
}

// outputs lists what a command wrote into dir: its entries but the lock
// (package dirlock), which stays once a command has held the directory.
func outputs(dir string) []os.DirEntry {
	entries, _ := os.ReadDir(dir)
	return slices.DeleteFunc(entries, func(e os.DirEntry) bool { return e.Name() == dirlock.Name })
}
