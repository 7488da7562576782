package results

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/rundir"
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
func (s Set) of(res *rundir.Result) *rundir.Stats {
	if s == MetaTrain {
		return &res.MetaTrain
	}
	return &res.MetaTest
}

// Finals are the set's final mean and worst-task statistics.
func (s Set) Finals() (mean, worst Final) {
	if s == MetaTrain {
		return MetaTrainMean, MetaTrainWorst
	}
	return MetaTestMean, MetaTestWorst
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

// PerRunCSV lists every run's final value on every task of both sets, one
// row per run, set and task, in display units (accuracy in percent): the
// setting, the seed and run directory (its base name), the task's name, its
// training-distribution probability, the value and, on meta-training
// tasks, the run's final task weight p (uniform for MAML). Every statistic
// of the tables can be recomputed from it.
func PerRunCSV(groups []*Group) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"ways", "k", "algorithm", "order", "name", "seed", "run", "metric", "set", "task",
		"sampling_probability", "value", "final_p"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, g := range groups {
		for _, r := range g.Runs {
			for _, set := range []Set{MetaTrain, MetaTest} {
				st := set.of(&r.Result)
				sampling := normalise(st.Masses)
				for i, task := range st.Tasks {
					rec := []string{strconv.Itoa(g.Key.Ways), strconv.Itoa(g.Key.K), g.Key.Algorithm, g.Key.Order, g.Key.Name,
						strconv.FormatUint(r.Config.Seed, 10), filepath.Base(r.Dir), g.Score.Axis(""), set.String(), task,
						f(sampling[i]), f(g.Score.Show(st.PerTask[i])), ""}
					if set == MetaTrain {
						rec[12] = f(r.FinalP()[i])
					}
					w.Write(rec)
				}
			}
		}
	}
	w.Flush()
	return b.String()
}

// PerTaskMarkdown renders every group's final value on every task as
// Markdown tables, one per setting and task set, a caption first: a row
// per task (meta-training tasks in increasing order of mass, as in the
// adversary figure; meta-test tasks by name), the training distribution's
// probability on meta-training tasks, then a column per group (mean over
// seeds ± 95% CI half-width, in display units) and, on meta-training
// tasks, a column per robust group with its final p. The groups of a
// setting must share each set's tasks.
func PerTaskMarkdown(groups []*Group) (string, error) {
	if err := checkTableGroups("PerTaskMarkdown", groups); err != nil {
		return "", err
	}
	m, noun := groups[0].Score, TaskNoun(groups)
	labels := Labels(groups)
	var b strings.Builder
	fmt.Fprintf(&b, "Final %s per %s, the mean over seeds ± the half-width of its 95%% confidence interval "+
		"(Student t; none for a single seed). Meta-training %ss are listed in increasing order of their probability "+
		"under the training distribution, which MAML samples from", m.Axis(""), noun, noun)
	if sp := Sampling(groups); sp.Order != "" {
		fmt.Fprintf(&b, " (%s %s, so %s)", sp.Formula, sp.Terms, sp.Order)
	} else {
		fmt.Fprintf(&b, " (%s %s)", sp.Formula, sp.Terms)
	}
	b.WriteString("; 'final p' is a robust method's final task weight.\n")
	for start := 0; start < len(groups); {
		end := start + 1
		for end < len(groups) && groups[end].Key.SameSetting(groups[start].Key) {
			end++
		}
		part, partLabels := groups[start:end], labels[start:end]
		for _, set := range []Set{MetaTrain, MetaTest} {
			if err := writePerTaskTable(&b, part, partLabels, set, noun); err != nil {
				return "", err
			}
		}
		start = end
	}
	return b.String(), nil
}

// writePerTaskTable writes the per-task table of groups (one setting) on
// set, headed by the setting and set.
func writePerTaskTable(b *strings.Builder, groups []*Group, labels []string, set Set, noun string) error {
	m := groups[0].Score
	tv := groups[0].TaskValues(set)
	values := make([][]Estimate, len(groups))
	var pCols []string
	var ps [][]Estimate
	for gi, g := range groups {
		other := g.TaskValues(set)
		if !slices.Equal(other.Tasks, tv.Tasks) {
			return fmt.Errorf("results: PerTaskMarkdown: %s and %s have different %s tasks", groups[0].Key, g.Key, set)
		}
		values[gi] = other.Values
		if set == MetaTrain && g.Key.MovesP() {
			_, p := g.FinalP()
			pCols, ps = append(pCols, labels[gi]+" final p"), append(ps, p)
		}
	}
	name := map[Set]string{MetaTrain: "meta-training", MetaTest: "meta-test"}[set]
	fmt.Fprintf(b, "\n### %s, %s %ss\n\n", groups[0].Key.Setting(), name, noun)
	head := []string{strings.ToUpper(noun[:1]) + noun[1:]}
	if set == MetaTrain {
		head = append(head, "Sampling probability")
	}
	head = append(head, labels...)
	head = append(head, pCols...)
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---:|", len(head)-1) + "\n")
	order := MassOrder(tv.Tasks, tv.Sampling)
	if set == MetaTest {
		order = MassOrder(tv.Tasks, make([]float64, len(tv.Tasks))) // by name
	}
	for _, i := range order {
		cells := []string{strings.ReplaceAll(tv.Tasks[i], "_", " ")}
		if set == MetaTrain {
			cells = append(cells, strconv.FormatFloat(tv.Sampling[i], 'f', 4, 64))
		}
		for gi := range groups {
			cells = append(cells, formatEstimate(Display(m, values[gi][i])))
		}
		for _, p := range ps {
			cells = append(cells, formatEstimate(p[i]))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return nil
}

// TaskNoun is what a task of groups is called in captions and on axes: the
// noun of their task family for their config (configs.Config.TaskNoun:
// "alphabet" on Omniglot, an image folder's task.imagefolder.noun)
// when every run shares it, "task" otherwise.
// Sampling is how the runs' task family weighs their meta-training tasks
// (configs.Config.Sampling), the general statement if their configs differ.
func Sampling(groups []*Group) configs.Sampling {
	var sp *configs.Sampling
	for _, g := range groups {
		for _, r := range g.Runs {
			s := r.Config.Sampling()
			if sp != nil && s != *sp {
				return configs.Config{}.Sampling()
			}
			sp = &s
		}
	}
	if sp == nil {
		return configs.Config{}.Sampling()
	}
	return *sp
}

func TaskNoun(groups []*Group) string {
	noun := ""
	for _, g := range groups {
		for _, r := range g.Runs {
			n := r.Config.TaskNoun()
			if noun != "" && n != noun {
				return "task"
			}
			noun = n
		}
	}
	if noun == "" {
		return "task"
	}
	return noun
}
