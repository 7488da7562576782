package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/rundir"
)

// TestCheckpointNewerThanManifest: a checkpoint newer than the sealed one
// is accepted only as what a kill between a save's checkpoint and its
// manifest leaves, with the save's metric rows already written: such a
// directory resumes to the uninterrupted result. The same checkpoint
// without its rows (copied in from a continued copy of the run, or the last
// checkpoint of a finished copy) is refused by every reader, blaming
// checkpoint.json, not metrics.csv.
func TestCheckpointNewerThanManifest(t *testing.T) {
	t.Parallel()
	c := tinyConfig() // 30 iterations, evaluated every 10
	root := t.TempDir()
	full, err := Train(context.Background(), c, filepath.Join(root, "full"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	copyDir := func(src, name string) string {
		t.Helper()
		dst := filepath.Join(root, name)
		if err := copyRunFiles(src, dst); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	// Sealed at the evaluation of iteration 10; its continuation sealed at
	// that of iteration 20; a finished copy of the continuation.
	at10 := filepath.Join(root, "at10")
	if _, err := Train(ctxtest.StopAfter(context.Background(), 10), c, at10, Options{}); err == nil {
		t.Fatal("the interrupted run finished")
	}
	at20 := copyDir(at10, "at20")
	if _, err := Resume(ctxtest.StopAfter(context.Background(), 10), at20, Options{}); err == nil {
		t.Fatal("the interrupted resume finished")
	}
	finished := copyDir(at20, "finished")
	if _, err := Resume(context.Background(), finished, Options{}); err != nil {
		t.Fatal(err)
	}
	if checkpointIteration(mustReadFile(t, filepath.Join(at20, rundir.CheckpointFile))) != 20 {
		t.Fatal("the continuation did not stop at its evaluation of iteration 20")
	}

	// The kill: the save of iteration 20 wrote metrics.csv, p.csv,
	// tasks.csv and checkpoint.json, not the manifest.
	killed := copyDir(at10, "killed")
	for _, f := range []string{rundir.MetricsFile, rundir.PFile, rundir.TasksFile, rundir.CheckpointFile} {
		os.WriteFile(filepath.Join(killed, f), mustReadFile(t, filepath.Join(at20, f)), 0o644)
	}
	if _, err := rundir.Verify(killed); err != nil {
		t.Fatalf("a kill between checkpoint and manifest: %v", err)
	}
	res, err := Resume(context.Background(), killed, Options{})
	if err != nil {
		t.Fatalf("a kill between checkpoint and manifest: %v", err)
	}
	sameResult(t, "a kill between checkpoint and manifest", res, full)

	for _, tc := range []struct{ name, from, into string }{
		{"the continuation's checkpoint", at20, at10},
		{"a finished copy's checkpoint", finished, at20},
	} {
		dir := copyDir(tc.into, "copied")
		os.WriteFile(filepath.Join(dir, rundir.CheckpointFile), mustReadFile(t, filepath.Join(tc.from, rundir.CheckpointFile)), 0o644)
		for _, cmd := range []struct {
			name string
			run  func() error
		}{
			{"verify", func() error { _, err := rundir.Verify(dir); return err }},
			{"eval", func() error { _, err := Evaluate(context.Background(), dir, 0, Options{}); return err }},
			{"resume", func() error { _, err := Resume(context.Background(), dir, Options{}); return err }},
		} {
			err := cmd.run()
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, rundir.CheckpointFile)+": ") || !strings.Contains(err.Error(), "no row") {
				t.Errorf("%s copied in, %s: %v, want a refusal blaming %s", tc.name, cmd.name, err, rundir.CheckpointFile)
			}
		}
		os.RemoveAll(dir)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
