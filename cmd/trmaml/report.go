package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/metalearn"
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
	groups, err := loadGroups(paths, unfinished, stderr)
	if err != nil {
		return nil, "", nil, err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return nil, "", nil, err
	}
	// Locked, so that two commands do not write one directory at once,
	// and cleaned of the temporary files of a killed earlier write.
	lock, err := rundir.Open(*out)
	if err != nil {
		return nil, "", nil, err
	}
	return groups, *out, lock.Release, nil
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
	parts := results.SplitByScore(groups)
	for _, part := range parts {
		var t interface {
			Markdown() string
			CSV() string
		}
		var err error
		if part[0].Score.HigherIsBetter {
			t, err = results.NewTrainTestTable(part)
		} else {
			t, err = results.Table(part)
		}
		if err != nil {
			return err
		}
		md, csv := t.Markdown(), t.CSV()
		suffix := ""
		if len(parts) > 1 {
			suffix = "_" + part[0].Score.Name
		}
		mdPath, csvPath := filepath.Join(out, "table"+suffix+".md"), filepath.Join(out, "table"+suffix+".csv")
		if err := atomicfile.Write(mdPath, []byte(md)); err != nil {
			return err
		}
		if err := atomicfile.Write(csvPath, []byte(csv)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\nwritten to %s and %s\n", md, mdPath, csvPath)
		// Per-task values are of the finished runs: unfinished ones
		// have none yet.
		fin := results.FinishedGroups(part)
		if len(fin) == 0 {
			continue
		}
		perTask, err := results.PerTaskMarkdown(fin)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(out, "per_task"+suffix+".md"), []byte(perTask)); err != nil {
			return err
		}
	}
	fin := results.FinishedGroups(groups)
	if len(fin) == 0 {
		return nil
	}
	perTask, perRun := filepath.Join(out, "per_task.csv"), filepath.Join(out, "per_task_seeds.csv")
	if err := atomicfile.Write(perTask, []byte(results.PerTaskCSV(fin))); err != nil {
		return err
	}
	if err := atomicfile.Write(perRun, []byte(results.PerRunCSV(fin))); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "per-task values written to %s (Markdown: per_task.md), each seed's to %s\n", perTask, perRun)
	if moving := results.MovingP(groups); len(moving) > 0 {
		travel, err := results.PTravelMarkdown(moving, results.StepP)
		if err != nil {
			return err
		}
		path := filepath.Join(out, "p_travel.md")
		if err := atomicfile.Write(path, []byte(travel)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "how far p moved from its start in each run: %s\n", path)
	}
	return nil
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
	parts := results.SplitByScore(groups)
	for _, part := range parts {
		prefix := ""
		if len(parts) > 1 {
			prefix = part[0].Score.Name + "_"
		}
		if err := plotPart(part, out, prefix, fig, stdout); err != nil {
			return err
		}
	}
	return nil
}

// plotPart draws the figures of groups of one metric into out, each file
// name starting with prefix.
func plotPart(groups []*results.Group, out, prefix string, fig figureFlags, stdout io.Writer) error {
	written := func(path string, err error) error {
		if err == nil {
			fmt.Fprintf(stdout, "wrote %s\n", path)
		}
		return err
	}
	classification := groups[0].Score.HigherIsBetter

	var settings []results.Key // groups are sorted by setting
	for _, g := range groups {
		if n := len(settings); n == 0 || !settings[n-1].SameSetting(g.Key) {
			settings = append(settings, g.Key)
		}
	}
	for i, k := range settings {
		suffix := ""
		if i > 0 {
			suffix = "_" + settingSlug(k)
		}
		sel := preferSecondOrder(filter(groups, func(g *results.Group) bool { return g.Key.SameSetting(k) }))
		path := fig.file(out, prefix+"figure1"+suffix)
		if err := written(path, plots.Figure1(sel, path, fig.width)); err != nil {
			return err
		}
		if fin := results.FinishedGroups(sel); classification && len(fin) > 0 { // per-task values: finished runs only
			path := fig.file(out, prefix+"adversary"+suffix)
			if err := written(path, plots.Adversary(fin, path)); err != nil {
				return err
			}
		}
	}

	if tr := preferSecondOrder(filter(groups, func(g *results.Group) bool { return g.Key.Algorithm == robustMethod(groups) })); len(tr) > 0 && !classification {
		tasks, _ := tr[0].FinalP()
		path := fig.file(out, prefix+"p_weights")
		if err := written(path, plots.PWeights(tr, results.HardTasks(tasks), path, fig.width)); err != nil {
			return err
		}
	}

	for _, k := range settings {
		atK := filter(groups, func(g *results.Group) bool { return g.Key.SameSetting(k) })
		if slices.ContainsFunc(atK, func(g *results.Group) bool { return g.Key.Order != atK[0].Key.Order }) {
			path := fig.file(out, prefix+"orders")
			return written(path, plots.Orders(atK, path, fig.width))
		}
	}
	return nil
}

// settingSlug names a setting in a file name: "k10", or "20way1shot" for
// classification.
func settingSlug(k results.Key) string {
	if k.Ways > 0 {
		return fmt.Sprintf("%dway%dshot", k.Ways, k.K)
	}
	return fmt.Sprintf("k%d", k.K)
}

// filter returns the groups for which keep is true.
func filter(groups []*results.Group, keep func(*results.Group) bool) []*results.Group {
	var sel []*results.Group
	for _, g := range groups {
		if keep(g) {
			sel = append(sel, g)
		}
	}
	return sel
}

// preferSecondOrder returns the second-order groups, or all groups if none
// is second order.
func preferSecondOrder(groups []*results.Group) []*results.Group {
	if second := filter(groups, func(g *results.Group) bool { return g.Key.Order == "second" }); len(second) > 0 {
		return second
	}
	return groups
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

// robustMethod is the method whose task weights the p_weights figure
// shows: the first registered method among groups that moves p and sweeps
// no setting (TR-MAML among the built-in ones), "" if none.
func robustMethod(groups []*results.Group) string {
	for _, info := range metalearn.Methods() {
		if info.FixedP || info.Swept != "" {
			continue
		}
		if slices.ContainsFunc(groups, func(g *results.Group) bool { return g.Key.Algorithm == info.Name }) {
			return info.Name
		}
	}
	return ""
}
