package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/trmaml/trmaml/internal/shell"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/slurm"
)

// slurmFlags are experiment's flags for -slurm.
type slurmFlags struct {
	submit, dryRun bool
	cpus, memMiB   int
	time           time.Duration
	maxRunning     int
	sbatch         map[string]string
}

func (f *slurmFlags) add(fs *flag.FlagSet) {
	fs.BoolVar(&f.submit, "slurm", false, "submit the unfinished cells as a Slurm job array, and a report job after it (docs/cluster.md)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "with -slurm: write DIR/slurm/*.sbatch and print the sbatch commands, submitting nothing")
	fs.IntVar(&f.cpus, "cpus", 0, "with -slurm: --cpus-per-task of each cell (default: 2 for Omniglot, 1 for sine)")
	fs.IntVar(&f.memMiB, "mem", 0, "with -slurm: --mem of each cell in `MiB` (default: the config's memory estimate x 1.5)")
	fs.DurationVar(&f.time, "time", 0, "with -slurm: --time of each cell, e.g. 6h (default: measured or estimated time x 1.5 + 10m)")
	fs.IntVar(&f.maxRunning, "max-running", 0, "with -slurm: cells running at once (--array=...%N; default: all)")
	f.sbatch = map[string]string{}
	fs.Func("sbatch", "with -slurm: an sbatch long option `NAME=VALUE` (or NAME) for both jobs, e.g. partition=gpu; repeatable; overrides the experiment file's slurm: section", func(v string) error {
		k, val, _ := strings.Cut(v, "=")
		if err := slurm.CheckOption(k, val); err != nil {
			return err
		}
		f.sbatch[k] = val
		return nil
	})
}

// jobsFile, in DIR/slurm, lists the submitted jobs, one per line: "array
// ID CELLS", "report ID" or "config FILE" (the experiment file submitted),
// for trmaml status and resubmission.
const jobsFile = "jobs.txt"

// submitSlurm writes DIR/slurm/array.sbatch and report.sbatch for the cells
// of grid that are neither finished, nor running, nor queued by an earlier
// submission, and submits them (unless -dry-run).
func submitSlurm(f slurmFlags, spec experiment.Spec, specPath, out string, grid []experiment.Job, opts run.Options, stdout io.Writer) error {
	if f.cpus < 0 || f.memMiB < 0 || f.time < 0 || f.maxRunning < 0 {
		return errors.New("experiment: -cpus, -mem, -time and -max-running must not be negative")
	}
	if f.time > 0 && f.time < time.Minute {
		return fmt.Errorf("experiment -time %v: below one minute, which Slurm's --time would round to 0, no limit: give at least 1m (or leave -time out for the measured or estimated time)", f.time)
	}
	sbatchOpts, err := slurm.Merge(spec.Slurm, f.sbatch)
	if err != nil {
		return fmt.Errorf("experiment -sbatch: %w", err)
	}
	if err := experiment.CheckOut(out, grid); err != nil {
		return err
	}
	if !f.dryRun {
		if _, err := exec.LookPath("sbatch"); err != nil {
			return slurm.ErrNoSbatch
		}
	}
	absSpec, err := filepath.Abs(specPath)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	for _, p := range [][2]string{{"-out", absOut}, {"-config", absSpec}, {"the trmaml binary", exe}} {
		if err := slurm.CheckPath(p[0], p[1]); err != nil {
			return err
		}
	}
	cells, err := experiment.Cells(grid)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, experiment.SchedulerDir)
	queued := queuedCells(dir)
	var todo []int
	// Seconds per iteration of the slowest finished cell of each training
	// graph size: a cell's time is measured when a cell of the same shape
	// (another seed or method of the same setting) has finished.
	measured := map[float64]float64{}
	for _, c := range cells {
		switch {
		case c.State == experiment.Finished:
			if r, err := readResult(c.Job.Dir); err == nil && r.Iterations > 0 {
				shape := c.Job.Config.Memory().TrainGraph
				measured[shape] = max(measured[shape], (r.Timing.TrainSeconds+r.Timing.EvalSeconds)/float64(r.Iterations))
			}
		case c.State == experiment.Running || queued[c.Index]:
		default:
			todo = append(todo, c.Index)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(stdout, "nothing to submit: every cell of %s is finished, running or queued (trmaml status %s)\n", out, shell.Quote(out))
		return nil
	}
	// The array's tasks ask for the most any of its cells needs: the time
	// per iteration measured on a finished cell of the same shape, else
	// estimated from the cell's training arithmetic on the task's CPUs in
	// this build, which the tasks run.
	var res slurm.Resources
	for _, i := range todo {
		c := grid[i].Config
		cpus := slurm.DefaultCPUs(c)
		if f.cpus > 0 {
			cpus = f.cpus
		}
		perIter := measured[c.Memory().TrainGraph]
		if perIter == 0 {
			s, err := run.Build(c, opts)
			if err != nil {
				return err
			}
			perIter = slurm.SecondsPerIteration(c, s.Objective.FLOPs(), cpus, graph.BLASCore() != "")
		}
		r := slurm.Estimate(c, perIter, measured[c.Memory().TrainGraph] > 0)
		res = slurm.Resources{CPUs: max(res.CPUs, cpus), MemMiB: max(res.MemMiB, r.MemMiB), Time: max(res.Time, r.Time)}
	}
	if f.memMiB > 0 {
		res.MemMiB = f.memMiB
	}
	if f.time > 0 {
		res.Time = f.time
	}
	maxRunning := len(todo)
	if f.maxRunning > 0 {
		maxRunning = min(f.maxRunning, len(todo))
	}
	var extra []string
	if opts.DataRoot != "" {
		abs, err := filepath.Abs(opts.DataRoot)
		if err != nil {
			return err
		}
		extra = []string{"-data", abs}
	}
	job := slurm.Job{Name: spec.Name, Trmaml: exe, Config: absSpec, Out: absOut, ExtraArgs: extra, Options: sbatchOpts}
	logs := filepath.Join(absOut, experiment.SchedulerDir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	arrayPath, reportPath := filepath.Join(dir, "array.sbatch"), filepath.Join(dir, "report.sbatch")
	if err := atomicfile.Write(arrayPath, []byte(slurm.ArrayScript(job, todo, maxRunning, res, logs))); err != nil {
		return err
	}
	if err := atomicfile.Write(reportPath, []byte(slurm.ReportScript(job, "", slurm.ReportResources, logs))); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "submitting cells %s (%d of %d): --cpus-per-task=%d --mem=%dM --time=%s each\n",
		slurm.Range(todo), len(todo), len(grid), res.CPUs, res.MemMiB, slurm.FormatTime(res.Time))
	for _, local := range []string{"/tmp/", "/var/tmp/", "/dev/shm/"} {
		if strings.HasPrefix(absOut+"/", local) {
			fmt.Fprintf(stdout, "note: -out %s is under %s, which is usually local to each node: on a cluster, compute nodes may not see it\n", absOut, local)
		}
	}
	if f.dryRun {
		fmt.Fprintf(stdout, "wrote %s and %s; to submit:\n  id=$(sbatch --parsable %s)\n  sbatch --dependency=afterany:\"$id\" %s\n", arrayPath, reportPath, shell.Quote(arrayPath), shell.Quote(reportPath))
		return nil
	}
	arrayID, err := slurm.Submit(arrayPath)
	if err != nil {
		return err
	}
	if err := appendJob(dir, fmt.Sprintf("config %s\narray %s %s", absSpec, arrayID, slurm.Range(todo))); err != nil {
		return err
	}
	if err := atomicfile.Write(reportPath, []byte(slurm.ReportScript(job, arrayID, slurm.ReportResources, logs))); err != nil {
		return err
	}
	reportID, err := slurm.Submit(reportPath)
	if err != nil {
		return fmt.Errorf("the array is job %s, but the report job was not submitted: %w", arrayID, err)
	}
	if err := appendJob(dir, "report "+reportID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "submitted array job %s and report job %s (after it)\n", arrayID, reportID)
	fmt.Fprintf(stdout, "follow: trmaml status %s   squeue -j %s   tail -f %s\n", shell.Quote(out), shell.Quote(arrayID+","+reportID), shell.Quote(logs)+"/cell-I.log")
	fmt.Fprintf(stdout, "the table and figures will be in %s; the same command resubmits cells that did not finish\n", out)
	return nil
}

func readResult(dir string) (rundir.Result, error) {
	var r rundir.Result
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		return r, err
	}
	return r, r.UnmarshalJSON(raw)
}

func appendJob(dir, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, jobsFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	return errors.Join(err, f.Close())
}

// submittedJobs reads DIR/slurm/jobs.txt: the job ids by kind ("array",
// "report").
func submittedJobs(dir string) map[string][]string {
	jobs := map[string][]string{}
	raw, err := os.ReadFile(filepath.Join(dir, jobsFile))
	if err != nil {
		return jobs
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 {
			jobs[f[0]] = append(jobs[f[0]], f[1])
		}
	}
	return jobs
}

// slurmStates are the Slurm states of the submitted jobs of dir (an
// experiment's DIR/slurm): each cell's latest array task (PENDING, RUNNING,
// COMPLETED, CANCELLED, ...) and the latest report job's, "" when unknown.
// A cell submitted again takes the state of its task in the later array.
func slurmStates(dir string) (cells map[int]string, report string) {
	cells = map[int]string{}
	jobs := submittedJobs(dir)
	ids := jobs["array"]
	if r := jobs["report"]; len(r) > 0 {
		report = r[len(r)-1]
		ids = append(slices.Clone(ids), report)
	}
	states := jobStates(ids)
	for _, id := range jobs["array"] {
		for task, state := range states {
			job, index, ok := strings.Cut(task, "_")
			if i, err := strconv.Atoi(index); ok && err == nil && job == id {
				cells[i] = state
			}
		}
	}
	if report != "" {
		report = states[report]
	}
	return cells, report
}

// jobStates asks Slurm for the states of the jobs ids, keyed by job id
// (ID, or ID_I for task I of an array): squeue first, which knows the
// pending and running jobs and, for a while after they end (MinJobAge,
// 5 minutes by default), the ended ones; then sacct, where accounting is
// enabled, for the jobs squeue no longer knows. Without either command the
// states are unknown (empty).
func jobStates(ids []string) map[string]string {
	states := map[string]string{}
	if len(ids) == 0 {
		return states
	}
	known := map[string]bool{}
	if _, err := exec.LookPath("squeue"); err == nil {
		// squeue fails only when it knows none of the ids.
		raw, _ := exec.Command("squeue", "-h", "-r", "-t", "all", "-j", strings.Join(ids, ","), "-o", "%i %T").Output()
		for _, line := range strings.Split(string(raw), "\n") {
			if id, state, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
				states[id] = state
				job, _, _ := strings.Cut(id, "_")
				known[job] = true
			}
		}
	}
	var rest []string
	for _, id := range ids {
		if !known[id] {
			rest = append(rest, id)
		}
	}
	if len(rest) == 0 {
		return states
	}
	if _, err := exec.LookPath("sacct"); err != nil {
		return states
	}
	raw, err := exec.Command("sacct", "-n", "-X", "-P", "-j", strings.Join(rest, ","), "-o", "JobID,State").Output()
	if err != nil {
		return states // accounting disabled, or no such jobs
	}
	for _, line := range strings.Split(string(raw), "\n") {
		id, state, ok := strings.Cut(strings.TrimSpace(line), "|")
		if f := strings.Fields(state); ok && len(f) > 0 && !strings.Contains(id, "[") { // "CANCELLED by 1000"; not "ID_[4-7]"
			states[id] = f[0]
		}
	}
	return states
}

// queuedCells are the cells an earlier submission has pending or running
// in Slurm.
func queuedCells(dir string) map[int]bool {
	q := map[int]bool{}
	cells, _ := slurmStates(dir)
	for i, s := range cells {
		switch s {
		case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING",
			"STAGE_OUT", "RESIZING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED":
			q[i] = true
		}
	}
	return q
}
