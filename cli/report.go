package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/rundir"
)

// dirList is a repeatable directory flag.
type dirList []string

func (d *dirList) String() string { return strings.Join(*d, " ") }

func (d *dirList) Set(s string) error {
	*d = append(*d, s)
	return nil
}

// parseRunArgs parses the flags of a results command, which may come
// before, between or after the directory arguments: "-runs A B -out X"
// gives the directories A and B. It returns the -runs values followed by
// the positional arguments.
func parseRunArgs(fs *flag.FlagSet, runs *dirList, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...) // everything after "--" is a directory
			break
		}
		if len(rest) == 0 {
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	return append(slices.Clone(*runs), pos...), nil
}

// loadGroups loads and groups the runs found under paths (the runs
// directory if there are none): the finished ones and, with unfinished,
// the running or interrupted ones that have an evaluation, noting on
// stderr each unfinished run it includes or skips.
func loadGroups(paths []string, unfinished bool, stderr io.Writer) ([]*results.Group, error) {
	if len(paths) == 0 {
		paths = []string{"runs"}
	}
	dirs, partial, err := results.Discover(paths)
	if err != nil {
		return nil, err
	}
	runs, err := results.LoadAll(dirs)
	if err != nil {
		return nil, err
	}
	for _, d := range partial {
		if !unfinished {
			fmt.Fprintf(stderr, "skipping %s: no result.json (unfinished run)\n", d)
			continue
		}
		r, err := results.LoadUnfinished(d)
		if err != nil {
			fmt.Fprintf(stderr, "skipping %s: %v\n", d, err)
			continue
		}
		fmt.Fprintf(stderr, "including %s, unfinished: to its last evaluation, iteration %d of %d\n", d, r.LastIteration(), r.Config.Meta.Iterations)
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		what := "finished run directories (with result.json)"
		if unfinished {
			what = "run directories with an evaluation"
		}
		return nil, fmt.Errorf("no %s in %s", what, strings.Join(paths, " "))
	}
	return results.GroupRuns(runs)
}

// figureFlags are the -format and -width flags of the commands that
// draw figures (-width only where the figures have a layout for each).
type figureFlags struct {
	format     string
	width      plots.Column
	fixedWidth bool
}

func (f *figureFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "png", "figure file `FORMAT`: "+strings.Join(plots.Formats, ", "))
	if f.fixedWidth {
		return
	}
	fs.Func("width", "lay figures out for `WIDTH`: double (a page's text width, 7 in; the default) or single (one column of two, 3.4 in)", func(v string) error {
		var err error
		f.width, err = plots.ParseColumn(v)
		return err
	})
}

func (f *figureFlags) check() error {
	if !slices.Contains(plots.Formats, f.format) {
		return fmt.Errorf("-format %q: want one of %s", f.format, strings.Join(plots.Formats, ", "))
	}
	return nil
}

// file is the path of figure name in out, in the chosen format.
func (f *figureFlags) file(out, name string) string { return filepath.Join(out, name+"."+f.format) }

// groupsAndOut parses the flags shared by report and plot (-runs DIR...,
// positional run directories, a required -out DIR, and with fig, the
// figure flags), loads the runs' groups (with unfinished, the running and
// interrupted runs too, to their last evaluation) and creates the output
// directory.
func groupsAndOut(name, outUsage string, args []string, stderr io.Writer, fig *figureFlags, unfinished bool) ([]*results.Group, string, func(), error) {
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
	groups, release, err := openReport(paths, *out, unfinished, stderr)
	return groups, *out, release, err
}

