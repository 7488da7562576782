package results_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

// TestWriteReport checks which tables a report writes for which runs, and
// that it prints each table and names its files.
func TestWriteReport(t *testing.T) {
	t.Parallel()
	perTask := []string{"per_task.csv", "per_task_seeds.csv"}
	for _, c := range []struct {
		name  string
		specs []resultstest.Spec
		want  []string
	}{
		{"MAML", []resultstest.Spec{resultstest.New("m", "maml", "second", 1, 5, 1)},
			slices.Concat(perTask, []string{"per_task.md", "table.csv", "table.md"})},
		{"TR-MAML moves p", []resultstest.Spec{resultstest.New("m", "maml", "second", 1, 5, 1), resultstest.New("tr", "trmaml", "second", 1, 5, 0.8)},
			slices.Concat([]string{"p_travel.md"}, perTask, []string{"per_task.md", "table.csv", "table.md"})},
		{"both metrics", []resultstest.Spec{resultstest.New("m", "maml", "second", 1, 5, 1), resultstest.NewAccuracy("a", "maml", "second", 1, 1, 1)},
			slices.Concat(perTask, []string{"per_task_accuracy.md", "per_task_mse.md", "table_accuracy.csv", "table_accuracy.md", "table_mse.csv", "table_mse.md"})},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			groups := loadGroups(t, writeRuns(t, c.specs...))
			dir := t.TempDir()
			var log bytes.Buffer
			if err := results.WriteReport(groups, dir, &log); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
				if strings.HasPrefix(e.Name(), "table") && strings.HasSuffix(e.Name(), ".md") {
					md, err := os.ReadFile(filepath.Join(dir, e.Name()))
					if err != nil || !strings.Contains(log.String(), string(md)+"\nwritten to "+filepath.Join(dir, e.Name())) {
						t.Errorf("%s not printed and named (%v):\n%s", e.Name(), err, log.String())
					}
				}
			}
			if slices.Sort(c.want); !slices.Equal(got, c.want) { // ReadDir sorts by name
				t.Errorf("wrote %q, want %q", got, c.want)
			}
		})
	}
}
