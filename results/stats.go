package results

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trmaml/trmaml/rundir"
)

// Estimate is a mean over seeds with the half-width of its 95% confidence
// interval: Mean ± Half.
type Estimate struct {
	// Mean is the mean over the values (seeds).
	Mean float64
	// Half is TCritical95(N) times the standard error; 0 for one seed.
	Half float64
	// N is the number of seeds (values) the estimate is over.
	N int
}

// TCritical95 is the two-sided 95% Student t critical value for the mean of
// n samples, the 0.975 quantile with n-1 degrees of freedom (4.3027 for
// n = 3); 0 when n < 2, where no interval can be estimated.
func TCritical95(n int) float64 {
	if n < 2 {
		return 0
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
}

// Summarize returns the mean of the non-NaN values in xs and the half-width
// of its 95% Student t interval, TCritical95(n) * s / sqrt(n) with s the
// sample (n-1) standard deviation. With no values the mean is NaN.
func Summarize(xs []float64) Estimate {
	vals := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			vals = append(vals, x)
		}
	}
	n := len(vals)
	switch n {
	case 0:
		return Estimate{Mean: math.NaN()}
	case 1:
		return Estimate{Mean: vals[0], N: 1}
	}
	mean, std := stat.MeanStdDev(vals, nil)
	return Estimate{Mean: mean, Half: TCritical95(n) * std / math.Sqrt(float64(n)), N: n}
}

// Key identifies the runs that differ only in their seed.
type Key struct {
	// Name is the config name without a trailing "-seedN" or "_seedN".
	Name string
	// Algorithm is a registered method's name; Order is "second" or
	// "first".
	Algorithm, Order string
	// Level is the value of the setting the method sweeps (CVaR's level a;
	// metalearn.MethodInfo.Swept), 0 for methods that sweep none.
	Level float64
	// K is the number of support points.
	K int
	// Ways is N of N-way classification (K is then per class); 0 for other
	// task families.
	Ways int
	// Inner is the inner loop (inner.kind) unless it is the default, MAML's
	// plain steps: "".
	Inner string
}

// Setting names the few-shot setting of k: "5-shot", or "20-way 1-shot"
// for classification.
func (k Key) Setting() string {
	if k.Ways > 0 {
		return fmt.Sprintf("%d-way %d-shot", k.Ways, k.K)
	}
	return fmt.Sprintf("%d-shot", k.K)
}

// Shots names the few-shot setting of k compactly, as in a legend or a
// description: "K=5", or "20-way 1-shot" for classification.
func (k Key) Shots() string {
	if k.Ways > 0 {
		return k.Setting()
	}
	return fmt.Sprintf("K=%d", k.K)
}

// SameSetting reports whether k and o have the same few-shot setting
// (ways and shots).
func (k Key) SameSetting(o Key) bool { return k.K == o.K && k.Ways == o.Ways }

var seedSuffix = regexp.MustCompile(`[-_]seed\d+$`)

// KeyOf returns the group key of r, from its config.
func KeyOf(r *Run) Key {
	c := r.Config
	k := Key{Name: seedSuffix.ReplaceAllString(c.Name, ""), Algorithm: c.Algorithm, Order: c.Order, K: c.Task.Support, Level: c.Swept()}
	if c.Inner.Kind != configs.Defaults().Inner.Kind {
		k.Inner = c.Inner.Kind
	}
	if f, err := c.Family(); err == nil {
		k.Ways = f.Ways(c)
	}
	return k
}

// String describes the key, e.g. "sine_k5_maml (maml, second order, K=5)"
// or "omni (trmaml, second order, 5-way 1-shot)".
func (k Key) String() string {
	alg := k.Algorithm
	if k.SweptSymbol() != "" {
		alg += " " + k.SweptSymbol() + "=" + strconv.FormatFloat(k.Level, 'g', -1, 64)
	}
	if k.Inner != "" {
		alg += ", inner " + k.Inner
	}
	return fmt.Sprintf("%s (%s, %s order, %s)", k.Name, alg, k.Order, k.Shots())
}

// Method is the display name of the key's method: AlgorithmName, with the
// value of the setting it sweeps ("CVaR a=0.5") and the inner loop unless
// it is MAML's plain steps ("TR-MAML, inner metasgd"), so that tables and
// legends of runs that differ by inner loop name it.
func (k Key) Method() string {
	m := AlgorithmName(k.Algorithm)
	if s := k.SweptSymbol(); s != "" {
		m = fmt.Sprintf("%s %s=%s", m, s, strconv.FormatFloat(k.Level, 'g', -1, 64))
	}
	if k.Inner != "" {
		m += ", inner " + k.Inner
	}
	return m
}

// SweptSymbol is how reports write the setting the key's method sweeps
// (metalearn.MethodInfo.SweptSymbol, "a" for CVaR's level); "" for none.
func (k Key) SweptSymbol() string {
	info, ok := metalearn.LookupMethod(k.Algorithm)
	switch {
	case !ok || info.Swept == "":
		return ""
	case info.SweptSymbol != "":
		return info.SweptSymbol
	}
	return info.Swept
}

