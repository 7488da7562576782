package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/run"
)

// experimentCmd runs, resumes, lists, reports or submits to Slurm the grid
// of an experiment file.
func experimentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("experiment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "experiment YAML file (see configs/experiments/)")
	out := fs.String("out", "", "experiment directory (re-running resumes it)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs trained at once")
	cell := fs.Int("cell", -1, "train or resume only cell `I` of the grid (numbered from 0 in the order -list shows), then exit: what scheduler array tasks run")
	list := fs.Bool("list", false, "list the grid's cells: index, run directory and state (finished, running, interrupted, failed, not started)")
	reportOnly := fs.Bool("report", false, "write only the table and figures of the finished cells, training nothing")
	var sf slurmFlags
	sf.add(fs)
	var fig figureFlags // the figures written after training, or with -report
	fig.add(fs)
	opts := dataFlag(fs)
	opts.Warnings = stderr // the run's warnings, beside its progress
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fig.check(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if *path == "" || *out == "" || fs.NArg() > 0 {
		return errors.New("experiment: give -config FILE and -out DIR")
	}
	if *jobs < 1 {
		return fmt.Errorf("experiment: -jobs must be >= 1, got %d", *jobs)
	}
	modes := 0
	for _, name := range []string{"cell", "list", "report", "slurm"} {
		if isSet(fs, name) {
			modes++
		}
	}
	if modes > 1 {
		return errors.New("experiment: give at most one of -cell, -list, -report and -slurm")
	}
	// -jobs, -format and -width serve training here and the report after
	// it; a mode that does neither refuses them rather than ignore them
	// (-slurm's report job writes the default figures).
	for mode, uses := range map[string][]string{"cell": nil, "list": nil, "report": {"format", "width"}, "slurm": nil} {
		if !isSet(fs, mode) {
			continue
		}
		for _, name := range []string{"jobs", "format", "width"} {
			if isSet(fs, name) && !slices.Contains(uses, name) {
				return fmt.Errorf("experiment: -%s has no effect with -%s", name, mode)
			}
		}
	}
	for _, name := range []string{"dry-run", "cpus", "mem", "time", "max-running", "sbatch"} {
		if isSet(fs, name) && !sf.submit {
			return fmt.Errorf("experiment: -%s goes with -slurm", name)
		}
	}
	if !*list && !*reportOnly && !sf.submit { // only where it trains here
		noteBLAS(stderr)
	}
	opts.Datasets = new(configs.DataCache) // the grid check and the runs load the data once
	load := experiment.Load
	if *list { // listing needs no data
		load = func(path string, _ run.Options) (experiment.Spec, []configs.Config, error) {
			return experiment.Expand(path)
		}
	}
	spec, cfgs, err := load(*path, *opts)
	if err != nil {
		return err
	}
	grid := experiment.Jobs(cfgs, *out)
	switch {
	case sf.submit:
		return experiment.Submit(sf.request(spec, *path, *out, opts.DataRoot), *out, grid, *opts, stdout)
	case *list:
		if err := experiment.CheckOut(*out, grid); err != nil {
			return err
		}
		return listCells(grid, stdout)
	case *reportOnly:
		if err := experiment.CheckOut(*out, grid); err != nil {
			return err
		}
		return experimentReport(grid, *out, fig, stdout, stderr)
	case isSet(fs, "cell"):
		if *cell >= 0 && *cell < len(grid) {
			fmt.Fprintf(stdout, "experiment %s: cell %d of %d, %s\n", *path, *cell, len(grid), grid[*cell].Dir)
		}
		opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
		return experiment.RunCell(ctx, *out, grid, *cell, *opts)
	}
	fmt.Fprintf(stdout, "experiment %s: %d runs, %d at a time, in %s\n", *path, len(grid), *jobs, *out)
	runErr := experiment.Run(ctx, *out, grid, *jobs, stderr, isTerminal(stderr), *opts)
	if experiment.Stopped(runErr) {
		return runErr
	}
	return errors.Join(runErr, experimentReport(grid, *out, fig, stdout, stderr))
}

// experimentReport writes the table and figures (in fig's format and
// width) of the grid's runs that exist into out.
func experimentReport(grid []experiment.Job, out string, fig figureFlags, stdout, stderr io.Writer) error {
	var dirs []string
	for _, j := range grid {
		if _, err := os.Stat(j.Dir); err == nil {
			dirs = append(dirs, j.Dir)
		}
	}
	if len(dirs) == 0 { // openReport would read ./runs instead
		return fmt.Errorf("%s holds no run of this experiment yet: nothing to report (trmaml experiment -list shows the cells)", out)
	}
	groups, release, err := openReport(dirs, out, true, nil, stderr)
	if err != nil {
		return err
	}
	defer release()
	if err := results.WriteReport(groups, out, stdout); err != nil {
		return err
	}
	return plots.WriteReport(groups, out, fig.format, fig.width, stdout)
}

// listCells prints one line per cell: index, run directory, state.
func listCells(grid []experiment.Job, w io.Writer) error {
	cells, err := experiment.Cells(grid)
	if err != nil {
		return err
	}
	for _, c := range cells {
		fmt.Fprintf(w, "%d\t%s\t%s\n", c.Index, c.Name(), c.State)
	}
	return nil
}
