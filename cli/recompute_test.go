package cli

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results/resultstest"
)

// t95 are two-sided 95% Student t quantiles by number of seeds (n-1
// degrees of freedom), from a printed table rather than a computation.
var t95 = map[int]float64{2: 12.7062047362, 3: 4.30265272975, 4: 3.18244630528, 5: 2.7764451052, 10: 2.26215716280}

// TestReportRecomputed checks the Omniglot table (Table 2) that report
// writes against a recomputation from its per_task_seeds.csv with plain
// loops, and per_task.csv's values against the seed means of
// per_task_seeds.csv, on synthetic 5-way runs whose worst alphabet
// differs between seeds (so that a mean of minima and a minimum of means
// differ), and on the report directory in $TRMAML_CHECK_REPORT when set
// (e.g. scripts/omniglot_figures.sh's output for a real grid).
func TestReportRecomputed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	odd := resultstest.NewAccuracy("ot", "trmaml", "second", 2, 1, 0.7)
	odd.Result.MetaTrain = resultstest.AccuracyStats([]float64{0.6, 0.95, 0.9, 0.85, 0.8},
		resultstest.TrainAlphabets, resultstest.TrainMasses(), 50)
	writeSynthetic(t, root, resultstest.NewAccuracy("om", "maml", "second", 1, 1, 1), resultstest.NewAccuracy("om", "maml", "second", 2, 1, 1.2),
		resultstest.NewAccuracy("ot", "trmaml", "second", 1, 1, 0.5), odd)
	out := filepath.Join(t.TempDir(), "report")
	var stdout, stderr bytes.Buffer
	if err := reportCmd([]string{"-out", out, root}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	rows := checkRecomputed(t, out)

	// The sampling probabilities are C(Z_i, 5) / sum, with exact binomials.
	total := new(big.Int)
	for _, z := range resultstest.TrainCharacters {
		total.Add(total, new(big.Int).Binomial(int64(z), 5))
	}
	for _, r := range rows {
		i := slices.Index(resultstest.TrainAlphabets, r.task)
		if r.set != "meta_train" || i < 0 {
			continue
		}
		want, _ := new(big.Rat).SetFrac(new(big.Int).Binomial(int64(resultstest.TrainCharacters[i]), 5), total).Float64()
		if math.Abs(r.sampling-want) > 1e-12 {
			t.Errorf("%s: sampling probability %v, want C(%d, 5) / sum = %v", r.task, r.sampling, resultstest.TrainCharacters[i], want)
		}
	}
	if dir := os.Getenv("TRMAML_CHECK_REPORT"); dir != "" {
		t.Logf("checking the report in %s", dir)
		checkRecomputed(t, dir)
	}
}

// seedRow is one row of per_task_seeds.csv.
type seedRow struct {
	group, set, task string
	seed             string
	sampling, value  float64
}

// readCSVFile reads a CSV file with a header, returning the header's
// column index and the records.
func readCSVFile(t *testing.T, path string) (map[string]int, [][]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %d records, %v", path, len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	return col, recs[1:]
}

