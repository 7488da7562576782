package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/rundir"
)

// groupsAndOut parses the flags shared by report and plot (-runs DIR...,
// positional run directories, a required -out DIR that is no run
// directory, and with fig, the figure flags), loads the runs' groups (with unfinished, the running and
// interrupted runs too, to their last evaluation) and creates the output
// directory; a check that refuses the groups (nil: none) refuses the call
// before anything is written.
func groupsAndOut(name, outUsage string, args []string, stderr io.Writer, fig *figureFlags, unfinished bool, check func([]*results.Group) error) ([]*results.Group, string, func(), error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var runs dirList
	fs.Var(&runs, "runs", "run directory or directory to search for them (repeatable; positional arguments work too)")
	out := fs.String("out", "", outUsage)
	if fig != nil {
		fig.add(fs)
	}
	paths, err := parseRunArgs(fs, &runs, args)
	if err != nil {
		return nil, "", nil, err
	}
	if fig != nil {
		if err := fig.check(); err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if *out == "" {
		return nil, "", nil, fmt.Errorf("%s: -out DIR is required", name)
	}
	if err := outNotRun(name, *out); err != nil {
		return nil, "", nil, err
	}
	groups, release, err := openReport(paths, *out, unfinished, check, stderr)
	return groups, *out, release, err
}

// openReport loads the groups of the runs under paths (results.Gather; the
// runs directory if there are none), creates the output directory out and
// locks it, so that two commands do not write one directory at once,
// cleaning it of the temporary files of a killed earlier write. A check
// (nil: none) that refuses the groups stops it before out is created.
func openReport(paths []string, out string, unfinished bool, check func([]*results.Group) error, stderr io.Writer) ([]*results.Group, func(), error) {
	if len(paths) == 0 {
		paths = []string{"runs"}
	}
	groups, err := results.Gather(paths, unfinished, stderr)
	if err != nil {
		return nil, nil, err
	}
	if check != nil {
		if err := check(groups); err != nil {
			return nil, nil, err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, err
	}
	lock, err := rundir.Open(out)
	if err != nil {
		return nil, nil, err
	}
	return groups, lock.Release, nil
}

// reportCmd is "trmaml report [-runs DIR]... [-out DIR] [DIR...]": the
// paper's results tables over the finished runs in the directories (run
// directories, or directories searched for them; default runs), printed and
// written to -out: table.md and table.csv (Table 1's layout for MSE runs,
// Table 2's meta-training and meta-test layout for accuracy runs; with runs
// of both metrics, table_mse.* and table_accuracy.*), per_task.md and
// per_task.csv, every group's final value on every task with its name
// (mean over seeds with its 95% CI), per_task_seeds.csv, every run's, from
// which every statistic of the tables can be recomputed, and, when a run's
// method moves p, p_travel.md: how far and when p moved from its start.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	groups, out, release, err := groupsAndOut("report", "directory for the tables (required)", args, stderr, nil, true, nil)
	if err != nil {
		return err
	}
	defer release()
	return results.WriteReport(groups, out, stdout)
}
