package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/rundir"
)

// TestCPUTimeAcrossResume: a run interrupted and resumed reports the
// processor time of both segments, at least its checkpoint's and at most
// what the whole process spent meanwhile; a run resumed from a checkpoint
// without CPU times reports none rather than a part.
func TestCPUTimeAcrossResume(t *testing.T) {
	if _, ok := processCPU(); !ok {
		t.Skip("no processor time on this platform")
	}
	c := tinyConfig()
	dir := filepath.Join(t.TempDir(), "run")
	before, _ := processCPU()
	if _, err := Train(c, dir, Options{Context: &afterChecks{Context: context.Background(), n: 13}}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted", err)
	}
	ckPath := filepath.Join(dir, rundir.CheckpointFile)
	ck, err := rundir.ReadCheckpoint(ckPath)
	if err != nil {
		t.Fatal(err)
	}
	if ck.CPU == nil || ck.CPU.TrainSeconds <= 0 || ck.CPU.EvalSeconds <= 0 || ck.CPU.Shared {
		t.Fatalf("checkpoint CPU times %+v, want positive and not shared", ck.CPU)
	}
	keep, err := os.ReadFile(ckPath)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Resume(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := processCPU()
	got := res.Timing.CPU
	if got == nil || got.TrainSeconds <= ck.CPU.TrainSeconds || got.EvalSeconds <= ck.CPU.EvalSeconds || got.Shared {
		t.Fatalf("result CPU times %+v, want more than the checkpoint's %+v", got, ck.CPU)
	}
	if total := got.TrainSeconds + got.EvalSeconds; total > (after - before).Seconds() {
		t.Errorf("run's CPU time %.4f s exceeds the process's %.4f s", total, (after - before).Seconds())
	}

	// The same interrupted run, its checkpoint rewritten as one from before
	// CPU times.
	dir2 := filepath.Join(t.TempDir(), "old")
	if _, err := Train(c, dir2, Options{Context: &afterChecks{Context: context.Background(), n: 13}}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted", err)
	}
	old, err := rundir.DecodeCheckpoint(ckPath, keep)
	if err != nil {
		t.Fatal(err)
	}
	old.CPU = nil
	if _, err := rundir.WriteCheckpoint(filepath.Join(dir2, rundir.CheckpointFile), old); err != nil {
		t.Fatal(err)
	}
	if err := rundir.Seal(dir2, false); err != nil {
		t.Fatal(err)
	}
	res, err = Resume(dir2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Timing.CPU != nil {
		t.Errorf("resumed from a checkpoint without CPU times, the result claims %+v", res.Timing.CPU)
	}
}

// TestCPUMeterSplitsSharedProcess: with two runs active, a lap is at most
// half the process's time over it and the totals say they were shared.
func TestCPUMeterSplitsSharedProcess(t *testing.T) {
	if _, ok := processCPU(); !ok {
		t.Skip("no processor time on this platform")
	}
	m := newCPUMeter(nil, true)
	defer m.stop()
	other := newCPUMeter(nil, true)
	start, _ := processCPU()
	m.skip()
	for x := 0.0; x < 1e8; x++ { // about 0.1 s of CPU
		if x < 0 {
			break
		}
	}
	m.train()
	end, _ := processCPU()
	other.stop()
	got := m.times()
	if got == nil || !got.Shared || got.TrainSeconds <= 0 || 2*got.TrainSeconds > (end-start).Seconds() {
		t.Errorf("shared lap %+v over %.4f s of process time", got, (end - start).Seconds())
	}
	unknown := newCPUMeter(nil, false)
	defer unknown.stop()
	if unknown.times() != nil {
		t.Error("a meter without earlier times reports totals")
	}
}
