package plots_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
	"github.com/trmaml/trmaml/rundir"
)

// unfinishedRun writes seed's TR-MAML run stopped after its evaluation at
// iteration 100, with lastP its p there, sealed as a save seals it, and
// returns its directory. tasks, unless nil, rename its meta-training tasks.
func unfinishedRun(t *testing.T, root string, seed uint64, lastP []float64, tasks []string) string {
	t.Helper()
	s := resultstest.New("tr", "trmaml", "second", seed, 5, 1)
	if tasks != nil {
		s.Result.MetaTrain.Tasks = tasks
	}
	s.Iterations, s.Metrics, s.P = s.Iterations[:2], s.Metrics[:2], s.P[:2]
	s.P[1] = lastP
	dir := filepath.Join(root, fmt.Sprintf("tr-seed%d", seed))
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, rundir.ResultFile)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, rundir.ManifestFile))
	// A save seals metrics.csv with the checkpoint that binds its rows.
	read := func(name string) []byte {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	ck := rundir.Checkpoint{Optimizer: []byte("{}"), Seed: seed, ConfigSHA256: rundir.HashBytes(read(rundir.ConfigFile))}
	ck.State.Iteration = 100
	ck.BindRows(read(rundir.MetricsFile), read(rundir.PFile), nil)
	if _, err := rundir.WriteCheckpoint(filepath.Join(dir, rundir.CheckpointFile), ck); err != nil {
		t.Fatal(err)
	}
	if err := rundir.Seal(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPWeightsUnfinished: as Figure1 does, p_weights draws an unfinished
// run's p mass to its last evaluation and says so in the legend, and its
// final weights are of the finished runs only: an unfinished run's last p
// moves nothing in panel (a), which is left out when no run has finished.
func TestPWeightsUnfinished(t *testing.T) {
	t.Parallel()
	const note = "unfinished: to the last evaluation; final weights: finished runs"
	hard := results.TasksWithAmplitudeAtLeast(resultstest.TrainTasks, results.HardAmplitude)
	// render draws the runs of finished seeds and unfinished ones (their
	// last p) as an SVG, whose text can be read.
	render := func(t *testing.T, finished int, unfinished [][]float64, hard []string) (string, error) {
		root := t.TempDir()
		var dirs []string
		for seed := 1; seed <= finished; seed++ {
			dir := filepath.Join(root, fmt.Sprintf("tr-seed%d", seed))
			if err := resultstest.New("tr", "trmaml", "second", uint64(seed), 5, 1).Write(dir); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, dir)
		}
		for i, p := range unfinished {
			dirs = append(dirs, unfinishedRun(t, root, uint64(finished+i+1), p, nil))
		}
		var log strings.Builder
		groups, err := results.Gather(dirs, true, &log)
		if n := strings.Count(log.String(), "including"); n != len(unfinished) {
			t.Fatalf("%d unfinished runs loaded, want %d:\n%s", n, len(unfinished), log.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "p.svg")
		if err := plots.PWeights(groups, hard, path, plots.Double); err != nil {
			return "", err
		}
		raw, err := os.ReadFile(path)
		return string(raw), err
	}
	for _, tc := range []struct {
		name       string
		finished   int
		unfinished [][]float64
		hard       []string
		want       []string // in the SVG
		wantNot    []string
	}{
		{"all finished", 2, nil, hard, []string{"(a) final task weights", "(b) total weight"}, []string{note}},
		{"one unfinished", 2, [][]float64{{0.7, 0.1, 0.1, 0.1}}, hard, []string{"(a) final task weights", "(b) total weight", note}, nil},
		{"none finished", 0, [][]float64{{0.7, 0.1, 0.1, 0.1}}, hard, []string{"(b) total weight", note}, []string{"(a) final task weights"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := render(t, tc.finished, tc.unfinished, tc.hard)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(svg, w) {
					t.Errorf("the figure does not say %q", w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(svg, w) {
					t.Errorf("the figure says %q", w)
				}
			}
		})
	}

	// Panel (a) alone: two unfinished runs' different last p draw the same
	// figure, the finished runs' final weights.
	a, err := render(t, 2, [][]float64{{0.7, 0.1, 0.1, 0.1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := render(t, 2, [][]float64{{0.1, 0.1, 0.1, 0.7}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(a), []byte(b)) {
		t.Error("an unfinished run's last p moved the final weights")
	}
	if _, err := render(t, 0, [][]float64{{0.7, 0.1, 0.1, 0.1}}, nil); err == nil {
		t.Error("no finished run and no hard tasks: drawn")
	}
}
