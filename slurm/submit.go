package slurm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/shell"
	"github.com/trmaml/trmaml/rundir"
)

// Request is a submission of an experiment's grid: the choices of trmaml
// experiment -slurm (zero for the measured or estimated defaults) and what
// the grid is.
type Request struct {
	CPUs, MemMiB int           // --cpus-per-task, --mem in MiB of each cell
	Time         time.Duration // --time of each cell
	MaxRunning   int           // cells running at once
	DryRun       bool          // write the scripts, submit nothing
	Sbatch       Options       // sbatch options of the flags, over File's

	Name   string  // the experiment's name, the jobs' name
	File   Options // the experiment file's slurm: section
	Spec   string  // the experiment file
	Out    string  // the experiment directory
	Data   string  // the data root given to the cells ("" for the default)
	Cells  []Cell  // the grid's cells, in order
	Engine Engine  // how a cell's time is estimated when none is measured
}

// Cell is one cell of a grid as submission sees it.
type Cell struct {
	Index             int
	Config            configs.Config
	Dir               string // its run directory
	Finished, Running bool
}

// Engine estimates a cell's time: FLOPs is the arithmetic of one training
// iteration of a config, FastBuild whether this build uses a BLAS.
type Engine struct {
	FLOPs     func(configs.Config) (float64, error)
	FastBuild bool
}

// SchedulerDir, in an experiment directory, holds the scripts, logs and
// JobsFile of its submissions.
const SchedulerDir = "slurm"

// JobsFile, in DIR/slurm, lists the submitted jobs, one per line: "array
// ID CELLS", "report ID" or "config FILE" (the experiment file submitted),
// for trmaml status and resubmission.
const JobsFile = "jobs.txt"

// Check refuses negative or too short limits before anything is read.
func (r Request) Check() error {
	if r.CPUs < 0 || r.MemMiB < 0 || r.Time < 0 || r.MaxRunning < 0 {
		return errors.New("experiment: -cpus, -mem, -time and -max-running must not be negative")
	}
	if r.Time > 0 && r.Time < time.Minute {
		return fmt.Errorf("experiment -time %v: below one minute, which Slurm's --time would round to 0, no limit: give at least 1m (or leave -time out for the measured or estimated time)", r.Time)
	}
	return nil
}

