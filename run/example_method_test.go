package run_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results/display"
	"github.com/trmaml/trmaml/run"
)

// Tilted moves p towards the tasks that lose most: after each iteration
// the mass p gives the iteration's drawn tasks is shared among them in
// proportion to exp(T f_i), f_i a task's mean loss in the iteration. T = 0
// keeps the tasks' average; a large T moves the mass to the worst task of
// each draw. Its state is p alone, as metalearn.Method requires: the
// trainer checkpoints p, so a resumed run continues exactly.
// These are its settings, exported fields with yaml tags: the config
// section tilted: {t: ...}. New starts a run of them (tilted).
type Tilted struct {
	T float64 `yaml:"t"`
}

func (s Tilted) New() metalearn.Method { return &tilted{set: s} }

// tilted is a running Tilted: its settings and the meta-batch size.
type tilted struct {
	set Tilted
	c   int
}

func (m *tilted) Init(masses []float64, batch int) ([]float64, error) {
	m.c = batch
	p := make([]float64, len(masses))
	for i := range p {
		p[i] = 1 / float64(len(p))
	}
	return p, nil
}

// Draw samples tasks uniformly and weighs task i's loss (n/C) p_i, an
// unbiased estimate of sum_i p_i grad F_i.
func (m *tilted) Draw(rng *rand.Rand, p []float64) (int, float64) {
	i := rng.IntN(len(p))
	return i, float64(len(p)) / float64(m.c) * p[i]
}

func (m *tilted) Update(p []float64, tasks []int, losses []float64) {
	drawn := slices.Compact(slices.Sorted(slices.Values(tasks))) // one order, so sums round alike on resume
	f, n := make([]float64, len(drawn)), make([]float64, len(drawn))
	for k, i := range tasks {
		j, _ := slices.BinarySearch(drawn, i)
		f[j] += losses[k]
		n[j]++
	}
	for j := range f {
		f[j] /= n[j]
	}
	top := slices.Max(f) // exp(T (f - top)) cannot overflow
	mass, z := 0.0, 0.0
	for j, i := range drawn {
		mass += p[i]
		f[j] = math.Exp(m.set.T * (f[j] - top))
		z += f[j]
	}
	for j, i := range drawn {
		p[i] = mass * f[j] / z
	}
}

func (m *tilted) Check(name string, p []float64) error {
	for i, v := range p {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%s[%d] = %v: not a probability", name, i, v)
		}
	}
	return nil
}

// The method's registration, and its name in reports, in an init function
// of its package.
func init() {
	metalearn.RegisterMethod(metalearn.MethodInfo{
		Name: "tilted",
		New:  func() metalearn.MethodSettings { return &Tilted{T: 1} },
		Check: func(s metalearn.MethodSettings) []metalearn.SettingError {
			if t := s.(*Tilted).T; !(t >= 0) {
				return []metalearn.SettingError{{Key: "t", Value: t, Rule: "must be >= 0"}}
			}
			return nil
		},
	})
	display.NameMethod("tilted", display.MethodName{Display: "tilted MAML"})
}

// Example_newMethod uses a method added in its own file: the algorithm, its
// config section and its registration (the init function above). Configs
// then name it and set its section; nothing else in the framework changes.
func Example_newMethod() {
	file := `
name: tilted_linreg
algorithm: tilted
tilted: {t: 20}
task: {family: linreg}
meta: {iterations: 100, batch: 10, lr: 1.0e-2}
eval: {every: 100, instances: 30, train_instances: 30, query: 20}
`
	cfg, err := configs.Parse("tilted.yaml", []byte(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "tilted")
	defer os.RemoveAll(dir)
	res, err := run.Train(context.Background(), cfg, dir, run.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Algorithm, "trained; p moved:", res.FinalP[0] != 1.0/3)

	_, err = configs.Parse("typo.yaml", []byte("algorithm: tilted\ntilted: {temperature: 20}\n"))
	fmt.Println(err)
	_, err = configs.Parse("neg.yaml", []byte("algorithm: tilted\ntilted: {t: -1}\n"))
	fmt.Println(err)
	// Output:
	// tilted trained; p moved: true
	// typo.yaml:2: unknown field "temperature" in tilted (allowed: t)
	// neg.yaml:2: tilted.t = -1: must be >= 0
}

// TestTiltedResumes interrupts a run of the example method between its
// checkpoints and resumes it: a method whose state is p alone ends where
// the uninterrupted run ends, final p and scores bit for bit.
func TestTiltedResumes(t *testing.T) {
	cfg, err := configs.Parse("tilted.yaml", []byte(`
algorithm: tilted
tilted: {t: 20}
task: {family: linreg}
meta: {iterations: 60, batch: 2, lr: 1.0e-2}
eval: {every: 20, instances: 30, train_instances: 30, query: 20}
`))
	if err != nil {
		t.Fatal(err)
	}
	full, err := run.Train(context.Background(), cfg, filepath.Join(t.TempDir(), "full"), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cut")
	_, err = run.Train(ctxtest.StopAfter(context.Background(), 37), cfg, dir, run.Options{})
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("interrupted run: %v, want run.ErrInterrupted", err)
	}
	resumed, err := run.Resume(context.Background(), dir, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resumed.FinalP, full.FinalP) || resumed.MetaTest.Mean != full.MetaTest.Mean || resumed.MetaTest.Worst != full.MetaTest.Worst {
		t.Errorf("resumed: p %v, meta-test mean %v worst %v\nuninterrupted: p %v, mean %v worst %v",
			resumed.FinalP, resumed.MetaTest.Mean, resumed.MetaTest.Worst, full.FinalP, full.MetaTest.Mean, full.MetaTest.Worst)
	}
}
