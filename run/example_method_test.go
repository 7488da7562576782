package run_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results/display"
	"github.com/trmaml/trmaml/run"
)

// Tilted weighs each task by exp(T f_i), f_i the last loss sampled from
// it: T = 0 is the tasks' average, a large T approaches the worst task.
// These are its settings, exported fields with yaml tags: the config
// section tilted: {t: ...}. New starts a run of them (tilted).
type Tilted struct {
	T float64 `yaml:"t"`
}

func (s Tilted) New() metalearn.Method { return &tilted{set: s} }

// tilted is a running Tilted: its settings and its state.
type tilted struct {
	set  Tilted
	last []float64
	c    int
}

func (m *tilted) Init(masses []float64, batch int) ([]float64, error) {
	m.last, m.c = make([]float64, len(masses)), batch
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
	for k, i := range tasks {
		m.last[i] = losses[k]
	}
	sum := 0.0
	for i := range p {
		p[i] = math.Exp(m.set.T * m.last[i])
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
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
