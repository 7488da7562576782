package results

import (
	"strconv"
	"strings"
)

// This file is the one place outside data/ that reads sinusoid task names
// ("amplitude [lo,hi)"): the amplitude axis and the hard tasks of the
// sinusoid figures. Tasks of other families have other names, so that every
// function here falls back to a neutral answer for them.

// HardAmplitude is the lower amplitude bound of the paper's hard sinusoid
// meta-training tasks ([4.95, 5]).
const HardAmplitude = 4.95

// AmplitudeLow parses the lower amplitude bound of a sinusoid task name
// such as "amplitude [4.95,4.96)"; ok is false for other names.
func AmplitudeLow(task string) (lo float64, ok bool) {
	rest, ok := strings.CutPrefix(task, "amplitude [")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ",")
	if !ok {
		return 0, false
	}
	lo, err := strconv.ParseFloat(num, 64)
	return lo, err == nil
}

// HardTasks returns the paper's hard sinusoid tasks among tasks (lower
// amplitude bound >= HardAmplitude), in order; none for other families.
func HardTasks(tasks []string) []string { return TasksWithAmplitudeAtLeast(tasks, HardAmplitude) }

// TasksWithAmplitudeAtLeast returns the sinusoid tasks whose lower
// amplitude bound is at least min, in order; with min = HardAmplitude, the
// paper's hard tasks.
func TasksWithAmplitudeAtLeast(tasks []string, min float64) []string {
	var sel []string
	for _, t := range tasks {
		if lo, ok := AmplitudeLow(t); ok && lo >= min {
			sel = append(sel, t)
		}
	}
	return sel
}

// TaskAxis is a numeric coordinate of a family's tasks for plotting.
type TaskAxis struct {
	// Name names the coordinate: "amplitude".
	Name string
	// Positions are the tasks' coordinates (their lower amplitude bounds).
	Positions []float64
	// Hard describes the tasks HardTasks selects: "amplitude ≥ 4.95".
	Hard string
}

// TaskAxisOf returns the numeric axis of tasks: their lower amplitude
// bounds if every name is a sinusoid amplitude interval; ok is false for
// tasks of other families, which have none.
func TaskAxisOf(tasks []string) (axis TaskAxis, ok bool) {
	x := make([]float64, len(tasks))
	for i, t := range tasks {
		if x[i], ok = AmplitudeLow(t); !ok {
			return TaskAxis{}, false
		}
	}
	return TaskAxis{Name: "amplitude", Positions: x, Hard: "amplitude ≥ " + strconv.FormatFloat(HardAmplitude, 'g', -1, 64)}, true
}