// AlgorithmName is the display name of a registered method
// (metalearn.MethodInfo.Display), e.g. "TR-MAML"; other values are
// returned unchanged.
func AlgorithmName(alg string) string {
	if info, ok := metalearn.LookupMethod(alg); ok {
		return info.Display
	}
	return alg
}

// MovesP reports whether the key's method moves the task distribution p
// (every registered method but those with a fixed p, such as MAML).
func (k Key) MovesP() bool {
	info, ok := metalearn.LookupMethod(k.Algorithm)
	return ok && !info.FixedP
}

// Group is the runs of one Key, one per seed, in increasing seed order.
type Group struct {
	// Key is what the runs share.
	Key Key
	// Runs are the group's runs, one per seed.
	Runs []*Run
	// Score is the metric of the runs' statistics (all runs share it).
	Score metalearn.Metric
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

// shownKey is g's key as tables and legends of groups show it: with the
// default inner loop named too when the groups' inner loops differ, so
// that a row of MAML's plain steps reads "MAML, inner sgd" beside "MAML,
// inner metasgd".
func shownKey(g *Group, groups []*Group) Key {
	k := g.Key
	if k.Inner != "" {
		return k
	}
	for _, o := range groups {
		if o.Key.Inner != "" {
			k.Inner = configs.Defaults().Inner.Kind
			return k
		}
	}
	return k
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
		labels[i] = shownKey(g, groups).Method()
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

// Curve is a statistic at each evaluation iteration, estimated over seeds.
type Curve struct {
	// Iterations are the evaluation iterations at which at least one seed
	// has a value, increasing.
	Iterations []float64
	// Seconds is the mean elapsed wall-clock time at each iteration over
	// the same seeds.
	Seconds []float64
	// Points are the estimates at each iteration.
	Points []Estimate
	// Seeds[s][i] is the value of the group's run s at Iterations[i], NaN
	// where that run has none: with few seeds, figures draw these
	// rather than a t interval.
	Seeds [][]float64
}

// curve estimates value(r, row) over g's runs at each iteration; rows
// where value is NaN are left out.
func (g *Group) curve(value func(r *Run, row int) float64) Curve {
	var its []int
	for _, r := range g.Runs {
		its = append(its, r.Iterations...)
	}
	slices.Sort(its)
	its = slices.Compact(its)
	c := Curve{Seeds: make([][]float64, len(g.Runs))}
	for _, it := range its {
		var vals, secs []float64
		seed := make([]float64, len(g.Runs))
		for s, r := range g.Runs {
			seed[s] = math.NaN()
			row, ok := slices.BinarySearch(r.Iterations, it)
			if !ok {
				continue
			}
			if v := value(r, row); !math.IsNaN(v) {
				vals = append(vals, v)
				secs = append(secs, r.metrics[Elapsed][row])
				seed[s] = v
			}
		}
		if len(vals) == 0 {
			continue
		}
		c.Iterations = append(c.Iterations, float64(it))
		c.Seconds = append(c.Seconds, stat.Mean(secs, nil))
		c.Points = append(c.Points, Summarize(vals))
		for s, v := range seed {
			c.Seeds[s] = append(c.Seeds[s], v)
		}
	}
	return c
}

// Curve returns metrics.csv column c estimated over the group's seeds at
// each evaluation iteration (for the batch columns, the iteration-0 row,
// which has none, is left out).
func (g *Group) Curve(c Column) Curve {
	return g.curve(func(r *Run, row int) float64 { return r.metrics[c][row] })
}

// PMass returns the total task weight p on the tasks named in set at each
// evaluation iteration, estimated over the group's seeds.
func (g *Group) PMass(set []string) Curve {
	return g.curve(func(r *Run, row int) float64 {
		total := 0.0
		for i, task := range r.P.Tasks {
			if slices.Contains(set, task) {
				total += r.P.Weights[row][i]
			}
		}
		return total
	})
}

// Final is a statistic of result.json, the output rule's solution after
// training.
type Final int

// The final statistics: mean, worst, std and weighted mean (weights: the
// training distribution) of the per-task losses of result.json's meta_test
// and meta_train, and the cost of training.
const (
	MetaTestMean Final = iota
	MetaTestWorst
	MetaTestStd
	MetaTestWeightedMean
	MetaTrainMean
	MetaTrainWorst
	MetaTrainStd
	MetaTrainWeightedMean
	MsPerIteration // training wall-clock milliseconds per iteration
)

// Value returns statistic f of one result.
func (f Final) Value(res *rundir.Result) float64 {
	switch f {
	case MetaTestMean:
		return res.MetaTest.Mean
	case MetaTestWorst:
		return res.MetaTest.Worst
	case MetaTestStd:
		return res.MetaTest.Std
	case MetaTestWeightedMean:
		return res.MetaTest.WeightedMean
	case MetaTrainMean:
		return res.MetaTrain.Mean
	case MetaTrainWorst:
		return res.MetaTrain.Worst
	case MetaTrainStd:
		return res.MetaTrain.Std
	case MetaTrainWeightedMean:
		return res.MetaTrain.WeightedMean
	case MsPerIteration:
		return res.Timing.MsPerIteration
	}
	panic(fmt.Sprintf("results: unknown Final %d", f))
}

// Final returns statistic f estimated over the group's seeds.
func (g *Group) Final(f Final) Estimate {
	vals := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		vals[i] = f.Value(&r.Result)
	}
	return Summarize(vals)
}

// CVaRLevels are the levels alpha of the eval.cvar_alpha lists of the
// groups' runs, each once, in increasing order: the CVaR_alpha columns of
// the reports.
func CVaRLevels(groups []*Group) []float64 {
	var levels []float64
	for _, g := range groups {
		for _, r := range g.Runs {
			for _, a := range r.Config.Eval.CVaRAlpha {
				if !slices.Contains(levels, a) {
					levels = append(levels, a)
				}
			}
		}
	}
	slices.Sort(levels)
	return levels
}

// FinalCVaR returns CVaR_alpha over the tasks of set (the mean of the worst
// fraction 1-alpha of result.json's per-task values, metalearn.TailMean in
// the group's metric), estimated over the group's seeds. It is computed
// from the per-task values, so it exists at any level for any finished
// run (unfinished ones, which have none yet, are left out).
func (g *Group) FinalCVaR(set Set, alpha float64) Estimate {
	vals := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		if r.Unfinished {
			vals[i] = math.NaN()
			continue
		}
		vals[i] = metalearn.TailMean(set.of(&r.Result).PerTask, alpha, g.Score)
	}
	return Summarize(vals)
}

