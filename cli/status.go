package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/slurm"
)

// statusCmd prints the state of every cell of an experiment directory, or
// of one run directory: finished, running (last evaluated iteration, its
// meta-test values, ETA), interrupted (checkpoint iteration), failed (last
// error line), damaged (the manifest check's refusal, naming the file) or
// not started, with the Slurm state of its array task when
// squeue knows it.
func statusCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("config", "", "the experiment file, to list cells not started too (default: the one -slurm submitted, if any)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("status: give one run or experiment directory")
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("status: %s is not a directory", dir)
	}
	var grid []experiment.Job
	if _, err := os.Stat(filepath.Join(dir, rundir.ConfigFile)); err == nil {
		cfg, err := configs.LoadRecorded(filepath.Join(dir, rundir.ConfigFile))
		if err != nil {
			return err
		}
		grid = []experiment.Job{{Config: cfg, Dir: dir}}
	} else if _, err := os.Stat(filepath.Join(dir, rundir.ManifestFile)); err == nil {
		// A sealed run directory whose config.yaml is gone: the
		// manifest check names it.
		if _, err := rundir.Verify(dir); err != nil {
			return err
		}
		return fmt.Errorf("status: %s: %s is missing", dir, rundir.ConfigFile)
	} else {
		schedDir := filepath.Join(dir, experiment.SchedulerDir)
		path := *spec
		if path == "" {
			if p := slurm.SubmittedJobs(schedDir)["config"]; len(p) > 0 {
				path = p[len(p)-1]
			}
		}
		if path != "" {
			_, cfgs, err := experiment.Expand(path) // no data needed to list cells
			if err != nil {
				return err
			}
			grid = experiment.Jobs(cfgs, dir)
		} else if grid, err = presentRuns(dir); err != nil {
			return err
		}
		if len(grid) == 0 {
			return fmt.Errorf("status: %s holds no run directories (give -config FILE to list the cells of an experiment not started)", dir)
		}
	}
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

// presentRuns are the run directories in dir, in name order, when the grid
// is not known.
func presentRuns(dir string) ([]experiment.Job, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var jobs []experiment.Job
	for _, e := range entries {
		p := filepath.Join(dir, e.Name(), rundir.ConfigFile)
		if !e.IsDir() {
			continue
		}
		cfg, err := configs.LoadRecorded(p)
		if err != nil {
			continue // not a run directory
		}
		jobs = append(jobs, experiment.Job{Config: cfg, Dir: filepath.Join(dir, e.Name())})
	}
	return jobs, nil
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
		return fmt.Sprintf("meta-test mean %.4g worst %.4g (%s), %.1f ms/iteration", r.MetaTest.Mean, r.MetaTest.Worst, r.Metric, r.Timing.MsPerIteration)
	case experiment.Running:
		it, elapsed, test, ok := lastMetrics(c.Job.Dir)
		if !ok || it == 0 {
			return fmt.Sprintf("before its first evaluation after iteration 0 (of %d)", total)
		}
		eta := time.Duration(elapsed / float64(it) * float64(total-it) * float64(time.Second)).Round(time.Second)
		return fmt.Sprintf("iteration %d/%d (last evaluation), meta-test mean %.4g worst %.4g, ETA %s", it, total, test[0], test[1], eta)
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

// lastMetrics reads metrics.csv's last row: iteration, elapsed seconds and
// the meta-test mean and worst.
func lastMetrics(dir string) (it int, elapsed float64, test [2]float64, ok bool) {
	raw, err := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		return 0, 0, test, false
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	f := strings.Split(lines[len(lines)-1], ",")
	if len(lines) < 2 || len(f) < 9 {
		return 0, 0, test, false
	}
	it, err1 := strconv.Atoi(f[0])
	elapsed, err2 := strconv.ParseFloat(f[1], 64)
	mean, err3 := strconv.ParseFloat(f[7], 64)
	worst, err4 := strconv.ParseFloat(f[8], 64)
	return it, elapsed, [2]float64{mean, worst}, errors.Join(err1, err2, err3, err4) == nil
}