// checkRecomputed recomputes table.csv and per_task.csv of the report
// directory dir from its per_task_seeds.csv and returns the seed rows.
func checkRecomputed(t *testing.T, dir string) []seedRow {
	t.Helper()
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		return v
	}
	groupOf := func(col map[string]int, r []string) string {
		var parts []string
		for _, c := range []string{"ways", "k", "algorithm", "order", "name"} {
			parts = append(parts, r[col[c]])
		}
		return strings.Join(parts, "/")
	}
	col, recs := readCSVFile(t, filepath.Join(dir, "per_task_seeds.csv"))
	var rows []seedRow
	// values[group][set][seed] are the per-task values in file order.
	values := map[string]map[string]map[string][]seedRow{}
	for _, r := range recs {
		row := seedRow{group: groupOf(col, r), set: r[col["set"]], task: r[col["task"]], seed: r[col["seed"]],
			sampling: num(r[col["sampling_probability"]]), value: num(r[col["value"]])}
		rows = append(rows, row)
		if values[row.group] == nil {
			values[row.group] = map[string]map[string][]seedRow{}
		}
		if values[row.group][row.set] == nil {
			values[row.group][row.set] = map[string][]seedRow{}
		}
		values[row.group][row.set][row.seed] = append(values[row.group][row.set][row.seed], row)
	}

	// over returns the mean over seeds of stat and its 95% CI half-width.
	over := func(seeds map[string][]seedRow, stat func([]seedRow) float64) (mean, half float64) {
		var xs []float64
		for _, rs := range seeds {
			xs = append(xs, stat(rs))
		}
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		if len(xs) < 2 {
			return mean, 0
		}
		ss := 0.0
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		tq, ok := t95[len(xs)]
		if !ok {
			t.Fatalf("no t quantile for %d seeds", len(xs))
		}
		return mean, tq * math.Sqrt(ss/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
	}
	weighted := func(rs []seedRow) float64 {
		s, w := 0.0, 0.0
		for _, r := range rs {
			s, w = s+r.sampling*r.value, w+r.sampling
		}
		return s / w
	}
	mean := func(rs []seedRow) float64 {
		s := 0.0
		for _, r := range rs {
			s += r.value
		}
		return s / float64(len(rs))
	}
	worst := func(rs []seedRow) float64 {
		m := math.Inf(1)
		for _, r := range rs {
			m = math.Min(m, r.value)
		}
		return m
	}
	std := func(rs []seedRow) float64 { // across tasks, population
		mu, ss := mean(rs), 0.0
		for _, r := range rs {
			ss += (r.value - mu) * (r.value - mu)
		}
		return math.Sqrt(ss / float64(len(rs)))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

	// Rows with unfinished runs hold their last evaluation's statistics,
	// which per_task_seeds.csv does not: they are not recomputed.
	tcol, trecs := readCSVFile(t, filepath.Join(dir, "table.csv"))
	unfinished, ok := tcol["unfinished"]
	if !ok {
		t.Fatalf("%s: table.csv has no unfinished column", dir)
	}
	trecs = slices.DeleteFunc(trecs, func(r []string) bool { return r[unfinished] != "" })
	if len(trecs) != len(values) {
		t.Errorf("%s: table.csv has %d rows, per_task_seeds.csv %d groups", dir, len(trecs), len(values))
	}
	for _, r := range trecs {
		g := groupOf(tcol, r)
		sets := values[g]
		if sets == nil {
			t.Errorf("%s: table.csv row %s has no per_task_seeds.csv rows", dir, g)
			continue
		}
		for _, c := range []struct {
			column, set string
			stat        func([]seedRow) float64
		}{
			{"train_weighted_mean", "meta_train", weighted}, {"train_mean", "meta_train", mean},
			{"train_worst", "meta_train", worst}, {"train_std", "meta_train", std},
			{"test_mean", "meta_test", mean}, {"test_worst", "meta_test", worst}, {"test_std", "meta_test", std},
		} {
			m, h := over(sets[c.set], c.stat)
			if got, gotHalf := num(r[tcol[c.column]]), num(r[tcol[c.column+"_ci95"]]); !near(got, m) || !near(gotHalf, h) {
				t.Errorf("%s: %s %s = %v ± %v, recomputed %v ± %v", dir, g, c.column, got, gotHalf, m, h)
			}
		}
	}

	pcol, precs := readCSVFile(t, filepath.Join(dir, "per_task.csv"))
	checked := 0
	for _, r := range precs {
		seeds := values[groupOf(pcol, r)][r[pcol["set"]]]
		task := r[pcol["task"]]
		m, h := over(seeds, func(rs []seedRow) float64 {
			for _, x := range rs {
				if x.task == task {
					return x.value
				}
			}
			t.Fatalf("%s: task %s missing from a seed", dir, task)
			return 0
		})
		if got, gotHalf := num(r[pcol["value"]]), num(r[pcol["value_ci95"]]); !near(got, m) || !near(gotHalf, h) {
			t.Errorf("%s: per_task.csv %s %s = %v ± %v, seeds give %v ± %v", dir, r[pcol["algorithm"]], task, got, gotHalf, m, h)
		}
		checked++
	}
	distinct := map[[3]string]bool{}
	for _, r := range rows {
		distinct[[3]string{r.group, r.set, r.task}] = true
	}
	if checked != len(distinct) {
		t.Errorf("%s: per_task.csv has %d rows, per_task_seeds.csv %d group, set and task triples", dir, checked, len(distinct))
	}
	return rows
}
