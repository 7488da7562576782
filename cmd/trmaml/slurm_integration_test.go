package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// TestSlurmIntegration runs the quick grid (configs/experiments/quick.yaml,
// cut to 2,000 iterations to keep the test to a few minutes) on a real
// Slurm cluster, which .ci/run starts with scripts/slurm/start.sh and
// announces with TRMAML_SLURM=1. It submits the grid with -slurm, scancels
// one array task mid-run and sends another SIGUSR1 (as Slurm does before a
// time limit), waits for the array and the report job, submits the same
// command again for what did not finish, and checks that the table and
// every run's result.json (timing aside) equal a local -jobs 2 run of the
// same grid, and that the signalled task checkpointed, was requeued and
// resumed.
func TestSlurmIntegration(t *testing.T) {
	if os.Getenv("TRMAML_SLURM") != "1" {
		t.Skip("needs a running Slurm cluster: .ci/run starts one (scripts/slurm/start.sh) and sets TRMAML_SLURM=1")
	}
	dir := t.TempDir()
	quick, err := os.ReadFile("../../configs/experiments/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "quick.yaml")
	body := strings.Replace(strings.Replace(string(quick), "iterations: 6000", "iterations: 2000", 1), "base: ../sine_quick.yaml", "base: sine_quick", 1)
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "local")
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"experiment", "-config", spec, "-out", local, "-jobs", "2"}, &stdout, &stderr); err != nil {
		t.Fatalf("local run: %v\n%s", err, stderr.String())
	}

	out := filepath.Join(dir, "cluster")
	submit := func() string {
		t.Helper()
		cmd, log := trmaml("experiment", "-config", spec, "-out", out, "-slurm")
		if err := cmd.Run(); err != nil {
			t.Fatalf("-slurm: %v\n%s", err, log)
		}
		t.Logf("-slurm:\n%s", log)
		m := regexp.MustCompile(`submitted array job (\d+) and report job (\d+)`).FindStringSubmatch(log.String())
		if m == nil {
			return ""
		}
		return m[1] + "," + m[2]
	}
	jobs := submit()
	if jobs == "" {
		t.Fatal("nothing submitted")
	}
	array := strings.Split(jobs, ",")[0]
	_, cfgs, err := experiment.Load(spec, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	grid := experiment.Jobs(cfgs, out)
	started := func(i int) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !fileExists(filepath.Join(grid[i].Dir, rundir.CheckpointFile)) {
			if time.Now().After(deadline) {
				t.Fatalf("cell %d did not start", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // into training, well before its end
	}
	started(0)
	scontrol(t, "scancel", array+"_0")
	started(1)
	// scancel delivers the signal at once but then keeps retrying (for
	// about a minute, failing with "Job can not be altered now") while the
	// task requeues itself: it runs in the background until then.
	signal := exec.Command("scancel", "--batch", "--signal=USR1", array+"_1")
	if err := signal.Start(); err != nil {
		t.Fatal(err)
	}
	startNow(t, array+"_1")
	signal.Process.Kill()
	signal.Wait()
	wait(t, jobs)
	if again := submit(); again != "" {
		wait(t, again)
	}
	for i, j := range experiment.Jobs(cfgs, local) {
		a, b := readResultFile(t, grid[i].Dir), readResultFile(t, j.Dir)
		a.Timing, b.Timing = rundir.Timing{}, rundir.Timing{}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("cell %d: result.json differs from the local run's", i)
		}
	}
	for _, f := range []string{"table.md", "table.csv"} {
		if a, b := mustRead(t, filepath.Join(out, f)), mustRead(t, filepath.Join(local, f)); a != b {
			t.Errorf("%s differs from the local run's:\n%s\nlocal:\n%s", f, a, b)
		}
	}
	log := mustRead(t, filepath.Join(out, experiment.SchedulerDir, "logs", "cell-1.log"))
	if !regexp.MustCompile(`interrupted at iteration \d+, checkpoint written`).MatchString(log) || !strings.Contains(log, "requeueing") || !strings.Contains(log, "restart 1") {
		t.Errorf("cell 1 was not checkpointed and requeued after SIGUSR1:\n%s", log)
	}
}

// scontrol runs a Slurm command, failing the test with its output.
func scontrol(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// startNow makes the requeued task eligible at once: Slurm delays a
// requeued job's start (by two minutes here), which only lengthens the
// test.
func startNow(t *testing.T, task string) {
	t.Helper()
	for range 300 {
		out, _ := exec.Command("squeue", "-h", "-j", task, "-o", "%T %r").Output()
		if strings.HasPrefix(string(out), "PENDING BeginTime") {
			scontrol(t, "scontrol", "update", "JobId="+task, "StartTime=now")
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s was not seen pending after its requeue", task)
}

// wait polls squeue until none of the jobs (comma-separated ids) is queued
// or running.
func wait(t *testing.T, jobs string) {
	t.Helper()
	deadline := time.Now().Add(8 * time.Minute)
	for time.Now().Before(deadline) {
		out, err := exec.Command("squeue", "-h", "-j", jobs).Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("jobs %s still queued after 8 minutes", jobs)
}
