package results

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"slices"
	"strconv"

	"github.com/trmaml/trmaml/run"
)

// Set is one of the two task sets a run is evaluated on.
type Set int

// The task sets of result.json.
const (
	MetaTrain Set = iota // meta_train
	MetaTest             // meta_test
)

// String returns the set's result.json key.
func (s Set) String() string {
	if s == MetaTrain {
		return "meta_train"
	}
	return "meta_test"
}

// of returns the set's statistics in res.
func (s Set) of(res *run.Result) *run.Stats {
	if s == MetaTrain {
		return &res.MetaTrain
	}
	return &res.MetaTest
}

// TaskValues are the final per-task values of one task set, each estimated
// over a group's seeds, in result.json's task order.
type TaskValues struct {
	// Tasks are the task names.
	Tasks []string
	// Sampling is each task's probability under the training distribution:
	// its mass over the sum of masses (C(Z_i, N) / sum_j C(Z_j, N) for
	// Omniglot alphabets; uniform for sinusoids).
	Sampling []float64
	// Values are the per-task values (stored units: accuracy as a fraction).
	Values []Estimate
}

// TaskValues returns the group's final per-task values on set.
func (g *Group) TaskValues(set Set) TaskValues {
	first := set.of(&g.Runs[0].Result)
	tv := TaskValues{Tasks: first.Tasks, Sampling: normalise(first.Masses), Values: make([]Estimate, len(first.Tasks))}
	vals := make([]float64, len(g.Runs))
	for i := range tv.Tasks {
		for j, r := range g.Runs {
			vals[j] = set.of(&r.Result).PerTask[i]
		}
		tv.Values[i] = Summarize(vals)
	}
	return tv
}

// normalise returns m divided by its sum.
func normalise(m []float64) []float64 {
	total := 0.0
	for _, w := range m {
		total += w
	}
	p := make([]float64, len(m))
	for i, w := range m {
		p[i] = w / total
	}
	return p
}

// MassOrder returns the indices of tasks in increasing order of mass (for
// Omniglot alphabets, of their number of characters Z_i), ties broken by
// name: the order of the adversary figure.
func MassOrder(tasks []string, masses []float64) []int {
	idx := make([]int, len(tasks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(masses[a], masses[b]), cmp.Compare(tasks[a], tasks[b]))
	})
	return idx
}

// PerTaskCSV lists every group's final value on every task of both sets,
// one row per group, set and task, in display units (accuracy in percent):
// the setting, the task's name, its training-distribution probability, the
// mean over seeds and its 95% CI half-width, and on meta-training tasks
// the final task weight p (mean over seeds; uniform for MAML).
func PerTaskCSV(groups []*Group) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"ways", "k", "algorithm", "order", "name", "seeds", "metric", "set", "task",
		"sampling_probability", "value", "value_ci95", "final_p", "final_p_ci95"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, g := range groups {
		for _, set := range []Set{MetaTrain, MetaTest} {
			tv := g.TaskValues(set)
			var p []Estimate
			if set == MetaTrain {
				_, p = g.FinalP()
			}
			for i, task := range tv.Tasks {
				v := Display(g.Score, tv.Values[i])
				rec := []string{strconv.Itoa(g.Key.Ways), strconv.Itoa(g.Key.K), g.Key.Algorithm, g.Key.Order, g.Key.Name,
					strconv.Itoa(g.Seeds()), g.Score.Axis(""), set.String(), task, f(tv.Sampling[i]), f(v.Mean), f(v.Half), "", ""}
				if p != nil {
					rec[12], rec[13] = f(p[i].Mean), f(p[i].Half)
				}
				w.Write(rec)
			}
		}
	}
	w.Flush()
	return b.String()
}

// TaskNoun is what a task of groups is called in captions and on axes:
// "alphabet" when every run is on Omniglot (whose tasks are alphabets),
// "task" otherwise.
func TaskNoun(groups []*Group) string {
	for _, g := range groups {
		for _, r := range g.Runs {
			if r.Config.Task.Family != "omniglot" {
				return "task"
			}
		}
	}
	if len(groups) == 0 {
		return "task"
	}
	return "alphabet"
}
