package results_test

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

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
