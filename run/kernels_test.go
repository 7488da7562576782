package run

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/rundir"
)

// TestKernelsAcrossResume: a checkpoint records the kernel set that trained
// it; a run resumed under the same set says nothing and its result names
// no list, while one whose checkpoint names another set is told so once
// and its result lists both, in order. A checkpoint from before the record
// leaves the list unknown.
func TestKernelsAcrossResume(t *testing.T) {
	now := graph.Kernels()
	tests := []struct {
		name     string
		recorded []string // the checkpoint's kernels before the resume
		warn     bool
		want     []string // the result's timing.kernels
	}{
		{"same set", []string{now}, false, nil},
		{"another set", []string{"BLAS elsewhere, plain Go loops"}, true, []string{"BLAS elsewhere, plain Go loops", now}},
		{"unrecorded", nil, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if _, err := Train(ctxtest.StopAfter(context.Background(), 13), tinyConfig(), dir, Options{}); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("got %v, want ErrInterrupted", err)
			}
			path := filepath.Join(dir, rundir.CheckpointFile)
			ck, err := rundir.ReadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ck.Kernels, []string{now}) {
				t.Fatalf("checkpoint records kernels %q, want [%q]", ck.Kernels, now)
			}
			ck.Kernels = tc.recorded
			if _, err := rundir.WriteCheckpoint(path, ck); err != nil {
				t.Fatal(err)
			}
			if err := rundir.Seal(dir, false); err != nil {
				t.Fatal(err)
			}
			var warnings bytes.Buffer
			res, err := Resume(context.Background(), dir, Options{Warnings: &warnings})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(warnings.String(), "differ in rounding"); got != map[bool]int{false: 0, true: 1}[tc.warn] {
				t.Errorf("warnings %q: %d about the kernel set, want warned=%v", warnings.String(), got, tc.warn)
			}
			if tc.warn && !strings.Contains(warnings.String(), tc.recorded[0]) {
				t.Errorf("warning %q does not name the earlier set %q", warnings.String(), tc.recorded[0])
			}
			if !slices.Equal(res.Timing.Kernels, tc.want) {
				t.Errorf("result lists kernels %q, want %q", res.Timing.Kernels, tc.want)
			}
		})
	}
}
