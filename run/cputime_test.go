package run

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/internal/cputime"
	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/rundir"
)

// TestCPUTimeAcrossResume: a run interrupted and resumed reports the
// processor time of both segments, at least its checkpoint's and at most
// what the whole process spent meanwhile; a run resumed from a checkpoint
// without CPU times reports none rather than a part.
func TestCPUTimeAcrossResume(t *testing.T) {
	if _, ok := cputime.Process(); !ok {
		t.Skip("no processor time on this platform")
	}
	c := tinyConfig()
	dir := filepath.Join(t.TempDir(), "run")
	before, _ := cputime.Process()
	if _, err := Train(ctxtest.StopAfter(context.Background(), 13), c, dir, Options{}); !errors.Is(err, ErrInterrupted) {
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
	res, err := Resume(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := cputime.Process()
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
	if _, err := Train(ctxtest.StopAfter(context.Background(), 13), c, dir2, Options{}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted", err)
	}
	old, err := rundir.ReadCheckpoint(filepath.Join(dir2, rundir.CheckpointFile))
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
	res, err = Resume(context.Background(), dir2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Timing.CPU != nil {
		t.Errorf("resumed from a checkpoint without CPU times, the result claims %+v", res.Timing.CPU)
	}
}

// TestCPUMeterSplitsSharedProcess: a lap over which another run was
// active for a part is charged half of that part and all of the rest, and
// its totals say they were shared.
func TestCPUMeterSplitsSharedProcess(t *testing.T) {
	if _, ok := cputime.Process(); !ok {
		t.Skip("no processor time on this platform")
	}
	burn := func() { // about 0.1 s of CPU
		for x := 0.0; x < 1e8; x++ {
			if x < 0 {
				break
			}
		}
	}
	m := newCPUMeter(nil, true)
	defer m.stop()
	other := newCPUMeter(nil, true)
	m.skip()
	a, _ := cputime.Process()
	burn()
	other.stop()
	b, _ := cputime.Process()
	burn()
	m.train()
	c, _ := cputime.Process()
	got := m.times()
	want := ((b-a)/2 + (c - b)).Seconds()
	if got == nil || !got.Shared || math.Abs(got.TrainSeconds-want) > 0.01 {
		t.Errorf("lap %+v, want %.4f s: half of %.4f s shared and %.4f s alone", got, want, (b - a).Seconds(), (c - b).Seconds())
	}
	m.skip()
	burn()
	if alone := m.lap(); alone <= 0 || m.total.TrainSeconds != got.TrainSeconds {
		t.Errorf("a lap alone: %.4f s", alone)
	}
	unknown := newCPUMeter(nil, false)
	defer unknown.stop()
	if unknown.times() != nil {
		t.Error("a meter without earlier times reports totals")
	}
}
