package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PairedMarkdown is the table of each group's final statistics minus its
// baseline's, paired by seed: for every seed that both groups finished,
// the group's run minus the baseline's run of that seed, then the mean
// over those pairs ± its 95% confidence half-width (Student t). Runs of one
// seed start from the same initialisation, so the pairs take out the
// spread that seeds share, and a difference can be established where the
// two groups' own intervals overlap. The baseline of a group is the group
// of method baseline (e.g. "maml") at its few-shot setting and order; the
// statistics are the trade-off table's (mean, worst and CVaR at each level
// over the meta-training and meta-test tasks), in display units. It is ""
// when no group has a baseline to pair with.
func PairedMarkdown(groups []*Group, baseline string) string {
	levels, score, noun := CVaRLevels(groups), groups[0].Score, TaskNoun(groups)
	type stat struct {
		head  string
		value func(*Run) float64
	}
	var stats []stat
	for _, set := range []Set{MetaTrain, MetaTest} {
		name := "Meta-train"
		if set == MetaTest {
			name = "Meta-test"
		}
		mean, worst := set.Finals()
		stats = append(stats,
			stat{name + " mean", func(r *Run) float64 { return mean.Value(&r.Result) }},
			stat{name + " worst", func(r *Run) float64 { return worst.Value(&r.Result) }})
		for _, a := range levels {
			stats = append(stats, stat{name + " " + cvarHead(a), func(r *Run) float64 {
				return r.CVaR(set, a, score.Metric)
			}})
		}
	}
	var rows []string
	for _, g := range groups {
		if g.Key.Algorithm == baseline {
			continue
		}
		base := baselineOf(groups, g, baseline)
		if base == nil {
			continue
		}
		pairs := pairBySeed(base, g)
		if len(pairs) == 0 {
			continue
		}
		cells := []string{g.Key.Method(), strconv.Itoa(len(pairs))}
		for _, s := range stats {
			diffs := make([]float64, len(pairs))
			for i, p := range pairs {
				diffs[i] = s.value(p[1]) - s.value(p[0])
			}
			cells = append(cells, formatDifference(Display(score, Summarize(diffs))))
		}
		rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
	}
	if len(rows) == 0 {
		return ""
	}
	head := []string{"Method", "Pairs"}
	for _, s := range stats {
		head = append(head, s.head)
	}
	what := noun + " " + score.Label
	if score.Unit != "" {
		what += " in " + score.Unit + " points"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Final %s minus %s's, paired by seed: each method's run of a seed against %s's run of that seed, "+
		"mean over the pairs ± 95%% CI half-width (Student t); only seeds both finished.%s\n\n",
		what, AlgorithmName(baseline), AlgorithmName(baseline), cvarCaption(levels, noun))
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|---|" + strings.Repeat("---:|", len(head)-1) + "\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
	return b.String()
}

// baselineOf is the group of method baseline at g's few-shot setting and
// order, or nil.
func baselineOf(groups []*Group, g *Group, baseline string) *Group {
	for _, b := range groups {
		if b.Key.Algorithm == baseline && b.Key.SameSetting(g.Key) && b.Key.Order == g.Key.Order {
			return b
		}
	}
	return nil
}

// pairBySeed returns the finished runs of base and g with the same seed,
// as [base's, g's], in g's order.
func pairBySeed(base, g *Group) [][2]*Run {
	bySeed := map[uint64]*Run{}
	for _, r := range base.Runs {
		if !r.Unfinished {
			bySeed[r.Config.Seed] = r
		}
	}
	var pairs [][2]*Run
	for _, r := range g.Runs {
		if b, ok := bySeed[r.Config.Seed]; ok && !r.Unfinished {
			pairs = append(pairs, [2]*Run{b, r})
		}
	}
	return pairs
}

// formatDifference is formatEstimate with the mean's sign always shown.
func formatDifference(e Estimate) string {
	s := formatEstimate(e)
	if e.Mean >= 0 && !math.IsNaN(e.Mean) {
		s = "+" + s
	}
	return s
}
