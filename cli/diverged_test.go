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

// TestFinishedButDivergedRun: a trmaml train whose loss grows huge but
// stays finite finishes with a warning on stderr that it probably diverged
// and what to make smaller, and trmaml status shows it on the run's line;
// a run that learns gets neither.
func TestFinishedButDivergedRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lr   string
		warn bool
	}{{"100", true}, {"0.001", false}} {
		dir := filepath.Join(t.TempDir(), "run")
		var stdout, stderr bytes.Buffer
		if err := dispatch([]string{"train", "-config", "sine_k5_maml", "-set", "meta.lr=" + c.lr, "-set", "meta.iterations=100",
			"-set", "eval.every=50", "-set", "eval.instances=490", "-set", "eval.train_instances=100", "-set", "eval.query=10", "-out", dir}, &stdout, &stderr); err != nil {
			t.Fatalf("train, meta.lr = %s: %v\n%s", c.lr, err, stderr.String())
		}
		want := "probably diverged; make meta.lr = " + c.lr + " or inner.alpha = 0.001 smaller"
		if got := strings.Contains(stderr.String(), "warning: "+dir+": the mean meta-test loss grew") && strings.Contains(stderr.String(), want); got != c.warn {
			t.Errorf("train, meta.lr = %s: stderr\n%s\nwarning %v, want %v", c.lr, stderr.String(), got, c.warn)
		}
		stdout.Reset()
		if err := dispatch([]string{"status", dir}, &stdout, &stderr); err != nil {
			t.Fatalf("status: %v", err)
		}
		if got := strings.Contains(stdout.String(), "finished") && strings.Contains(stdout.String(), "; warning: the mean meta-test loss grew") && strings.Contains(stdout.String(), want); got != c.warn {
			t.Errorf("status, meta.lr = %s:\n%s\nwarning %v, want %v", c.lr, stdout.String(), got, c.warn)
		}
	}
}