// SubmitGrid writes DIR/slurm/array.sbatch and report.sbatch for the cells
// of the grid that are neither finished, nor running, nor queued by an
// earlier submission, and submits them (unless DryRun), printing what it
// does on stdout.
func SubmitGrid(r Request, stdout io.Writer) error {
	if err := r.Check(); err != nil {
		return err
	}
	sbatchOpts, err := Merge(r.File, r.Sbatch)
	if err != nil {
		return fmt.Errorf("experiment -sbatch: %w", err)
	}
	if !r.DryRun {
		if _, err := exec.LookPath("sbatch"); err != nil {
			return ErrNoSbatch
		}
	}
	absSpec, err := filepath.Abs(r.Spec)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(r.Out)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	for _, p := range [][2]string{{"-out", absOut}, {"-config", absSpec}, {"the trmaml binary", exe}} {
		if err := CheckPath(p[0], p[1]); err != nil {
			return err
		}
	}
	dir := filepath.Join(r.Out, SchedulerDir)
	queued := QueuedCells(dir)
	var todo []int
	// Seconds per iteration of the slowest finished cell of each training
	// graph size: a cell's time is measured when a cell of the same shape
	// (another seed or method of the same setting) has finished.
	measured := map[float64]float64{}
	for _, c := range r.Cells {
		switch {
		case c.Finished:
			if res, err := rundir.ReadResult(filepath.Join(c.Dir, rundir.ResultFile)); err == nil && res.Iterations > 0 {
				shape := c.Config.Memory().TrainGraph
				measured[shape] = max(measured[shape], (res.Timing.TrainSeconds+res.Timing.EvalSeconds)/float64(res.Iterations))
			}
		case c.Running || queued[c.Index]:
		default:
			todo = append(todo, c.Index)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(stdout, "nothing to submit: every cell of %s is finished, running or queued (trmaml status %s)\n", r.Out, shell.Quote(r.Out))
		return nil
	}
	// The array's tasks ask for the most any of its cells needs: the time
	// per iteration measured on a finished cell of the same shape, else
	// estimated from the cell's training arithmetic on the task's CPUs in
	// this build, which the tasks run.
	var res Resources
	for _, i := range todo {
		c := r.Cells[i].Config
		cpus := DefaultCPUs(c)
		if r.CPUs > 0 {
			cpus = r.CPUs
		}
		perIter := measured[c.Memory().TrainGraph]
		if perIter == 0 {
			flops, err := r.Engine.FLOPs(c)
			if err != nil {
				return err
			}
			perIter = SecondsPerIteration(c, flops, cpus, r.Engine.FastBuild)
		}
		data := 0.0
		if r.MemMiB == 0 {
			if data, err = DataBytes(c, r.Data); err != nil {
				return fmt.Errorf("cell %d: sizing its data for --mem: %w (or give -mem)", i, err)
			}
		}
		e := Estimate(c, data, perIter, measured[c.Memory().TrainGraph] > 0)
		res = Resources{CPUs: max(res.CPUs, cpus), MemMiB: max(res.MemMiB, e.MemMiB), Time: max(res.Time, e.Time)}
	}
	if r.MemMiB > 0 {
		res.MemMiB = r.MemMiB
	}
	if r.Time > 0 {
		res.Time = r.Time
	}
	maxRunning := len(todo)
	if r.MaxRunning > 0 {
		maxRunning = min(r.MaxRunning, len(todo))
	}
	var extra []string
	if r.Data != "" {
		abs, err := filepath.Abs(r.Data)
		if err != nil {
			return err
		}
		extra = []string{"-data", abs}
	}
	job := Job{Name: r.Name, Trmaml: exe, Config: absSpec, Out: absOut, ExtraArgs: extra, Options: sbatchOpts}
	logs := filepath.Join(absOut, SchedulerDir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	arrayPath, reportPath := filepath.Join(dir, "array.sbatch"), filepath.Join(dir, "report.sbatch")
	if err := atomicfile.Write(arrayPath, []byte(ArrayScript(job, todo, maxRunning, res, logs))); err != nil {
		return err
	}
	if err := atomicfile.Write(reportPath, []byte(ReportScript(job, "", ReportResources, logs))); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "submitting cells %s (%d of %d): --cpus-per-task=%d --mem=%dM --time=%s each\n",
		Range(todo), len(todo), len(r.Cells), res.CPUs, res.MemMiB, FormatTime(res.Time))
	for _, local := range []string{"/tmp/", "/var/tmp/", "/dev/shm/"} {
		if strings.HasPrefix(absOut+"/", local) {
			fmt.Fprintf(stdout, "note: -out %s is under %s, which is usually local to each node: on a cluster, compute nodes may not see it\n", absOut, local)
		}
	}
	if r.DryRun {
		fmt.Fprintf(stdout, "wrote %s and %s; to submit:\n  id=$(sbatch --parsable %s)\n  sbatch --dependency=afterany:\"$id\" %s\n", arrayPath, reportPath, shell.Quote(arrayPath), shell.Quote(reportPath))
		return nil
	}
	arrayID, err := Submit(arrayPath)
	if err != nil {
		return err
	}
	if err := appendJob(dir, fmt.Sprintf("config %s\narray %s %s", absSpec, arrayID, Range(todo))); err != nil {
		return err
	}
	if err := atomicfile.Write(reportPath, []byte(ReportScript(job, arrayID, ReportResources, logs))); err != nil {
		return err
	}
	reportID, err := Submit(reportPath)
	if err != nil {
		return fmt.Errorf("the array is job %s, but the report job was not submitted: %w", arrayID, err)
	}
	if err := appendJob(dir, "report "+reportID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "submitted array job %s and report job %s (after it)\n", arrayID, reportID)
	fmt.Fprintf(stdout, "follow: trmaml status %s   squeue -j %s   tail -f %s\n", shell.Quote(r.Out), shell.Quote(arrayID+","+reportID), shell.Quote(logs)+"/cell-I.log")
	fmt.Fprintf(stdout, "the table and figures will be in %s; the same command resubmits cells that did not finish\n", r.Out)
	return nil
}
