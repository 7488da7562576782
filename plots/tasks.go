package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"

	"github.com/trmaml/trmaml/results"
)

// taskGroups is how many groups of tasks TaskCurves draws a curve for.
const taskGroups = 5

// taskShades colour the groups of tasks from the best (light green) to the
// worst (dark purple): viridis, without its yellow end, which is too pale
// on white.
var taskShades = []color.RGBA{
	{122, 209, 81, 255},
	{34, 168, 132, 255},
	{42, 120, 142, 255},
	{65, 68, 135, 255},
	{68, 1, 84, 255},
}

// TaskCurves draws the curves of groups of tasks over training from the
// runs' tasks.csv into path, for column c: one panel per group (method)
// and task set (meta-training, meta-test; a row per group, a column per
// set), with the mean value of each
// fifth of the tasks, ranked by the first group's final values (so every
// panel shows the same tasks), from the best (light) to the worst (dark),
// and the worst task (dashed, metrics.csv's maximum loss or minimum
// accuracy). Lines are means over seeds. Panels of one task set share
// their value axis. Groups without tasks.csv (runs from before it) are
// left out; an error if none has it.
func TaskCurves(groups []*results.Group, path string, c Column) error {
	var with []*results.Group
	for _, g := range groups {
		if g.HasTasks() {
			with = append(with, g)
		}
	}
	if len(with) == 0 {
		return errors.New("plots: TaskCurves needs runs with tasks.csv")
	}
	m, noun := with[0].Score, results.TaskNoun(with)
	labels := results.Labels(with)
	sets := []struct {
		set   results.Set
		name  string
		worst results.Column
	}{
		{results.MetaTrain, "meta-training", results.TrainWorst},
		{results.MetaTest, "meta-test", results.TestWorst},
	}
	var panels []*plot.Plot
	ymin, ymax := make([]float64, len(sets)), make([]float64, len(sets))
	nGroups := 0
	for gi, g := range with {
		for si, s := range sets {
			title := fmt.Sprintf("(%c) %s: %s %ss", 'a'+rune(len(panels)), labels[gi], s.name, noun)
			p := newPanel(title, iterationLabel, valueLabel(m, noun))
			ref := with[0].TaskGroups(s.set, taskGroups)
			if !slices.Equal(g.TaskNames(s.set), with[0].TaskNames(s.set)) {
				ref = g.TaskGroups(s.set, taskGroups) // another task set: its own ranking
			}
			nGroups = max(nGroups, len(ref))
			for k, tasks := range ref {
				cv := results.DisplayCurve(m, g.TaskCurve(s.set, tasks))
				p.Add(curveLine(cv.Iterations, cv, shade(k, len(ref)), nil))
			}
			w := results.DisplayCurve(m, g.Curve(s.worst))
			p.Add(curveLine(w.Iterations, w, color.RGBA{A: 255}, dashed))
			p.X.Tick.Marker, p.X.Min = iterationTicks{}, 0
			if gi == 0 {
				ymin[si], ymax[si] = p.Y.Min, p.Y.Max
			}
			ymin[si], ymax[si] = math.Min(ymin[si], p.Y.Min), math.Max(ymax[si], p.Y.Max)
			panels = append(panels, p)
		}
	}
	for i, p := range panels {
		p.Y.Min, p.Y.Max = ymin[i%len(sets)], ymax[i%len(sets)]
		valueAxis(p, m)
	}

	legend := []legendItem{{text: fmt.Sprintf("%ss ranked by %s's final value, mean of each group:", noun, labels[0])}}
	for k := range nGroups {
		legend = append(legend, legendItem{groupName(k, nGroups), []plot.Thumbnailer{lineSample(shade(k, nGroups), nil)}})
	}
	legend = append(legend,
		legendItem{worstOver(m) + " over " + noun + "s", []plot.Thumbnailer{lineSample(color.Black, dashed)}},
		legendItem{text: seedsNote(with, labels)})
	w, h, _ := c.layout(len(sets)) // a row per group, a column per task set
	return renderGrid(path, w, h, len(sets), legend, panels)
}

// shade is the colour of the k-th of n groups of tasks, best first.
func shade(k, n int) color.RGBA {
	if n <= 1 {
		return taskShades[len(taskShades)-1]
	}
	return taskShades[k*(len(taskShades)-1)/(n-1)]
}

// groupName names the k-th of n groups of tasks by rank: "best 20%",
// "20-40%", ..., "worst 20%".
func groupName(k, n int) string {
	lo, hi := 100*k/n, 100*(k+1)/n
	switch {
	case n == 1:
		return "all"
	case k == 0:
		return fmt.Sprintf("best %d%%", hi)
	case k == n-1:
		return fmt.Sprintf("worst %d%%", 100-lo)
	}
	return fmt.Sprintf("%d-%d%%", lo, hi)
}

// seedsNote says over which seeds the lines are means: all of each
// group's (or that there is one seed each), or, when some runs have no
// tasks.csv (a run from before it was written), how many of each group's
// runs have one.
func seedsNote(groups []*results.Group, labels []string) string {
	var counts []string
	some := false
	for gi, g := range groups {
		n := 0
		for _, r := range g.Runs {
			if r.Tasks != nil {
				n++
			}
		}
		some = some || n < len(g.Runs)
		counts = append(counts, fmt.Sprintf("%s %d of %d", labels[gi], n, len(g.Runs)))
	}
	switch {
	case !some && !several(groups):
		return "1 seed each"
	case !some:
		return "lines: means over seeds"
	}
	return "lines: means over the seeds with tasks.csv (" + strings.Join(counts, ", ") + ")"
}
