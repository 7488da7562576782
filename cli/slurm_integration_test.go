package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// TestSlurmIntegration runs the quick grid (configs/experiments/quick.yaml
// as it is: 8 cells of 6,000 iterations) on a real Slurm cluster, which
// .ci/run starts with scripts/slurm/start.sh and announces with
// TRMAML_SLURM=1. It submits the grid with -slurm, scancels one array task
// mid-run and sends another SIGUSR1 (as Slurm does before a time limit),
// waits for the array and the report job, submits the same command again,
// which must resubmit exactly the cancelled cell, and checks that the
// table and every run's result.json (timing aside), model.json, p.csv and
// metrics.csv (elapsed time aside) equal a local -jobs 2 run of the same
// grid; that the signalled task checkpointed inside the run, was requeued
// and resumed; and that trmaml status shows the tasks' Slurm states.
func TestSlurmIntegration(t *testing.T) {
	if os.Getenv("TRMAML_SLURM") != "1" {
		t.Skip("needs a running Slurm cluster: .ci/run starts one (scripts/slurm/start.sh) and sets TRMAML_SLURM=1")
	}
	dir := t.TempDir()
	spec, err := filepath.Abs("../configs/experiments/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	phase := func(what string) { t.Logf("%s after %.1f s", what, time.Since(begin).Seconds()) }
	local := filepath.Join(dir, "local")
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"experiment", "-config", spec, "-out", local, "-jobs", "2"}, &stdout, &stderr); err != nil {
		t.Fatalf("local run: %v\n%s", err, stderr.String())
	}

	phase("the local -jobs 2 run ended")
	out := filepath.Join(dir, "cluster")
	submit := func(cells string) string {
		t.Helper()
		cmd, log := trmaml("experiment", "-config", spec, "-out", out, "-slurm")
		if err := cmd.Run(); err != nil {
			t.Fatalf("-slurm: %v\n%s", err, log)
		}
		t.Logf("-slurm:\n%s", log)
		m := regexp.MustCompile(`submitted array job (\d+) and report job (\d+)`).FindStringSubmatch(log.String())
		if m == nil || !strings.Contains(log.String(), "submitting cells "+cells+" ") {
			t.Fatalf("-slurm did not submit cells %s:\n%s", cells, log)
		}
		return m[1] + "," + m[2]
	}
	status := func() string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := dispatch([]string{"status", out}, &stdout, &stderr); err != nil {
			t.Fatalf("status: %v\n%s", err, stderr.String())
		}
		return stdout.String()
	}
	jobs := submit("0-7")
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
	if st := status(); !regexp.MustCompile(`(?m)^  0  maml-second-seed1 +running +\[slurm: RUNNING\]`).MatchString(st) || !strings.Contains(st, "report job "+strings.Split(jobs, ",")[1]+": PENDING") {
		t.Errorf("trmaml status while cell 0 runs:\n%s", st)
	}
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
	phase("the first array and report job ended")
	// The cancelled cell stopped inside its run at a checkpoint, and stays
	// cancelled; every other cell finished.
	cells, err := experiment.Cells(grid)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cells {
		if i == 0 && (c.State != experiment.Interrupted || c.Checkpoint <= 0 || c.Checkpoint >= cfgs[0].Meta.Iterations) {
			t.Errorf("cell 0 after scancel: %s, checkpoint at %d: want interrupted inside the run", c.State, c.Checkpoint)
		} else if i > 0 && c.State != experiment.Finished {
			t.Errorf("cell %d: %s, want finished", i, c.State)
		}
	}
	if st := status(); !regexp.MustCompile(`(?m)^  0  maml-second-seed1 +interrupted +\[slurm: CANCELLED\]`).MatchString(st) || !regexp.MustCompile(`(?m)^  1  maml-second-seed2 +finished +\[slurm: COMPLETED\]`).MatchString(st) {
		t.Errorf("trmaml status after the array:\n%s", st)
	}
	if log := mustRead(t, filepath.Join(out, experiment.SchedulerDir, "logs", "cell-0.log")); !strings.Contains(log, "checkpointed on SIGTERM") {
		t.Errorf("cell 0's log does not say it checkpointed on SIGTERM:\n%s", log)
	}
	again := submit("0")
	wait(t, again)
	phase("the resubmitted cell and its report job ended")
	for i, j := range experiment.Jobs(cfgs, local) {
		a, b := readResultFile(t, grid[i].Dir), readResultFile(t, j.Dir)
		a.Timing, b.Timing = rundir.Timing{}, rundir.Timing{}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("cell %d: result.json differs from the local run's", i)
		}
		for _, f := range []string{rundir.ModelFile, rundir.PFile, rundir.MetricsFile} {
			a, b := mustRead(t, filepath.Join(grid[i].Dir, f)), mustRead(t, filepath.Join(j.Dir, f))
			if f == rundir.MetricsFile {
				a, b = dropColumn(a, 1), dropColumn(b, 1)
			}
			if a != b {
				t.Errorf("cell %d: %s differs from the local run's", i, f)
			}
		}
	}
	for _, f := range []string{"table.md", "table.csv"} {
		if a, b := mustRead(t, filepath.Join(out, f)), mustRead(t, filepath.Join(local, f)); a != b {
			t.Errorf("%s differs from the local run's:\n%s\nlocal:\n%s", f, a, b)
		}
	}
	log := mustRead(t, filepath.Join(out, experiment.SchedulerDir, "logs", "cell-1.log"))
	m := regexp.MustCompile(`interrupted at iteration (\d+), checkpoint written`).FindStringSubmatch(log)
	at := -1
	if m != nil {
		at, _ = strconv.Atoi(m[1])
	}
	if at <= 0 || at >= cfgs[1].Meta.Iterations || !strings.Contains(log, "requeueing") || !strings.Contains(log, "restart 1") {
		t.Errorf("cell 1 was not checkpointed inside its run and requeued after SIGUSR1:\n%s", log)
	}
	if st := status(); !strings.Contains(st, "8 cells: 8 finished") || !strings.Contains(st, "report job "+strings.Split(again, ",")[1]+": COMPLETED") {
		t.Errorf("trmaml status at the end:\n%s", st)
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