// openReport loads the groups of the runs under paths as loadGroups does,
// creates the output directory out and locks it, so that two commands do
// not write one directory at once, cleaning it of the temporary files of a
// killed earlier write.
func openReport(paths []string, out string, unfinished bool, stderr io.Writer) ([]*results.Group, func(), error) {
	groups, err := loadGroups(paths, unfinished, stderr)
	if err != nil {
		return nil, nil, err
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
	groups, out, release, err := groupsAndOut("report", "directory for the tables (required)", args, stderr, nil, true)
	if err != nil {
		return err
	}
	defer release()
	return results.WriteReport(groups, out, stdout)
}

// plotCmd is "trmaml plot [-runs DIR]... -out DIR [DIR...]": the report
// figures of the finished runs in the directories (default runs), written to
// -out: figure1.png (Figure 1 at the first setting, second order when there
// is one; figure1_kN.png or figure1_NwayKshot.png for every other setting),
// for MSE runs p_weights.png (if there is a TR-MAML run), for accuracy runs
// adversary.png per setting (training distribution, final p and per-task
// accuracy by task name), and orders.png (if some setting has runs of both
// orders). With runs of several metrics each file name starts with the
// metric's name (mse_figure1.png, accuracy_figure1.png, ...).
func plotCmd(args []string, stdout, stderr io.Writer) error {
	var fig figureFlags
	groups, out, release, err := groupsAndOut("plot", "directory for the figures (required)", args, stderr, &fig, true)
	if err != nil {
		return err
	}
	defer release()
	return plots.WriteReport(groups, out, fig.format, fig.width, stdout)
}

// compareCmd is "trmaml compare [-runs] A B": the final statistics and cost
// of two run directories side by side, with the difference B - A, in the
// runs' metric (which must be the same).
func compareCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var runs dirList
	fs.Var(&runs, "runs", "run directory (give two, as -runs A B or A B)")
	dirs, err := parseRunArgs(fs, &runs, args)
	if err != nil {
		return err
	}
	if len(dirs) != 2 {
		return fmt.Errorf("compare: give exactly two run directories, got %d", len(dirs))
	}
	a, err := results.Load(dirs[0])
	if err != nil {
		return err
	}
	b, err := results.Load(dirs[1])
	if err != nil {
		return err
	}
	if a.Score != b.Score {
		return fmt.Errorf("compare: %s measures %s but %s measures %s", a.Dir, a.Score.Label, b.Dir, b.Score.Label)
	}
	describe := func(r *results.Run) string {
		k := results.KeyOf(r)
		return fmt.Sprintf("%s %s-order %s seed %d", results.AlgorithmName(k.Algorithm), k.Order, k.Shots(), r.Config.Seed)
	}
	rows := [][4]string{
		{"", "A", "B", "B - A"},
		{"run", filepath.Base(a.Dir), filepath.Base(b.Dir), ""},
		{"setting", describe(a), describe(b), ""},
		{"iterations", fmt.Sprint(a.Result.Iterations), fmt.Sprint(b.Result.Iterations), ""},
		{"metric", a.Score.Axis(""), b.Score.Axis(""), ""},
	}
	for _, row := range []struct {
		name string
		stat results.Final
	}{
		{"meta-test mean", results.MetaTestMean},
		{"meta-test worst", results.MetaTestWorst},
		{"meta-test std", results.MetaTestStd},
		{"meta-train mean", results.MetaTrainMean},
		{"meta-train weighted mean", results.MetaTrainWeightedMean},
		{"meta-train worst", results.MetaTrainWorst},
		{"meta-train std", results.MetaTrainStd},
		{"ms per iteration", results.MsPerIteration},
	} {
		va, vb := row.stat.Value(&a.Result), row.stat.Value(&b.Result)
		if row.stat != results.MsPerIteration {
			va, vb = a.Score.Show(va), b.Score.Show(vb)
		}
		rows = append(rows, [4]string{row.name, fmt.Sprintf("%.4f", va), fmt.Sprintf("%.4f", vb), fmt.Sprintf("%+.4f", vb-va)})
	}
	rows = append(rows, [4]string{"meta-test worst task", a.Result.MetaTest.WorstTask, b.Result.MetaTest.WorstTask, ""})
	// Names left-aligned (padded to one width), values right-aligned.
	nameWidth := 0
	for _, r := range rows {
		nameWidth = max(nameWidth, len(r[0]))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t\n", nameWidth, r[0], r[1], r[2], r[3])
	}
	return tw.Flush()
}
