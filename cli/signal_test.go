package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// TestMain lets the signal tests run this test binary as the trmaml
// command: with TRMAML_TEST_MAIN=1 it is Main.
func TestMain(m *testing.M) {
	if os.Getenv("TRMAML_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// trmaml starts the command with args as a separate process.
func trmaml(args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TRMAML_TEST_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// signalGrid is a one-cell grid of a small sine config (signalBase), long
// enough (a few seconds) for a signal to land between two evaluations.
const (
	signalGrid = "name: sig\nbase: base.yaml\nalgorithms: [trmaml]\norders: [first]\nseeds: [3]\n"
	signalBase = `name: small
model: {kind: mlp, mlp: {hidden: [8]}}
meta: {iterations: 20000, batch: 10}
eval: {every: 5000, instances: 490, train_instances: 100, batch: 245, query: 5}
`
)

// writeSignalGrid writes the experiment file (with seeds) and its base
// into dir and returns the experiment file's path.
func writeSignalGrid(t *testing.T, dir, seeds string) string {
	t.Helper()
	spec := filepath.Join(dir, "sig.yaml")
	if err := os.WriteFile(spec, []byte(strings.Replace(signalGrid, "[3]", seeds, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(signalBase), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestSignalCheckpointsAndResumes sends each of SIGUSR1, SIGTERM and SIGINT
// to `trmaml experiment -cell 0` mid-run, and SIGINT (Ctrl-C) to the
// whole-grid `trmaml experiment` and to `trmaml train`: each exits with status
// 75, saying the iteration it stopped at, where its checkpoint is; the same
// command (resume after train) then finishes the run with the
// uninterrupted run's result.json and metrics (but for wall-clock time).
func TestSignalCheckpointsAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three interrupted runs and an uninterrupted one")
	}
	dir := t.TempDir()
	spec := writeSignalGrid(t, dir, "[3]")
	_, cfgs, err := experiment.Load(spec, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref")
	refJobs := experiment.Jobs(cfgs, ref)
	if err := experiment.RunCell(context.Background(), ref, refJobs, 0, run.Options{}); err != nil {
		t.Fatal(err)
	}
	refCfg := filepath.Join(refJobs[0].Dir, rundir.ConfigFile)
	for k, c := range []struct {
		sig           syscall.Signal
		start, resume func(out string) []string
		runDir        func(out string) string
	}{
		{sig: syscall.SIGUSR1},
		{sig: syscall.SIGTERM},
		{sig: syscall.SIGINT},
		// The whole-grid command and train/resume stop the same way on
		// Ctrl-C.
		{sig: syscall.SIGINT, start: func(out string) []string {
			return []string{"experiment", "-config", spec, "-out", out, "-jobs", "1"}
		}},
		{sig: syscall.SIGINT,
			start:  func(out string) []string { return []string{"train", "-config", refCfg, "-out", out} },
			resume: func(out string) []string { return []string{"resume", "-run", out} },
			runDir: func(out string) string { return out }},
	} {
		sig := c.sig
		out := filepath.Join(dir, fmt.Sprintf("case%d", k))
		runDir := experiment.Jobs(cfgs, out)[0].Dir
		if c.runDir != nil {
			runDir = c.runDir(out)
		}
		args := []string{"experiment", "-config", spec, "-out", out, "-cell", "0"}
		if c.start != nil {
			args = c.start(out)
		}
		resume := args
		if c.resume != nil {
			resume = c.resume(out)
		}
		cmd, log := trmaml(args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal once training is under way: after the first checkpoint
		// (iteration 0) and a moment of training, counted in the process's
		// own CPU time so that a busy machine cannot leave it at iteration 0.
		for !fileExists(filepath.Join(runDir, rundir.CheckpointFile)) {
			time.Sleep(20 * time.Millisecond)
		}
		for start := cpuTime(cmd.Process.Pid); cpuTime(cmd.Process.Pid)-start < 500*time.Millisecond; {
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
			t.Fatalf("%v: exit %v, want status %d\n%s", sig, err, exitInterrupted, log)
		}
		m := regexp.MustCompile(`interrupted at iteration (\d+)`).FindStringSubmatch(log.String())
		if m == nil {
			t.Fatalf("%v: no iteration in the message:\n%s", sig, log)
		}
		at, _ := strconv.Atoi(m[1])
		ck, err := rundir.ReadCheckpoint(filepath.Join(runDir, rundir.CheckpointFile))
		if err != nil || ck.State.Iteration != at || at <= 0 || at >= 20000 {
			t.Fatalf("%v: stopped at iteration %d, checkpoint at %d (%v): want the same, inside the run", sig, at, ck.State.Iteration, err)
		}
		cmd, log = trmaml(resume...)
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: resuming: %v\n%s", sig, err, log)
		}
		got, want := readResultFile(t, runDir), readResultFile(t, refJobs[0].Dir)
		got.Timing, want.Timing = rundir.Timing{}, rundir.Timing{}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: the resumed run's result differs from the uninterrupted run's", sig)
		}
		for _, f := range []string{rundir.PFile, rundir.ModelFile, rundir.MetricsFile} {
			a, b := mustRead(t, filepath.Join(runDir, f)), mustRead(t, filepath.Join(refJobs[0].Dir, f))
			if f == rundir.MetricsFile {
				a, b = dropColumn(a, 1), dropColumn(b, 1)
			}
			if a != b {
				t.Errorf("%v: %s differs from the uninterrupted run's", sig, f)
			}
		}
	}
}

func readResultFile(t *testing.T, dir string) rundir.Result {
	t.Helper()
	r, err := rundir.ReadResult(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dropColumn blanks column i of every CSV line (metrics.csv's elapsed time).
func dropColumn(csv string, i int) string {
	lines := strings.Split(csv, "\n")
	for k, l := range lines {
		if f := strings.Split(l, ","); len(f) > i {
			f[i] = ""
			lines[k] = strings.Join(f, ",")
		}
	}
	return strings.Join(lines, "\n")
}

// cpuTime is the user and system CPU time process pid has used so far
// (Linux's /proc/PID/stat); where that cannot be read, the wall clock, so
// that a wait on it still ends.
func cpuTime(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(raw, ')')
	if err != nil || i < 0 {
		return time.Duration(time.Now().UnixNano())
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return time.Duration(time.Now().UnixNano())
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // clock ticks of 1/100 s
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestExperimentListAndCellRange: -list shows every cell's index, directory
// and state; an out-of-range -cell is a one-line error, exit status 2.
func TestExperimentListAndCellRange(t *testing.T) {
	dir := t.TempDir()
	spec := writeSignalGrid(t, dir, "[3, 4]")
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"experiment", "-config", spec, "-out", out, "-list"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := "0\ttrmaml-first-seed3\tnot started\n1\ttrmaml-first-seed4\tnot started\n"
	if stdout.String() != want {
		t.Errorf("-list printed\n%q\nwant\n%q", stdout.String(), want)
	}
	cmd, log := trmaml("experiment", "-config", spec, "-out", out, "-cell", "2")
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || strings.Count(log.String(), "\n") != 1 || !strings.Contains(log.String(), "-cell 2: cell out of range: the grid has 2 cells, 0 to 1") {
		t.Errorf("-cell 2: %v\n%s\nwant exit status 2 and a one-line error", err, log)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused -cell wrote %s", out)
	}
}

// TestSignalMessages: only training says it checkpoints; serve stops with
// status 0 saying so, and other commands are left to the signal's default.
func TestSignalMessages(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]string{
		"train": "checkpointing", "resume": "checkpointing", "experiment": "checkpointing",
		"serve": "stopping the server", "plot": "", "report": "", "status": "", "eval": "", "export": "",
	} {
		if got := interruptMessage(cmd); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: message %q, want one with %q", cmd, got, want)
		}
	}

	cmd, _ := trmaml("serve", "-addr", "127.0.0.1:0", t.TempDir())
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log // read while the process writes
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(log.String(), "serving"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", log)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil || strings.Contains(log.String(), "checkpoint") || !strings.Contains(log.String(), "stopping the server") {
		t.Errorf("serve after SIGINT: %v\n%s", err, log)
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
