package plots

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results"
)

// WriteReport draws the report's figures of groups into dir in format
// (one of Formats), laid out for width, noting on log each file it writes:
// figure1 (Figure 1 at the first setting, second order when there is one;
// figure1_kN or figure1_NwayKshot for every other setting), for MSE runs
// p_weights (if there is a run of a robust method, and it has finished or
// has hard tasks whose weight to follow), for accuracy runs
// adversary per setting (training distribution, final p and per-task
// accuracy by task name), and orders (if some setting has runs of both
// orders). With runs of several metrics each file name starts with the
// metric's name (mse_figure1.png, accuracy_figure1.png, ...). Runs with
// tasks.csv add tasks (tasks_kN, ...) per setting: the curves of groups of
// tasks over training (TaskCurves).
func WriteReport(groups []*results.Group, dir, format string, width Column, log io.Writer) error {
	parts := results.SplitByScore(groups)
	for _, part := range parts {
		prefix := ""
		if len(parts) > 1 {
			prefix = part[0].Score.Name + "_"
		}
		file := func(name string) string { return filepath.Join(dir, prefix+name+"."+format) }
		if err := reportPart(part, file, width, log); err != nil {
			return err
		}
	}
	return nil
}

// reportPart draws the figures of groups of one metric, figure name going
// to the file file(name).
func reportPart(groups []*results.Group, file func(name string) string, width Column, log io.Writer) error {
	written := func(path string, err error) error {
		if err == nil {
			fmt.Fprintf(log, "wrote %s\n", path)
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
		path := file("figure1" + suffix)
		if err := written(path, Figure1(sel, path, width)); err != nil {
			return err
		}
		if slices.ContainsFunc(sel, (*results.Group).HasTasks) {
			path := file("tasks" + suffix)
			if err := written(path, TaskCurves(sel, path, width)); err != nil {
				return err
			}
		}
		if fin := results.FinishedGroups(sel); classification && len(fin) > 0 { // per-task values: finished runs only
			path := file("adversary" + suffix)
			if err := written(path, Adversary(fin, path, width)); err != nil {
				return err
			}
		}
	}

	if tr := preferSecondOrder(filter(groups, func(g *results.Group) bool { return g.Key.Algorithm == robustMethod(groups) })); len(tr) > 0 && !classification {
		tasks, _ := tr[0].FinalP()
		path := file("p_weights")
		// Nothing to draw before a run finishes, when no task is hard: no figure.
		if err := PWeights(tr, results.HardTasks(tasks), path, width); !errors.Is(err, errNoPWeights) {
			if err := written(path, err); err != nil {
				return err
			}
		}
	}

	for _, k := range settings {
		atK := filter(groups, func(g *results.Group) bool { return g.Key.SameSetting(k) })
		if slices.ContainsFunc(atK, func(g *results.Group) bool { return g.Key.Order != atK[0].Key.Order }) {
			path := file("orders")
			return written(path, Orders(atK, path, width))
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
