package metalearn

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestMetricWorst(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, c := range []struct {
		m    Metric
		xs   []float64
		want int
	}{
		{MSE, []float64{0.5, 2, 1, 2}, 1},
		{Accuracy, []float64{0.9, 0.4, 0.95, 0.4}, 1},
		{Accuracy, []float64{0.9}, 0},
		{MSE, nil, -1},
		{MSE, []float64{1, nan, 3}, 1},
		{Accuracy, []float64{nan, 0.1}, 0},
	} {
		if got := c.m.WorstIndex(c.xs); got != c.want {
			t.Errorf("%s.WorstIndex(%v) = %d, want %d", c.m.Name, c.xs, got, c.want)
		}
	}
}

func TestMetricNamed(t *testing.T) {
	t.Parallel()
	for _, m := range Metrics {
		got, err := MetricNamed(m.Name)
		if err != nil || got != m {
			t.Errorf("MetricNamed(%q) = %v, %v", m.Name, got, err)
		}
	}
	if _, err := MetricNamed("mae"); err == nil || err.Error() != `unknown metric "mae" (allowed: mse, accuracy)` {
		t.Errorf("MetricNamed(mae): %v", err)
	}
}

func TestNewTaskStatsDirection(t *testing.T) {
	t.Parallel()
	per := []float64{0.9, 0.5, 0.7}
	mass := []float64{2, 1, 1}
	acc := NewTaskStats(per, []int{1, 1, 1}, mass, Accuracy)
	if acc.WorstTask != 1 || acc.Worst != 0.5 {
		t.Errorf("accuracy worst = task %d (%v), want task 1 (0.5)", acc.WorstTask, acc.Worst)
	}
	if math.Abs(acc.WeightedMean-0.75) > 1e-15 || math.Abs(acc.Mean-0.7) > 1e-15 {
		t.Errorf("weighted mean %v, mean %v, want 0.75, 0.7", acc.WeightedMean, acc.Mean)
	}
	loss := NewTaskStats(per, []int{1, 1, 1}, mass, MSE)
	if loss.WorstTask != 0 || loss.Worst != 0.9 {
		t.Errorf("MSE worst = task %d (%v), want task 0 (0.9)", loss.WorstTask, loss.Worst)
	}
}

// TestNewTaskStatsHugeLosses: per-task losses whose squares (or sum)
// overflow, as a diverging run's last evaluation gives, still have a finite
// mean and standard deviation, those of math/big's exact sums, so that
// metrics.csv gets no +Inf that readers then refuse; ordinary values are
// computed as before.
func TestNewTaskStatsHugeLosses(t *testing.T) {
	t.Parallel()
	for _, per := range [][]float64{
		{0.5, 1.5, 4},
		{8.5e155, 2.3e157, 1e150},
		{1.5e308, 1.7e308, 1e308},
	} {
		mass := []float64{1, 2, 1}
		st := NewTaskStats(per, nil, mass, MSE)
		n := big.NewFloat(float64(len(per))).SetPrec(1000)
		sum, wsum, sq := new(big.Float).SetPrec(1000), new(big.Float).SetPrec(1000), new(big.Float).SetPrec(1000)
		for i, v := range per {
			x := big.NewFloat(v).SetPrec(1000)
			sum.Add(sum, x)
			wsum.Add(wsum, new(big.Float).Mul(x, big.NewFloat(mass[i]/4)))
		}
		mean := new(big.Float).Quo(sum, n)
		for _, v := range per {
			d := new(big.Float).Sub(big.NewFloat(v).SetPrec(1000), mean)
			sq.Add(sq, new(big.Float).Mul(d, d))
		}
		std := new(big.Float).Sqrt(new(big.Float).Quo(sq, n))
		for _, c := range []struct {
			name string
			g    float64
			want *big.Float
		}{{"mean", st.Mean, mean}, {"weighted mean", st.WeightedMean, wsum}, {"std", st.Std, std}} {
			w, _ := c.want.Float64()
			g := c.g
			if math.IsInf(g, 0) || math.IsNaN(g) || math.Abs(g-w) > 1e-12*w {
				t.Errorf("%v: %s %v, want %v", per, c.name, g, w)
			}
		}
	}
}

// TestEvaluateScore: with a scorer giving task i the accuracy 0.9 - 0.2 i,
// the statistics are those of the accuracies, the worst task is the least
// accurate, and the instances are those Evaluate draws.
func TestEvaluateScore(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	q.mass = []float64{1, 1, 2}
	ev := NewEvaluator(quadObjective{q, alpha, 4}, 1, 1, 1, 1)
	acc := func(_ []float64, b *Batch, out []float64) error {
		for r := range out {
			out[r] = 0.9 - 0.2*b.SupportX[r*b.Support]
		}
		return nil
	}
	w := []float64{0.3}
	st, err := ev.EvaluateScore(w, q, 10, rand.New(rand.NewPCG(1, 1)), Accuracy, acc)
	if err != nil {
		t.Fatal(err)
	}
	if st.WorstTask != 2 || math.Abs(st.Worst-0.5) > 1e-15 || math.Abs(st.Mean-0.7) > 1e-15 || math.Abs(st.WeightedMean-0.65) > 1e-15 {
		t.Errorf("accuracy stats %+v, want worst task 2 (0.5), mean 0.7, weighted mean 0.65", st)
	}
	loss, err := ev.Evaluate(w, q, 10, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(loss.Count, st.Count) {
		t.Errorf("EvaluateScore measured tasks %v times, Evaluate %v", st.Count, loss.Count)
	}
	nan := func(_ []float64, _ *Batch, out []float64) error {
		out[0] = math.NaN()
		return nil
	}
	if _, err := ev.EvaluateScore(w, q, 10, rand.New(rand.NewPCG(1, 1)), Accuracy, nan); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "accuracy NaN") {
		t.Errorf("NaN accuracy: error %v", err)
	}
}
