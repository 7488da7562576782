package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/slurm"
)

// statusCmd prints the state of every cell of an experiment directory (or
// of each experiment directory in a folder of them), or of one run directory: finished, running (last evaluated iteration, its
// meta-test values, ETA), interrupted (checkpoint iteration), failed (last
// error line), damaged (the manifest check's refusal, naming the file) or
// not started, with the Slurm state of its array task when
// squeue knows it.
func statusCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("config", "", "the experiment file, to list cells not started too (default: the one -slurm submitted, if any)")
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) != 1 {
		return errors.New("status: give one run or experiment directory")
	}
	if err := noEmptyFlags(fs); err != nil {
		return err
	}
	dir := dirs[0]
	grid, err := experiment.Find(dir, *spec)
	if err != nil {
		if *spec == "" {
			if subs := experimentsIn(dir); len(subs) > 0 {
				return statusOfEach(subs, stdout)
			}
		}
		return fmt.Errorf("status: %w", err)
	}
	return statusOf(dir, grid, stdout)
}

// experimentDir is an experiment directory and the run directories found in it.
type experimentDir struct {
	dir  string
	grid []experiment.Job
}

// experimentsIn lists the directories directly under dir that hold run
// directories of their own: a folder of experiments, as scripts lay them out.
func experimentsIn(dir string) []experimentDir {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var subs []experimentDir
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if grid, err := experiment.Find(sub, ""); err == nil && len(grid) > 0 {
				subs = append(subs, experimentDir{sub, grid})
			}
		}
	}
	return subs
}

// statusOfEach prints the status of each experiment directory under a
// heading naming it.
func statusOfEach(subs []experimentDir, stdout io.Writer) error {
	for i, e := range subs {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s:\n", e.dir)
		if err := statusOf(e.dir, e.grid, stdout); err != nil {
			return err
		}
	}
	return nil
}

// statusOf prints one line per cell of grid, found in dir, and a summary.
func statusOf(dir string, grid []experiment.Job, stdout io.Writer) error {
	cells, err := experiment.Cells(grid)
	if err != nil {
		return err
	}
	schedDir := filepath.Join(dir, experiment.SchedulerDir)
	sched, report := slurm.States(schedDir)
	counts := map[experiment.State]int{}
	for _, c := range cells {
		counts[c.State]++
		line := fmt.Sprintf("%3d  %-28s %-12s", c.Index, c.Name(), c.State)
		if s, ok := sched[c.Index]; ok && len(grid) > 1 {
			line += " [slurm: " + s + "]"
		}
		if d := cellDetail(c); d != "" {
			line += " " + d
		}
		fmt.Fprintln(stdout, strings.TrimRight(line, " "))
	}
	var parts []string
	for _, s := range []experiment.State{experiment.Finished, experiment.Running, experiment.Interrupted, experiment.Failed, experiment.Damaged, experiment.NotDir, experiment.NotStarted} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	fmt.Fprintf(stdout, "%d cells: %s\n", len(cells), strings.Join(parts, ", "))
	if ids := slurm.SubmittedJobs(schedDir)["report"]; len(ids) > 0 && len(grid) > 1 {
		if report == "" {
			report = "state unknown to squeue and sacct"
		}
		fmt.Fprintf(stdout, "report job %s: %s (table and figures in %s)\n", ids[len(ids)-1], report, dir)
	}
	return nil
}

// divergenceNote is the run.DivergenceWarning of c's run as a status
// line's last clause, or "".
func divergenceNote(c experiment.Cell) string {
	if w := run.DivergenceWarning(c.Job.Dir, c.Job.Config); w != "" {
		return "; warning: " + w
	}
	return ""
}

// cellDetail is what a status line says beyond the state.
func cellDetail(c experiment.Cell) string {
	total := c.Job.Config.Meta.Iterations
	switch c.State {
	case experiment.Finished:
		r, err := rundir.ReadResult(filepath.Join(c.Job.Dir, rundir.ResultFile))
		if err != nil {
			return err.Error()
		}
		m := results.ScoreOf(c.Job.Config)
		d := fmt.Sprintf("meta-test %s mean %.4g%s worst %.4g%s, %.1f ms/iteration",
			m.Label, m.Show(r.MetaTest.Mean), m.Unit, m.Show(r.MetaTest.Worst), m.Unit, r.Timing.MsPerIteration)
		if c.Detail != "" {
			d += "; " + c.Detail
		}
		return d + divergenceNote(c)
	case experiment.Running:
		it, elapsed, test, ok := rundir.LastEvaluation(c.Job.Dir)
		if !ok || it == 0 {
			return fmt.Sprintf("before its first evaluation after iteration 0 (of %d)", total)
		}
		eta := time.Duration(elapsed / float64(it) * float64(total-it) * float64(time.Second)).Round(time.Second)
		m := results.ScoreOf(c.Job.Config)
		d := fmt.Sprintf("iteration %d/%d (last evaluation), meta-test %s mean %.4g%s worst %.4g%s, ETA %s",
			it, total, m.Label, m.Show(test[0]), m.Unit, m.Show(test[1]), m.Unit, eta)
		return d + divergenceNote(c)
	case experiment.Interrupted:
		if c.Checkpoint < 0 {
			return "before its first checkpoint: resumes from iteration 0"
		}
		return fmt.Sprintf("checkpoint at iteration %d/%d", c.Checkpoint, total)
	case experiment.Failed, experiment.Damaged, experiment.NotDir:
		return c.Detail
	}
	return ""
}
