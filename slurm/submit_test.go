package slurm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRequestCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    Request
		want string // "" for accepted
	}{
		{Request{}, ""},
		{Request{CPUs: 4, MemMiB: 2048, Time: time.Hour, MaxRunning: 2}, ""},
		{Request{Time: time.Minute}, ""},
		{Request{CPUs: -1}, "must not be negative"},
		{Request{MemMiB: -1}, "must not be negative"},
		{Request{MaxRunning: -1}, "must not be negative"},
		{Request{Time: 30 * time.Second}, "below one minute"},
	} {
		err := c.r.Check()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.r, err, c.want)
		}
	}
}

func TestSubmittedJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if got := SubmittedJobs(dir); len(got) != 0 {
		t.Errorf("no jobs file: %v", got)
	}
	if err := appendJob(dir, "config /e.yaml\narray 7 0-4"); err != nil {
		t.Fatal(err)
	}
	if err := appendJob(dir, "report 8"); err != nil {
		t.Fatal(err)
	}
	// A resubmission, and a blank line, which is skipped.
	raw, err := os.ReadFile(filepath.Join(dir, JobsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, JobsFile), append(raw, "array 9 0-1\n\nreport 10\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	got := SubmittedJobs(dir)
	for kind, want := range map[string][]string{"config": {"/e.yaml"}, "array": {"7", "9"}, "report": {"8", "10"}} {
		if !slices.Equal(got[kind], want) {
			t.Errorf("%s jobs %q, want %q", kind, got[kind], want)
		}
	}
}
