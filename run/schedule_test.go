package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// TestCosineScheduleRunResumes: a run with the cosine schedule differs
// from a constant-rate run, checkpoints Adam with its base rate, and resumed
// from an earlier checkpoint finishes exactly as without the interruption.
func TestCosineScheduleRunResumes(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Meta.Schedule, c.Meta.LRMin = "cosine", 1e-5
	root := t.TempDir()
	full, partial := filepath.Join(root, "full"), filepath.Join(root, "partial")

	// Copy the run directory as it is when the last evaluation starts: its
	// checkpoint is still the previous evaluation's (iteration 20 of 30), as
	// a run killed during that evaluation leaves it.
	var copyErr error
	copied := false
	p := NewProgressFunc(func(_ string, evaluation bool) {
		if !evaluation || copied {
			return
		}
		if raw, err := os.ReadFile(filepath.Join(full, rundir.CheckpointFile)); err == nil && checkpointIteration(raw) == 20 {
			copied, copyErr = true, copyRunFiles(full, partial)
		}
	})
	res, err := Train(context.Background(), c, full, Options{Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	if copyErr != nil || !copied {
		t.Fatalf("no copy of the run at its iteration-20 checkpoint (%v)", copyErr)
	}

	var ck rundir.Checkpoint
	raw, _ := os.ReadFile(filepath.Join(full, rundir.CheckpointFile))
	if err := json.Unmarshal(raw, &ck); err != nil {
		t.Fatal(err)
	}
	var adam metalearn.Adam
	if err := json.Unmarshal(ck.Optimizer, &adam); err != nil {
		t.Fatal(err)
	}
	if adam.LR != c.Meta.LR || adam.T != 30 {
		t.Errorf("checkpointed Adam: rate %v after %d steps, want the base rate %v after 30", adam.LR, adam.T, c.Meta.LR)
	}

	resumed, err := Resume(context.Background(), partial, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "resumed cosine run", resumed, res)

	c.Meta.Schedule = "constant"
	constant, err := Train(context.Background(), c, filepath.Join(root, "constant"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if constant.MetaTest.Mean == res.MetaTest.Mean {
		t.Error("the cosine schedule changed nothing")
	}
}

func checkpointIteration(raw []byte) int {
	var ck rundir.Checkpoint
	if err := json.Unmarshal(raw, &ck); err != nil {
		return -1
	}
	return ck.State.Iteration
}

// copyRunFiles copies the files of run directory src into a new dst.
func copyRunFiles(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range []string{rundir.ConfigFile, rundir.MetricsFile, rundir.PFile, rundir.TasksFile, rundir.CheckpointFile, rundir.ManifestFile} {
		raw, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, f), raw, 0o644); err != nil {
			return err
		}
	}
	return nil
}
