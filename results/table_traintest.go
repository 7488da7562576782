package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/results/display"
)

// TrainTestTable is the paper's Omniglot table (Table 2) for a set of groups
// of one metric: for each group, statistics across the per-task values of
// the meta-training tasks (weighted mean, mean, worst, standard deviation)
// and of the meta-test tasks (mean, worst, standard deviation), each the
// mean over seeds with its 95% confidence interval.
type TrainTestTable struct {
	// Score is the groups' metric.
	Score display.Score
	// Rows are in the groups' order: by setting, order and algorithm.
	Rows []TrainTestRow
	// TrainTasks and TestTasks are the numbers of tasks of each set, or 0
	// if they differ between rows.
	TrainTasks, TestTasks int
	// ShowOrder is set when the rows have more than one order, ShowName
	// when two rows differ only in their config names (see rowColumns).
	ShowOrder, ShowName bool
	// Noun is what the caption calls a task (TaskNoun: "alphabet" on
	// Omniglot).
	Noun string
	// CVaRAlpha are the levels of the CVaR columns (CVaRLevels), after
	// the others: each level on the meta-training tasks, then each on the
	// meta-test tasks.
	CVaRAlpha []float64
}

// TrainTestRow is one group's line of a TrainTestTable.
type TrainTestRow struct {
	Key   Key
	Seeds int
	// Stats are the columns in table order: meta-training weighted mean,
	// mean, worst, std; meta-test mean, worst, std (stored units).
	Stats [7]Estimate
	// CVaR are CVaR_alpha at the table's levels, over the meta-training
	// tasks, then over the meta-test tasks.
	CVaR []Estimate
	// Unfinished names the group's unfinished runs (Group.UnfinishedNote).
	Unfinished string
}

// trainTestColumns are the statistics of the columns of a TrainTestTable,
// and whether each is a spread (lower is better in any metric).
var trainTestColumns = [7]struct {
	stat   Final
	head   string
	csv    string
	spread bool
}{
	{MetaTrainWeightedMean, "weighted mean", "train_weighted_mean", false},
	{MetaTrainMean, "mean", "train_mean", false},
	{MetaTrainWorst, "worst", "train_worst", false},
	{MetaTrainStd, "std. dev.", "train_std", true},
	{MetaTestMean, "mean", "test_mean", false},
	{MetaTestWorst, "worst", "test_worst", false},
	{MetaTestStd, "std. dev.", "test_std", true},
}

// NewTrainTestTable computes the table of groups, at least one, all of one
// metric (see SplitByScore).
func NewTrainTestTable(groups []*Group) (*TrainTestTable, error) {
	if err := checkTableGroups("NewTrainTestTable", groups); err != nil {
		return nil, err
	}
	t := &TrainTestTable{Score: groups[0].Score, Noun: TaskNoun(groups), CVaRAlpha: CVaRLevels(groups)}
	t.ShowOrder, t.ShowName = rowColumns(groups)
	for i, g := range groups {
		row := TrainTestRow{Key: shownKey(g, groups), Seeds: g.Seeds(), Unfinished: g.UnfinishedNote()}
		for c, col := range trainTestColumns {
			row.Stats[c] = g.Final(col.stat)
		}
		for _, set := range []Set{MetaTrain, MetaTest} {
			for _, a := range t.CVaRAlpha {
				row.CVaR = append(row.CVaR, g.FinalCVaR(set, a))
			}
		}
		t.Rows = append(t.Rows, row)
		res := &g.Runs[0].Result
		if i == 0 {
			t.TrainTasks, t.TestTasks = len(res.MetaTrain.Tasks), len(res.MetaTest.Tasks)
		}
		if len(res.MetaTrain.Tasks) != t.TrainTasks {
			t.TrainTasks = 0
		}
		if len(res.MetaTest.Tasks) != t.TestTasks {
			t.TestTasks = 0
		}
	}
	return t, nil
}

