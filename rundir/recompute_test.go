package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
)

// TestResultStatisticsRecomputed: result.json's statistics are computed
// again from per_task and masses on every read; an edit of any of them (or
// of a per-task value under them) is refused naming the set and the field,
// for MSE and accuracy results.
func TestResultStatisticsRecomputed(t *testing.T) {
	t.Parallel()
	for _, m := range []metalearn.Metric{metalearn.MSE, metalearn.Accuracy} {
		stats := func(v, masses []float64) Stats {
			s := metalearn.NewTaskStats(v, nil, masses, m)
			return Stats{Mean: s.Mean, WeightedMean: s.WeightedMean, Worst: s.Worst, WorstTask: []string{"a", "b", "c"}[s.WorstTask],
				Std: s.Std, Instances: 30, PerTask: v, Tasks: []string{"a", "b", "c"}, Masses: masses}
		}
		base := Result{Name: "r", Metric: m.Name,
			MetaTest:  stats([]float64{0.2, 0.5, 0.9}, []float64{1, 1, 1}),
			MetaTrain: stats([]float64{0.3, 0.6, 0.4}, []float64{1, 3, 2})}
		for _, tc := range []struct {
			field string
			edit  func(r *Result)
		}{
			{"meta_test.mean", func(r *Result) { r.MetaTest.Mean += 0.01 }},
			{"meta_test.weighted_mean", func(r *Result) { r.MetaTest.WeightedMean += 0.01 }},
			{"meta_test.worst", func(r *Result) { r.MetaTest.Worst += 0.01 }},
			{"meta_test.std", func(r *Result) { r.MetaTest.Std += 0.01 }},
			{"meta_test.worst_task", func(r *Result) { r.MetaTest.WorstTask = "b" }}, // neither the largest MSE nor the smallest accuracy
			{"meta_train.weighted_mean", func(r *Result) { r.MetaTrain.Masses[0] = 2 }},
			{"meta_train.mean", func(r *Result) { r.MetaTrain.PerTask[0] = 0.35 }},
			{"meta_train.std", func(r *Result) { r.MetaTrain.Std *= 1.5 }},
		} {
			r := base
			r.MetaTest.PerTask, r.MetaTest.Masses = append([]float64(nil), base.MetaTest.PerTask...), append([]float64(nil), base.MetaTest.Masses...)
			r.MetaTrain.PerTask, r.MetaTrain.Masses = append([]float64(nil), base.MetaTrain.PerTask...), append([]float64(nil), base.MetaTrain.Masses...)
			path := filepath.Join(t.TempDir(), ResultFile)
			if err := WriteJSON(path, r); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadResult(path); err != nil {
				t.Fatalf("%s, undamaged: %v", m.Name, err)
			}
			tc.edit(&r)
			if err := WriteJSON(path, r); err != nil {
				t.Fatal(err)
			}
			_, err := ReadResult(path)
			if err == nil || !strings.Contains(err.Error(), ResultFile+": "+tc.field+" = ") {
				t.Errorf("%s, edited %s: %v, want a refusal naming it", m.Name, tc.field, err)
			}
			os.Remove(path)
		}
	}
}
