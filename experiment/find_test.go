package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/rundir"
)

// TestFindListsUnreadableRuns: in a folder of runs, a run directory whose
// config.yaml cannot be read (empty, cut, not YAML) is listed as damaged,
// naming the file, not left out of the listing as if it were no run; a
// directory without config.yaml is no run.
func TestFindListsUnreadableRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, content := range map[string]string{
		"empty":   "",
		"garbage": "\x00\xffgarbage{[\n",
		"cut":     "name: sine_quick\nalgorithm: trm",
	} {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.ConfigFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	jobs, err := Find(root, "")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := Cells(jobs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.Name())
		want := filepath.Join(c.Job.Dir, rundir.ConfigFile)
		if c.State != Damaged || !strings.Contains(c.Detail, want) {
			t.Errorf("%s: %s (%s), want damaged naming %s", c.Name(), c.State, c.Detail, want)
		}
	}
	if got := strings.Join(names, " "); got != "cut empty garbage" {
		t.Errorf("cells %q, want cut empty garbage", got)
	}
}

// TestFindRefusesSpecForRun: an experiment file given with a run directory
// is refused, not ignored (status -config FILE RUNDIR listed the run alone,
// whatever FILE was, even a missing one).
func TestFindRefusesSpecForRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.ConfigFile), []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Find(dir, "/no/such/experiment.yaml")
	if err == nil || !strings.Contains(err.Error(), dir+" is a run directory") || !strings.Contains(err.Error(), "/no/such/experiment.yaml") {
		t.Errorf("Find of a run directory with an experiment file: %v, want a refusal naming both", err)
	}
}

// TestWorkerCount: Run starts no more workers than there are jobs (a
// -jobs of 10^12 started that many goroutines, exhausting memory) and at
// least one.
func TestWorkerCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ workers, jobs, want int }{
		{1 << 40, 8, 8}, {2, 8, 2}, {0, 8, 1}, {-3, 8, 1}, {4, 0, 1},
	} {
		if got := workerCount(c.workers, c.jobs); got != c.want {
			t.Errorf("workerCount(%d, %d) = %d, want %d", c.workers, c.jobs, got, c.want)
		}
	}
}
