package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/slurm"
)

// fakeSbatch makes PATH an sbatch script with the given body and nothing
// else: no real sbatch, squeue or sacct of the machine is called.
func fakeSbatch(t *testing.T, body string) {
	t.Helper()
	fakeCommands(t, map[string]string{"sbatch": body})
}

// fakeCommands makes PATH a directory of shell scripts, name to body, and
// nothing else.
func fakeCommands(t *testing.T, bodies map[string]string) {
	t.Helper()
	bin := t.TempDir()
	for name, body := range bodies {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
}

// TestSlurmSubmitRefusals: -slurm without sbatch, with a refusing sbatch
// (its message shown), with a bad -sbatch option, with a flag that needs
// -slurm, and into a directory of another spec is a one-line error that
// leaves the scripts whole or unwritten; after the fix the same command
// submits, and only the cells not finished.
func TestSlurmSubmitRefusals(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "exp.yaml")
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte("name: small\nmodel: {kind: mlp, mlp: {hidden: [8]}}\nmeta: {iterations: 20, batch: 10}\neval: {every: 10, instances: 490, train_instances: 100, batch: 245, query: 5}\n"), 0o644)
	os.WriteFile(spec, []byte("name: s\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [first]\nseeds: [1, 2]\nslurm: {partition: cpu}\n"), 0o644)
	out := filepath.Join(dir, "out")
	submit := func(extra ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := dispatch(append([]string{"experiment", "-config", spec, "-out", out, "-slurm"}, extra...), &stdout, &stderr)
		return stdout.String(), err
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := submit(); !errors.Is(err, slurm.ErrNoSbatch) {
		t.Errorf("no sbatch: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-slurm without sbatch wrote %s", out)
	}
	if stdout, err := submit("-dry-run"); err != nil || !strings.Contains(stdout, "sbatch --dependency=afterany:\"$id\"") {
		t.Errorf("-dry-run: %v\n%s", err, stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-sbatch", "partiton=gpu"}, `"partiton" is not an sbatch long option`},
		{[]string{"-sbatch", "time=1:00"}, "--time is set by trmaml: use -time"},
		{[]string{"-cpus", "-1"}, "must not be negative"},
		{[]string{"-time", "1ns"}, "-time 1ns: below one minute"},
		{[]string{"-time", "59s"}, "-time 59s: below one minute"},
	} {
		if _, err := submit(c.args...); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want a one-line error with %q", c.args, err, c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"experiment", "-config", spec, "-out", out, "-dry-run"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "-dry-run goes with -slurm") {
		t.Errorf("-dry-run without -slurm: %v", err)
	}

	fakeSbatch(t, "echo 'sbatch: error: Batch job submission failed: Invalid partition name specified' >&2\nexit 1\n")
	_, err := submit()
	if err == nil || !strings.HasSuffix(err.Error(), "refused the job: sbatch: error: Batch job submission failed: Invalid partition name specified") {
		t.Errorf("refusing sbatch: %v", err)
	}
	script := mustRead(t, filepath.Join(out, experiment.SchedulerDir, "array.sbatch"))
	if !strings.Contains(script, "#SBATCH --array=0-3%4\n") || !strings.Contains(script, "#SBATCH --partition=cpu\n") || !strings.HasSuffix(script, "exit \"$status\"\n") {
		t.Errorf("array.sbatch after the refusal:\n%s", script)
	}

	// A finished cell is not submitted again.
	_, cfgs, err := experiment.Load(spec, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := experiment.RunCell(context.Background(), out, experiment.Jobs(cfgs, out), 2, run.Options{}); err != nil {
		t.Fatal(err)
	}
	fakeSbatch(t, "for a; do last=$a; done\ncase $last in *array.sbatch) echo 101;; *) echo 102;; esac\n")
	stdout2, err := submit("-sbatch", "partition=gpu", "-max-running", "2")
	if err != nil || !strings.Contains(stdout2, "submitted array job 101 and report job 102") || !strings.Contains(stdout2, "cells 0-1,3 (3 of 4)") {
		t.Errorf("after the fix: %v\n%s", err, stdout2)
	}
	script = mustRead(t, filepath.Join(out, experiment.SchedulerDir, "array.sbatch"))
	report := mustRead(t, filepath.Join(out, experiment.SchedulerDir, "report.sbatch"))
	if !strings.Contains(script, "#SBATCH --array=0-1,3%2\n") || !strings.Contains(script, "#SBATCH --partition=gpu\n") || !strings.Contains(report, "#SBATCH --dependency=afterany:101\n") {
		t.Errorf("array.sbatch:\n%s\nreport.sbatch:\n%s", script, report)
	}

	// Another spec into the same directory is refused, as locally.
	os.WriteFile(spec, []byte("name: s\nbase: base.yaml\nalgorithms: [maml, trmaml]\norders: [first]\nseeds: [1, 2]\niterations: 30\n"), 0o644)
	if _, err := submit(); err == nil || !strings.Contains(err.Error(), "different config") {
		t.Errorf("another spec: %v", err)
	}
}

// stopBeforeTraining is a context that stops training before its first
// iteration (Err) but no evaluation (its Done is Background's, nil).
type stopBeforeTraining struct{ context.Context }

func (stopBeforeTraining) Err() error { return context.Canceled }

// TestStatus: trmaml status shows each cell's state and details, for an
// experiment directory (with -config, or from the run directories there)
// and for one run directory.
func TestStatus(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "exp.yaml")
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte("name: small\nmodel: {kind: mlp, mlp: {hidden: [8]}}\nmeta: {iterations: 20, batch: 10}\neval: {every: 10, instances: 490, train_instances: 100, batch: 245, query: 5}\n"), 0o644)
	os.WriteFile(spec, []byte("name: s\nbase: base.yaml\nalgorithms: [maml]\norders: [first]\nseeds: [1, 2, 3]\n"), 0o644)
	out := filepath.Join(dir, "out")
	_, cfgs, err := experiment.Load(spec, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	grid := experiment.Jobs(cfgs, out)
	if err := experiment.RunCell(context.Background(), out, grid, 0, run.Options{}); err != nil {
		t.Fatal(err)
	}
	// Stopped before its first iteration, after the evaluation at iteration
	// 0 (its Done is nil: a done context would stop that evaluation, and the
	// run before its first checkpoint).
	experiment.RunCell(stopBeforeTraining{context.Background()}, out, grid, 1, run.Options{})
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"status", "-config", spec, out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	for i, want := range []string{"maml-first-seed1             finished     meta-test MSE mean", "maml-first-seed2             interrupted  checkpoint at iteration 0/20", "maml-first-seed3             not started", "3 cells: 1 finished, 1 interrupted, 1 not started"} {
		if i >= len(lines) || !strings.Contains(lines[i], want) {
			t.Errorf("status line %d: want %q in\n%s", i, want, stdout.String())
		}
	}
	stdout.Reset()
	if err := dispatch([]string{"status", out}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "2 cells: 1 finished, 1 interrupted") {
		t.Errorf("status without -config: %v\n%s", err, stdout.String())
	}
	stdout.Reset()
	if err := dispatch([]string{"status", grid[0].Dir}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "1 cells: 1 finished") {
		t.Errorf("status of a run directory: %v\n%s", err, stdout.String())
	}
}

// TestStatusSlurmStates: trmaml status shows each cell's Slurm state from
// the jobs -slurm recorded, the later array's for a cell submitted twice,
// from squeue (which also lists ended jobs for a while) and, for the jobs
// squeue no longer knows, from sacct; and the report job's. A new -slurm
// leaves out the cells Slurm has queued or running, and resubmits the
// cancelled one.
func TestStatusSlurmStates(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "exp.yaml")
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte("name: small\nmodel: {kind: mlp, mlp: {hidden: [8]}}\nmeta: {iterations: 20, batch: 10}\neval: {every: 10, instances: 490, train_instances: 100, batch: 245, query: 5}\n"), 0o644)
	os.WriteFile(spec, []byte("name: s\nbase: base.yaml\nalgorithms: [maml]\norders: [first]\nseeds: [1, 2, 3, 4, 5]\n"), 0o644)
	out := filepath.Join(dir, "out")
	_, cfgs, err := experiment.Load(spec, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := experiment.RunCell(context.Background(), out, experiment.Jobs(cfgs, out), 2, run.Options{}); err != nil {
		t.Fatal(err)
	}
	sched := filepath.Join(out, experiment.SchedulerDir)
	os.MkdirAll(sched, 0o755)
	// Array 7 ran cells 0-4 and has left squeue; array 9, after it, has
	// cells 0, 1 and 3 (3 is pending again after a requeue).
	os.WriteFile(filepath.Join(sched, slurm.JobsFile), []byte("config "+spec+"\narray 7 0-4\nreport 8\narray 9 0-1,3\nreport 10\n"), 0o644)
	args := filepath.Join(dir, "args")
	fakeCommands(t, map[string]string{
		"squeue": "echo \"squeue $*\" >>" + args + "\necho '9_0 RUNNING'; echo '9_1 PENDING'; echo '9_3 PENDING'; echo '10 PENDING'\n",
		"sacct":  "echo \"sacct $*\" >>" + args + "\necho '7_0|COMPLETED'; echo '7_1|FAILED'; echo '7_2|COMPLETED'; echo '7_3|TIMEOUT'; echo '7_4|CANCELLED by 1000'; echo '8|COMPLETED'\n",
	})
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"status", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"maml-first-seed1             not started  [slurm: RUNNING]",
		"maml-first-seed2             not started  [slurm: PENDING]",
		"maml-first-seed3             finished     [slurm: COMPLETED]",
		"maml-first-seed4             not started  [slurm: PENDING]",
		"maml-first-seed5             not started  [slurm: CANCELLED]",
		"report job 10: PENDING",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("status: want %q in\n%s", want, stdout.String())
		}
	}
	calls := mustRead(t, args)
	if !strings.Contains(calls, "squeue -h -r -t all -j 7,9,10 ") || !strings.Contains(calls, "sacct -n -X -P -j 7 ") {
		t.Errorf("want squeue asked for every job, sacct for those squeue does not know:\n%s", calls)
	}
	// Resubmission: cells 0, 1 and 3 are queued, 2 finished: only 4.
	fakeCommands(t, map[string]string{
		"squeue": "echo '9_0 RUNNING'; echo '9_1 PENDING'; echo '9_3 PENDING'\n",
		"sacct":  "echo '7_4|CANCELLED by 1000'\n",
		"sbatch": "echo 11\n",
	})
	stdout.Reset()
	if err := dispatch([]string{"experiment", "-config", spec, "-out", out, "-slurm"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "submitting cells 4 (1 of 5)") {
		t.Errorf("resubmission: %v\n%s", err, stdout.String())
	}
	// Without squeue and sacct the states are unknown, and said to be.
	fakeCommands(t, nil)
	stdout.Reset()
	if err := dispatch([]string{"status", out}, &stdout, &stderr); err != nil || strings.Contains(stdout.String(), "[slurm:") || !strings.Contains(stdout.String(), "report job 11: state unknown") {
		t.Errorf("status without squeue and sacct: %v\n%s", err, stdout.String())
	}
}