// cvarHead is the column head of CVaR_alpha.
func cvarHead(alpha float64) string { return "CVaR_" + strconv.FormatFloat(alpha, 'g', -1, 64) }

// cvarCaption explains the CVaR columns of a table, if it has any.
func cvarCaption(levels []float64, noun string) string {
	if len(levels) == 0 {
		return ""
	}
	return fmt.Sprintf(" CVaR_alpha is the mean of the worst fraction 1-alpha of the %ss (the boundary %s counted in part).", noun, noun)
}

// FinalP returns the meta-training task names and each task's final weight
// (Run.FinalP) estimated over the group's seeds.
func (g *Group) FinalP() (tasks []string, p []Estimate) {
	tasks = g.Runs[0].P.Tasks
	p = make([]Estimate, len(tasks))
	vals := make([]float64, len(g.Runs))
	for i := range tasks {
		for j, r := range g.Runs {
			vals[j] = r.FinalP()[i]
		}
		p[i] = Summarize(vals)
	}
	return tasks, p
}

// Histogram counts the final per-task values of one task set of several
// groups in shared bins.
type Histogram struct {
	// Edges are the bin edges, len(Counts[g])+1 of them, in stored units
	// (accuracy as a fraction): for a loss from 0 to the largest task loss
	// of any run, for a score from the multiple of 0.05 at or below the
	// smallest task score to the one at or above the largest (not 1:
	// the bins span the data).
	Edges []float64
	// Counts[g][b] is the number of tasks whose final value falls in bin b
	// ([Edges[b], Edges[b+1]), the last bin closed), averaged over the
	// seeds of groups[g].
	Counts [][]float64
}

// TaskHistogram bins the final per-task values on set of every run of
// groups (all in one metric, that of groups[0]) into bins equal bins
// (bins >= 1).
func TaskHistogram(groups []*Group, set Set, bins int) Histogram {
	lo, hi := 0.0, 0.0
	if groups[0].Score.HigherIsBetter {
		lo, hi = 1.0, 0.0
		for _, g := range groups {
			for _, r := range g.Runs {
				lo = min(lo, floats.Min(set.of(&r.Result).PerTask))
				hi = max(hi, floats.Max(set.of(&r.Result).PerTask))
			}
		}
		lo, hi = math.Floor(lo*20)/20, min(math.Ceil(hi*20)/20, 1)
		if lo >= hi {
			lo = hi - 0.05
		}
	} else {
		for _, g := range groups {
			for _, r := range g.Runs {
				hi = max(hi, floats.Max(set.of(&r.Result).PerTask))
			}
		}
		if hi <= 0 {
			hi = 1
		}
	}
	h := Histogram{Edges: make([]float64, bins+1), Counts: make([][]float64, len(groups))}
	floats.Span(h.Edges, lo, hi)
	for gi, g := range groups {
		h.Counts[gi] = make([]float64, bins)
		for _, r := range g.Runs {
			for _, v := range set.of(&r.Result).PerTask {
				h.Counts[gi][h.bin(v)] += 1 / float64(len(g.Runs))
			}
		}
	}
	return h
}

// bin is the index of the bin holding v, found by comparing with the edges
// themselves so that a value equal to an edge starts that edge's bin
// whatever the rounding of the bin width; values outside go to the end bins.
func (h Histogram) bin(v float64) int {
	i, exact := slices.BinarySearch(h.Edges, v)
	if !exact {
		i--
	}
	return min(max(i, 0), len(h.Edges)-2)
}
