package results

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/results/display"
)

// Group is the runs of one Key, one per seed, in increasing seed order.
type Group struct {
	// Key is what the runs share.
	Key Key
	// Runs are the group's runs, one per seed.
	Runs []*Run
	// Score is the metric of the runs' statistics (all runs share it).
	Score display.Score
}

// Seeds returns the number of runs (seeds) in g.
func (g *Group) Seeds() int { return len(g.Runs) }

// GroupRuns groups runs by Key. Groups are ordered by ways and K, then order
// (second before first), algorithm (MAML before TR-MAML) and name. Two runs
// of one group with the same seed, or with different meta-training or
// meta-test task sets, are an error.
func GroupRuns(runs []*Run) ([]*Group, error) {
	byKey := map[Key]*Group{}
	var groups []*Group
	for _, r := range runs {
		k := KeyOf(r)
		g := byKey[k]
		if g == nil {
			g = &Group{Key: k, Score: r.Score}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.Runs = append(g.Runs, r)
	}
	for _, g := range groups {
		slices.SortFunc(g.Runs, func(a, b *Run) int { return cmp.Compare(a.Config.Seed, b.Config.Seed) })
		first := g.Runs[0]
		for i, r := range g.Runs[1:] {
			if prev := g.Runs[i]; r.Config.Seed == prev.Config.Seed {
				return nil, fmt.Errorf("%s: %s and %s both have seed %d", g.Key, prev.Dir, r.Dir, r.Config.Seed)
			}
			if r.Score != first.Score {
				return nil, fmt.Errorf("%s: %s measures %s but %s measures %s", g.Key, first.Dir, first.Score.Label, r.Dir, r.Score.Label)
			}
			if !sameButSeed(first.Config, r.Config) {
				return nil, fmt.Errorf("%s: %s and %s differ in more than their seed; averaging them would mix settings", g.Key, first.Dir, r.Dir)
			}
			if !slices.Equal(r.P.Tasks, first.P.Tasks) {
				return nil, fmt.Errorf("%s: %s and %s have different task sets", g.Key, first.Dir, r.Dir)
			}
		}
		// The final task sets of the finished runs (unfinished ones have
		// none yet).
		fin := slices.DeleteFunc(slices.Clone(g.Runs), func(r *Run) bool { return r.Unfinished })
		for _, r := range fin {
			if !slices.Equal(r.Result.MetaTrain.Tasks, fin[0].Result.MetaTrain.Tasks) || !slices.Equal(r.Result.MetaTest.Tasks, fin[0].Result.MetaTest.Tasks) ||
				!slices.Equal(r.Result.MetaTrain.Masses, fin[0].Result.MetaTrain.Masses) {
				return nil, fmt.Errorf("%s: %s and %s have different task sets", g.Key, fin[0].Dir, r.Dir)
			}
		}
	}
	orderRank := func(o string) int {
		if o == "second" {
			return 0
		}
		return 1
	}
	slices.SortFunc(groups, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(a.Key.K, b.Key.K), cmp.Compare(orderRank(a.Key.Order), orderRank(b.Key.Order)),
			cmp.Compare(a.Key.Algorithm, b.Key.Algorithm), cmp.Compare(b.Key.Level, a.Key.Level), cmp.Compare(a.Key.Name, b.Key.Name))
	})

	// Ways first: 5-way settings before 20-way ones.
	slices.SortStableFunc(groups, func(a, b *Group) int { return cmp.Compare(a.Key.Ways, b.Key.Ways) })
	return groups, nil
}

// sameButSeed reports whether two configs differ at most in seed and name
// (a name may carry the seed), in what their runs read (configs.Config.Read).
func sameButSeed(a, b configs.Config) bool {
	a, b = a.Read(), b.Read()
	a.Seed, b.Seed, a.Name, b.Name = 0, 0, "", ""
	return reflect.DeepEqual(a, b)
}

// Labels returns a short legend label for each group: the algorithm's
// display name, followed by the order and K where these differ among the
// groups, and the config name if that still leaves two labels equal.
func Labels(groups []*Group) []string {
	varies := func(f func(Key) string) bool {
		for _, g := range groups {
			if f(g.Key) != f(groups[0].Key) {
				return true
			}
		}
		return false
	}
	order := varies(func(k Key) string { return k.Order })
	k := varies(func(k Key) string { return strconv.Itoa(k.K) })
	k = k || varies(func(k Key) string { return strconv.Itoa(k.Ways) })
	labels := make([]string, len(groups))
	for i, g := range groups {
		labels[i] = g.Key.Method()
		if order {
			labels[i] += ", " + g.Key.Order + " order"
		}
		if k {
			labels[i] += ", " + g.Key.Shots()
		}
	}
	count := map[string]int{}
	for _, l := range labels {
		count[l]++
	}
	for i, l := range labels {
		if count[l] > 1 {
			labels[i] += " (" + groups[i].Key.Name + ")"
		}
		if groups[i].Unfinished() {
			labels[i] += " (unfinished)"
		}
	}
	return labels
}
