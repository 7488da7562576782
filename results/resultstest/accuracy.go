package resultstest

import (
	"github.com/trmaml/trmaml/tasks/omniglot"
	"math"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// Alphabets of NewAccuracy: five meta-training alphabets, deliberately not
// in the order of their character counts TrainCharacters, and four meta-test
// alphabets.
var (
	TrainAlphabets  = []string{"Latin", "Tifinagh", "Greek", "Japanese_(hiragana)", "Korean"}
	TrainCharacters = []int{26, 55, 24, 52, 40}
	TestAlphabets   = []string{"Atlantean", "Kannada", "Mongolian", "Sylheti"}
)

// Ways is the N of NewAccuracy's N-way instances, which sets its masses.
const Ways = 5

// TrainMasses are NewAccuracy's meta-training masses, C(Z_i, Ways) relative
// to the largest, as the Omniglot task set computes them.
func TrainMasses() []float64 {
	logC := func(z, n int) float64 {
		a, _ := math.Lgamma(float64(z + 1))
		b, _ := math.Lgamma(float64(n + 1))
		c, _ := math.Lgamma(float64(z - n + 1))
		return a - b - c
	}
	top := logC(55, Ways)
	m := make([]float64, len(TrainCharacters))
	for i, z := range TrainCharacters {
		m[i] = math.Exp(logC(z, Ways) - top)
	}
	return m
}

// NewAccuracy returns a valid classification run (metric accuracy) of a
// Ways-way Omniglot config with k support images per class, with
// three evaluations (iterations 0, 100, 200). Per-alphabet errors scale with
// level: the final meta-training accuracies are 1 - level*(0.05, 0.02, 0.3,
// 0.1, 0.15), so Greek (index 2) is the worst, and the meta-test ones
// 1 - level*(0.1, 0.2, 0.3, 0.4). The metrics.csv accuracy columns rise
// with the evaluation row r: mean 1 - 0.2*level/(r+1), worst
// 1 - 0.5*level/(r+1), std 0.1*level/(r+1); the batch columns are losses.
// p is uniform for MAML; for TR-MAML it moves towards Greek, ending at
// (0.1, 0.1, 0.5, 0.15, 0.15).
func NewAccuracy(name, algorithm, order string, seed uint64, k int, level float64) Spec {
	s := New(name, algorithm, order, seed, k, level)
	cfg, err := configs.Builtin("omniglot_quick")
	if err != nil {
		panic(err) // an embedded file: a broken build, not a test input
	}
	cfg.Name, cfg.Algorithm, cfg.Order, cfg.Seed = name, algorithm, order, seed
	cfg.Task.Support = k
	cfg.Task.Section(omniglot.Name).(*omniglot.Config).Ways = Ways
	cfg.Meta.Iterations, cfg.Eval.Every = 200, 100
	s.Config = cfg
	s.Metrics, s.P = nil, nil
	final := []float64{0.1, 0.1, 0.5, 0.15, 0.15}
	for r := range s.Iterations {
		d := level / float64(r+1)
		row := [9]float64{10 * float64(r) * level, 2 * d, 4 * d, 1 - 0.2*d, 1 - 0.5*d, 0.1 * d, 1 - 0.25*d, 1 - 0.6*d, 0.12 * d}
		if r == 0 {
			row[1], row[2] = math.NaN(), math.NaN()
		}
		s.Metrics = append(s.Metrics, row)
		p := make([]float64, len(TrainAlphabets))
		for i := range p {
			p[i] = 0.2
			if algorithm == "trmaml" {
				f := float64(r) / 2
				p[i] = (1-f)*0.2 + f*final[i]
			}
		}
		s.P = append(s.P, p)
	}
	train := []float64{0.05, 0.02, 0.3, 0.1, 0.15}
	test := []float64{0.1, 0.2, 0.3, 0.4}
	for i := range train {
		train[i] = 1 - level*train[i]
	}
	for i := range test {
		test[i] = 1 - level*test[i]
	}
	testMass := make([]float64, len(TestAlphabets))
	for i := range testMass {
		testMass[i] = 1
	}
	s.Result.Metric = metalearn.Accuracy.Name
	s.Result.MetaTrain = AccuracyStats(train, TrainAlphabets, TrainMasses(), 50)
	s.Result.MetaTest = AccuracyStats(test, TestAlphabets, testMass, 40)
	s.Result.FinalP = nil
	if algorithm == "trmaml" {
		s.Result.FinalP = s.P[len(s.P)-1]
	}
	return s
}

// AccuracyStats are result.json's statistics of the per-task accuracies
// per (fractions) of tasks with masses mass, as training computes them:
// for a test to give a run other per-task values that it still loads.
func AccuracyStats(per []float64, tasks []string, mass []float64, instances int) rundir.Stats {
	st := metalearn.NewTaskStats(per, nil, mass, metalearn.Accuracy)
	return rundir.Stats{
		Mean: st.Mean, WeightedMean: st.WeightedMean, Worst: st.Worst, WorstTask: tasks[st.WorstTask],
		Std: st.Std, Instances: instances, PerTask: per, Tasks: tasks, Masses: mass,
	}
}