// count describes n tasks (called noun) of a set, or just the set if n is
// 0.
func count(n int, set, noun string) string {
	if n == 0 {
		return "the " + set + " " + noun + "s"
	}
	return fmt.Sprintf("the %d %s %ss", n, set, noun)
}

// Markdown renders the table in the paper's layout, a caption first, in
// the metric's display units. Within each setting with several rows the
// best mean of each column is bold: the highest accuracy (lowest MSE), the
// lowest standard deviation.
func (t *TrainTestTable) Markdown() string {
	var b strings.Builder
	worst := "maximum"
	if t.Score.HigherIsBetter {
		worst = "minimum"
	}
	n := t.Noun
	fmt.Fprintf(&b, "%s %s after meta-training, across %s and across %s: for each %s the average over its "+
		"evaluated instances, then statistics across %ss. 'Weighted mean' weighs the meta-training %ss by the "+
		"meta-training distribution (the quantity MAML optimises), 'Mean' weighs all %ss equally, 'Worst' is the %s "+
		"%s value and 'Std. Dev.' the standard deviation across %ss. Each entry is the mean over seeds ± the "+
		"half-width of its 95%% confidence interval (Student t, n-1 degrees of freedom; none for a single seed).%s\n\n",
		strings.ToUpper(n[:1])+n[1:], t.Score.Axis(""), count(t.TrainTasks, "meta-training", n), count(t.TestTasks, "meta-test", n),
		n, n, n, n, worst, n, n, cvarCaption(t.CVaRAlpha, n))

	numeric := []string{"Seeds"}
	for c, col := range trainTestColumns {
		set := "Meta-train"
		if c >= 4 {
			set = "Meta-test"
		}
		numeric = append(numeric, set+" "+col.head)
	}
	for _, set := range []string{"Meta-train", "Meta-test"} {
		for _, a := range t.CVaRAlpha {
			numeric = append(numeric, set+" "+cvarHead(a))
		}
	}
	writeMarkdownHead(&b, t.ShowOrder, t.ShowName, numeric...)
	rows := make([]markdownRow, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = markdownRow{r.Key, r.Seeds, append(r.Stats[:len(r.Stats):len(r.Stats)], r.CVaR...), r.Unfinished}
	}
	spread := make([]bool, len(trainTestColumns)+2*len(t.CVaRAlpha))
	for c, col := range trainTestColumns {
		spread[c] = col.spread
	}
	writeMarkdownRows(&b, t.Score, rows, spread, t.ShowOrder, t.ShowName)
	return b.String()
}

// CSV renders the table with full precision in display units (accuracy in
// percent, named by the metric column): one row per table row, each
// statistic followed by its 95% CI half-width (0 for a single seed), then
// the unfinished runs' note (Group.UnfinishedNote; empty when all finished).
func (t *TrainTestTable) CSV() string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{"ways", "k", "algorithm", "order", "name", "seeds", "metric"}
	for _, col := range trainTestColumns {
		head = append(head, col.csv, col.csv+"_ci95")
	}
	for _, set := range []string{"train", "test"} {
		for _, a := range t.CVaRAlpha {
			c := set + "_cvar" + strconv.FormatFloat(a, 'g', -1, 64)
			head = append(head, c, c+"_ci95")
		}
	}
	w.Write(append(head, "unfinished"))
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range t.Rows {
		rec := []string{strconv.Itoa(r.Key.Ways), strconv.Itoa(r.Key.K), r.Key.Algorithm, r.Key.Order, r.Key.Name,
			strconv.Itoa(r.Seeds), t.Score.Axis("")}
		for _, e := range append(r.Stats[:len(r.Stats):len(r.Stats)], r.CVaR...) {
			e = Display(t.Score, e)
			rec = append(rec, f(e.Mean), f(e.Half))
		}
		w.Write(append(rec, r.Unfinished))
	}
	w.Flush()
	return b.String()
}
