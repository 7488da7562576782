package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/results/display"
)

// TableRow is one line of the results table: a group's final statistics
// over the meta-test tasks and its weighted mean over the meta-training
// tasks, each estimated over the group's seeds.
type TableRow struct {
	// Key is the group's setting.
	Key Key
	// Seeds is the number of runs the estimates are over.
	Seeds int
	// Mean, Worst and Std are over the meta-test tasks.
	Mean, Worst, Std Estimate
	// TrainWeightedMean weighs the meta-training tasks by the training
	// distribution, the objective MAML minimises.
	TrainWeightedMean Estimate
	// CVaR is CVaR_alpha over the meta-test tasks at each of the table's
	// CVaRAlpha levels.
	CVaR []Estimate
	// Unfinished names the group's unfinished runs, whose values are
	// their last evaluation's (Group.UnfinishedNote); "" when all finished.
	Unfinished string
}

// SummaryTable is the paper's results table (Table 1) for a set of groups.
type SummaryTable struct {
	// Score is the groups' metric.
	Score display.Score
	// Rows are in the groups' order: by K, order and algorithm.
	Rows []TableRow
	// TestTasks is the number of meta-test tasks, or 0 if it differs
	// between rows.
	TestTasks int
	// ShowOrder is set when the rows have more than one order, ShowName
	// when two rows differ only in their config names (see rowColumns).
	ShowOrder, ShowName bool
	// CVaRAlpha are the levels of the CVaR columns (CVaRLevels), after
	// the others.
	CVaRAlpha []float64
}

// Table computes the results table of groups, at least one, all in one
// metric (see SplitByScore).
func Table(groups []*Group) (*SummaryTable, error) {
	if err := checkTableGroups("Table", groups); err != nil {
		return nil, err
	}
	t := &SummaryTable{Score: groups[0].Score, CVaRAlpha: CVaRLevels(groups)}
	t.ShowOrder, t.ShowName = rowColumns(groups)
	counted := false // t.TestTasks holds a finished run's count
	for _, g := range groups {
		row := TableRow{
			Key: shownKey(g, groups), Seeds: g.Seeds(),
			Mean: g.Final(MetaTestMean), Worst: g.Final(MetaTestWorst), Std: g.Final(MetaTestStd),
			TrainWeightedMean: g.Final(MetaTrainWeightedMean),
			Unfinished:        g.UnfinishedNote(),
		}
		for _, a := range t.CVaRAlpha {
			row.CVaR = append(row.CVaR, g.FinalCVaR(MetaTest, a))
		}
		t.Rows = append(t.Rows, row)
		fin := Finished([]*Group{g})[0].Runs
		if len(fin) == 0 {
			continue
		}
		n := len(fin[0].Result.MetaTest.Tasks)
		if !counted {
			counted = true
			t.TestTasks = n
		} else if n != t.TestTasks {
			t.TestTasks = 0
		}
	}
	return t, nil
}

// checkTableGroups returns an error naming the table unless groups is
// non-empty and all of one metric: a table's statistics, bold marks and
// units are those of one metric.
func checkTableGroups(table string, groups []*Group) error {
	if len(groups) == 0 {
		return fmt.Errorf("results: %s needs at least one group of finished runs, got none", table)
	}
	for _, g := range groups[1:] {
		if g.Score.Name != groups[0].Score.Name {
			return fmt.Errorf("results: %s: %s measures %s but %s measures %s (split the groups with SplitByScore)",
				table, groups[0].Key, groups[0].Score.Label, g.Key, g.Score.Label)
		}
	}
	return nil
}

// rowColumns reports whether a table of groups needs the Order column (the
// groups have more than one order) and the Config column (two groups agree
// on everything but their config name, which alone tells them apart).
func rowColumns(groups []*Group) (showOrder, showName bool) {
	seen := map[Key]bool{}
	for _, g := range groups {
		showOrder = showOrder || g.Key.Order != groups[0].Key.Order
		k := g.Key
		k.Name = ""
		showName = showName || seen[k]
		seen[k] = true
	}
	return showOrder, showName
}

// Markdown renders the table as Markdown in the paper's layout, a caption
// first, in the metric's display units. Within each setting (K) with
// several rows, the best mean of each column is bold: the lowest MSE, the
// highest accuracy, the lowest standard deviation.
func (t *SummaryTable) Markdown() string {
	var b strings.Builder
	tasks := "the meta-test tasks"
	if t.TestTasks > 0 {
		tasks = fmt.Sprintf("the %d meta-test tasks", t.TestTasks)
	}
	fmt.Fprintf(&b, "Task %s statistics across %s after meta-training (Mean, Worst, Std. Dev.), "+
		"and the meta-training tasks' mean weighted by the training distribution. "+
		"Each entry is the mean over seeds ± the half-width of its 95%% confidence interval "+
		"(Student t, n-1 degrees of freedom; none for a single seed).%s\n\n", t.Score.Axis(""), tasks, cvarCaption(t.CVaRAlpha, "task"))

	head := []string{"Seeds", "Mean", "Worst", "Std. Dev.", "Meta-train weighted mean"}
	spread := []bool{false, false, true, false}
	for _, a := range t.CVaRAlpha {
		head, spread = append(head, cvarHead(a)), append(spread, false)
	}
	writeMarkdownHead(&b, t.ShowOrder, t.ShowName, head...)
	rows := make([]markdownRow, len(t.Rows))
	for i, r := range t.Rows {
		e := r.estimates()
		rows[i] = markdownRow{r.Key, r.Seeds, append(e[:], r.CVaR...), r.Unfinished}
	}
	writeMarkdownRows(&b, t.Score, rows, spread, t.ShowOrder, t.ShowName)
	return b.String()
}

