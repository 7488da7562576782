package cli

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// TestReportAndPlotUnfinished: a grid with one finished seed and one
// interrupted after a few evaluations is reported and plotted, the
// interrupted run to its last evaluation and marked in the table; its
// missing per-task values leave it out of the per-task files only.
func TestReportAndPlotUnfinished(t *testing.T) {
	root := t.TempDir()
	cfg, err := configs.Builtin("sine_quick")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Meta.Iterations, cfg.Eval.Every, cfg.Eval.Instances, cfg.Eval.TrainInstances = 600, 100, 490, 100
	cfg.Eval.CVaRAlpha = []float64{0.7}
	if _, err := run.Train(context.Background(), cfg, filepath.Join(root, "seed1"), run.Options{}); err != nil {
		t.Fatal(err)
	}
	// Seed 2 stops once it has evaluated at iteration 200.
	cfg.Seed = 2
	dir := filepath.Join(root, "seed2")
	last := interruptAfter(t, cfg, dir, 3)
	m, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if last >= 600 {
		t.Fatalf("seed 2 finished its evaluations (last %d)", last)
	}

	// Seed 3 stops after its evaluation before training: it has nothing
	// to show and stays out of the table.
	cfg.Seed, cfg.Meta.Iterations, cfg.Eval.Every = 3, 60000, 30000
	early := filepath.Join(root, "seed3")
	if last := interruptAfter(t, cfg, early, 1); last != 0 {
		t.Fatalf("seed 3 evaluated up to iteration %d, not only iteration 0", last)
	}

	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"report", "-out", out, root}, &stdout, &stderr); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "including "+dir+", unfinished") {
		t.Errorf("report says nothing of the unfinished run:\n%s", stderr.String())
	}
	if want := "skipping " + early + ": " + filepath.Join(early, rundir.MetricsFile) + ": only the evaluation before training"; !strings.Contains(stderr.String(), want) {
		t.Errorf("report does not say %q:\n%s", want, stderr.String())
	}
	table := mustRead(t, filepath.Join(out, "table.md"))
	if want := "| 2 (unfinished: seed 2 at iteration " + strconv.Itoa(last) + " of 600) |"; !strings.Contains(table, want) {
		t.Errorf("table.md lacks %q:\n%s", want, table)
	}
	if want := ",unfinished: seed 2 at iteration " + strconv.Itoa(last) + " of 600\n"; !strings.Contains(mustRead(t, filepath.Join(out, "table.csv")), want) {
		t.Errorf("table.csv lacks %q", want)
	}
	// The CVaR column averages seed 1's final CVaR with seed 2's last
	// evaluation's, as the other columns do.
	res, err := rundir.ReadResult(filepath.Join(root, "seed1", rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	want := (res.MetaTest.CVaR[0].Value + m.CVaR[0].Test[len(m.CVaR[0].Test)-1]) / 2
	col, recs := readCSVFile(t, filepath.Join(out, "table.csv"))
	if got, err := strconv.ParseFloat(recs[0][col["test_cvar0.7"]], 64); err != nil || math.Abs(got-want) > 1e-12*want {
		t.Errorf("table.csv test_cvar0.7 = %s, want the mean of seed 1's final and seed 2's last, %v", recs[0][col["test_cvar0.7"]], want)
	}
	if strings.Contains(table, "seed 3") {
		t.Errorf("table.md shows seed 3, evaluated only before training:\n%s", table)
	}
	seeds := mustRead(t, filepath.Join(out, "per_task_seeds.csv"))
	if strings.Contains(seeds, "seed2") || !strings.Contains(seeds, ",1,") {
		t.Errorf("per_task_seeds.csv should hold seed 1 only:\n%.300s", seeds)
	}
	stdout.Reset()
	if err := dispatch([]string{"plot", "-out", out, "-format", "svg", root}, &stdout, &stderr); err != nil {
		t.Fatalf("plot: %v\n%s", err, stderr.String())
	}
	svg := mustRead(t, filepath.Join(out, "figure1.svg"))
	if !strings.Contains(svg, "(unfinished)") || !strings.Contains(svg, "unfinished: to the last evaluation") {
		t.Error("figure1.svg does not mark the unfinished run")
	}
	// tradeoff takes finished runs only, as before.
	if err := dispatch([]string{"tradeoff", "-out", filepath.Join(t.TempDir(), "t"), dir}, &stdout, &stderr); err == nil {
		t.Error("tradeoff of an unfinished run only succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ResultFile)); err == nil {
		t.Error("reporting wrote into the unfinished run")
	}
}

// interruptAfter trains cfg into dir until metrics.csv holds rows
// evaluations, then interrupts it and returns its last evaluated iteration.
func interruptAfter(t *testing.T, cfg configs.Config, dir string, rows int) int {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			if m, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile)); err == nil && len(m.Iterations) >= rows {
				stop()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err := run.Train(ctx, cfg, dir, run.Options{})
	stop()
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("%s was not interrupted: %v", dir, err)
	}
	m, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return m.Iterations[len(m.Iterations)-1]
}