// TestSlurmDryRunQuoted: the commands the dry run prints for a shell are
// quoted: run by sh, an -out with ; and $( ) is passed as one word.
func TestSlurmDryRunQuoted(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "exp.yaml")
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte("name: small\nmodel: {kind: mlp, mlp: {hidden: [8]}}\nmeta: {iterations: 20, batch: 10}\neval: {every: 10, instances: 490, train_instances: 100, batch: 245, query: 5}\n"), 0o644)
	os.WriteFile(spec, []byte("name: s\nbase: base.yaml\nalgorithms: [maml]\norders: [first]\nseeds: [1]\n"), 0o644)
	out := filepath.Join(dir, "sl;$(x)")
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"experiment", "-config", spec, "-out", out, "-slurm", "-dry-run"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	_, cmds, ok := strings.Cut(stdout.String(), "to submit:\n")
	if !ok {
		t.Fatalf("no submit commands in:\n%s", stdout.String())
	}
	// sbatch that prints its argument: the script's path must arrive whole.
	fakeCommands(t, map[string]string{"sbatch": `for a; do last=$a; done; printf '%s\n' "$last" >>"$SBATCH_ARGS"; echo 7`})
	args := filepath.Join(dir, "args")
	sh := exec.Command("/bin/sh", "-c", cmds)
	sh.Env = append(os.Environ(), "SBATCH_ARGS="+args)
	if o, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", cmds, err, o)
	}
	want := filepath.Join(out, "slurm", "array.sbatch") + "\n" + filepath.Join(out, "slurm", "report.sbatch") + "\n"
	if got, _ := os.ReadFile(args); string(got) != want {
		t.Errorf("the printed commands, run by sh, gave sbatch %q, want %q", got, want)
	}
}