// estimates returns the row's statistics in column order.
func (r TableRow) estimates() [4]Estimate {
	return [4]Estimate{r.Mean, r.Worst, r.Std, r.TrainWeightedMean}
}

// writeMarkdownHead writes the header and alignment lines of a results
// table: the left-aligned Setting, Algorithm and (when shown) Order and
// Config columns, then the right-aligned numeric columns.
func writeMarkdownHead(b *strings.Builder, showOrder, showName bool, numeric ...string) {
	head := []string{"Setting", "Algorithm"}
	if showOrder {
		head = append(head, "Order")
	}
	if showName {
		head = append(head, "Config")
	}
	nText := len(head)
	head = append(head, numeric...)
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for i := range head {
		if i < nText {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
}

// keyCells are a row's text cells under writeMarkdownHead's columns: its
// setting and method, then its order and config name when shown.
func keyCells(k Key, showOrder, showName bool) []string {
	cells := []string{k.Setting(), k.Method()}
	if showOrder {
		cells = append(cells, k.Order)
	}
	if showName {
		cells = append(cells, k.Name)
	}
	return cells
}

// markdownRow is what writeMarkdownRows shows of a table row.
type markdownRow struct {
	key   Key
	seeds int
	stats []Estimate // stored units, in column order
	// unfinished notes the unfinished runs, after the seed count.
	unfinished string
}

// writeMarkdownRows writes one line per row under writeMarkdownHead's
// columns: the key cells, the number of seeds, then the statistics in
// score's display units. Within each setting with several rows, the
// strictly best mean of each column is bold: the best in score's direction,
// or the lowest in a column of spreads (spread[c]), where a smaller spread
// is better in any metric.
func writeMarkdownRows(b *strings.Builder, score display.Score, rows []markdownRow, spread []bool, showOrder, showName bool) {
	for i, r := range rows {
		seeds := strconv.Itoa(r.seeds)
		if r.unfinished != "" {
			seeds += " (" + r.unfinished + ")"
		}
		cells := append(keyCells(r.key, showOrder, showName), seeds)
		for c, e := range r.stats {
			s := formatEstimate(Display(score, e))
			if bestInSetting(score, rows, i, c, spread[c]) {
				s = "**" + s + "**"
			}
			cells = append(cells, s)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// bestInSetting reports whether rows[i] has the strictly best mean of
// column c among the rows of its setting, and that setting has several
// rows.
func bestInSetting(score display.Score, rows []markdownRow, i, c int, spread bool) bool {
	others := 0
	for j, r := range rows {
		if j == i || !r.key.SameSetting(rows[i].key) {
			continue
		}
		others++
		a, b := rows[i].stats[c].Mean, r.stats[c].Mean
		better := score.Worse(b, a)
		if spread {
			better = a < b
		}
		if !better {
			return false
		}
	}
	return others > 0
}

// formatEstimate writes "mean ± half" with two decimals, more for means
// below 0.1 so that two significant digits show; just the mean for a
// single seed; "n/a" for a value not measured (NaN).
func formatEstimate(e Estimate) string {
	if math.IsNaN(e.Mean) {
		return "n/a" // not measured yet: an unfinished run's
	}
	d := 2
	if m := math.Abs(e.Mean); m > 0 && m < 0.1 {
		d = min(6, 1-int(math.Floor(math.Log10(m))))
	}
	if e.N < 2 {
		return strconv.FormatFloat(e.Mean, 'f', d, 64)
	}
	return fmt.Sprintf("%.*f ± %.*f", d, e.Mean, d, e.Half)
}

// CSV renders the table as CSV with full precision: one row per table row,
// each statistic followed by its 95% CI half-width (0 for a single seed),
// then the unfinished runs' note (Group.UnfinishedNote; empty when all
// finished).
func (t *SummaryTable) CSV() string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{"k", "algorithm", "order", "name", "seeds",
		"test_mean", "test_mean_ci95", "test_worst", "test_worst_ci95", "test_std", "test_std_ci95",
		"train_weighted_mean", "train_weighted_mean_ci95"}
	for _, a := range t.CVaRAlpha {
		c := "test_cvar" + strconv.FormatFloat(a, 'g', -1, 64)
		head = append(head, c, c+"_ci95")
	}
	w.Write(append(head, "unfinished"))
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range t.Rows {
		rec := []string{strconv.Itoa(r.Key.K), r.Key.Algorithm, r.Key.Order, r.Key.Name, strconv.Itoa(r.Seeds)}
		e := r.estimates()
		for _, e := range append(e[:], r.CVaR...) {
			rec = append(rec, f(e.Mean), f(e.Half))
		}
		w.Write(append(rec, r.Unfinished))
	}
	w.Flush()
	return b.String()
}
