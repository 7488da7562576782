package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusOfDivergedRun: a trmaml train that diverges leaves its run
// directory marked failed, and trmaml status says so with the reason,
// instead of listing it as interrupted (a resume would diverge again); a
// report of it is refused with a message, not a crash.
func TestStatusOfDivergedRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "diverged")
	var stdout, stderr bytes.Buffer
	err := dispatch([]string{"train", "-config", "sine_quick", "-set", "meta.lr=1e30", "-set", "meta.iterations=50",
		"-set", "eval.every=25", "-set", "eval.instances=490", "-set", "eval.train_instances=100", "-out", dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("train: %v, want the divergence", err)
	}
	stdout.Reset()
	if err := dispatch([]string{"status", dir}, &stdout, &stderr); err != nil {
		t.Fatalf("status: %v", err)
	}
	if out := stdout.String(); !strings.Contains(out, "failed") || !strings.Contains(out, "the training diverged") {
		t.Errorf("status of the diverged run:\n%s", out)
	}
	err = dispatch([]string{"report", "-out", filepath.Join(t.TempDir(), "report"), dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no run directories with an evaluation") {
		t.Errorf("report of a run stopped before its first evaluation after iteration 0: %v", err)
	}
}
