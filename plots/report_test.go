package plots_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

// TestWriteReport checks which figures a report draws for which runs, and
// that it names each file it writes.
func TestWriteReport(t *testing.T) {
	t.Parallel()
	k10 := resultstest.New("sine_k10_maml", "maml", "second", 1, 10, 1)
	for _, c := range []struct {
		name  string
		specs []resultstest.Spec
		want  []string
	}{
		{"MAML alone", seeds("m", "maml", "second", 1), []string{"figure1.svg"}},
		{"TR-MAML and both orders", slices.Concat(seeds("m", "maml", "second", 1, 1.2), seeds("tr", "trmaml", "second", 0.8, 0.9), seeds("fo", "maml", "first", 1)),
			[]string{"figure1.svg", "orders.svg", "p_weights.svg"}},
		{"TR-MAML first order only", seeds("tr", "trmaml", "first", 0.8), []string{"figure1.svg", "p_weights.svg"}},
		{"two settings", append(seeds("m", "maml", "second", 1), k10), []string{"figure1.svg", "figure1_k10.svg"}},
		{"accuracy", accuracySeeds("a", "maml", 0.5, 0.6), []string{"adversary.svg", "figure1.svg"}},
		{"both metrics", append(seeds("m", "maml", "second", 1), accuracySeeds("a", "maml", 0.5)...),
			[]string{"accuracy_adversary.svg", "accuracy_figure1.svg", "mse_figure1.svg"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := report(t, groupsOf(t, c.specs...)); !slices.Equal(got, c.want) {
				t.Errorf("wrote %q, want %q", got, c.want)
			}
		})
	}
}

// report writes the report of groups as SVG files and returns their
// names, checking that it names each file it writes.
func report(t *testing.T, groups []*results.Group) []string {
	t.Helper()
	dir := t.TempDir()
	var log bytes.Buffer
	if err := plots.WriteReport(groups, dir, "svg", plots.Double, &log); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if path := filepath.Join(dir, e.Name()); !strings.Contains(log.String(), "wrote "+path+"\n") {
			t.Errorf("%s not noted:\n%s", path, log.String())
		}
	}
	return got
}

// TestWriteReportUnfinishedPWeights: before a run of TR-MAML finishes,
// p_weights has the mass on its hard tasks to draw, and is left out when
// no task is hard (tasks of another family than the sinusoid's).
func TestWriteReportUnfinishedPWeights(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		tasks []string
		want  []string
	}{
		{"hard tasks", nil, []string{"figure1.svg", "p_weights.svg"}},
		{"no hard task", []string{"task 1", "task 2", "task 3", "task 4"}, []string{"figure1.svg"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var log strings.Builder
			groups, err := results.Gather([]string{unfinishedRun(t, t.TempDir(), 1, []float64{0.7, 0.1, 0.1, 0.1}, c.tasks)}, true, &log)
			if err != nil {
				t.Fatal(err)
			}
			if got := report(t, groups); !slices.Equal(got, c.want) {
				t.Errorf("wrote %q, want %q", got, c.want)
			}
		})
	}
}
