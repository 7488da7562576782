package run

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// Leaky is a user's method with a bug: from its iteration From on, Update
// moves mass out of p's first task without giving it to another, so p no
// longer sums to 1.
type Leaky struct {
	From int `yaml:"from"`
}

func (s Leaky) New() metalearn.Method { return &leaky{set: s} }

type leaky struct {
	set Leaky
	c   int
	it  int
}

func (m *leaky) Init(masses []float64, batch int) ([]float64, error) {
	m.c = batch
	p := make([]float64, len(masses))
	for i := range p {
		p[i] = 1 / float64(len(p))
	}
	return p, nil
}

func (m *leaky) Draw(rng *rand.Rand, p []float64) (int, float64) {
	i := rng.IntN(len(p))
	return i, float64(len(p)) / float64(m.c) * p[i]
}

func (m *leaky) Update(p []float64, _ []int, _ []float64) {
	if m.it++; m.it >= m.set.From {
		p[0] /= 2
	}
}

func (m *leaky) Check(string, []float64) error { return nil }

func init() {
	metalearn.RegisterMethod(metalearn.MethodInfo{Name: "leaky", New: func() metalearn.MethodSettings { return &Leaky{From: 15} }})
}

// TestMethodContractStopsRun: a registered method whose p stops being a
// distribution stops training at that iteration with an error naming the
// algorithm, the iteration and what is allowed; p.csv and the checkpoint
// keep the last evaluation's good p.
func TestMethodContractStopsRun(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	c.Algorithm = "leaky"
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Train(context.Background(), c, dir, Options{})
	if !errors.Is(err, metalearn.ErrMethod) {
		t.Fatalf("Train: %v, want metalearn.ErrMethod", err)
	}
	for _, want := range []string{"algorithm leaky", "at iteration 15", "want 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	ck, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
	if err != nil || ck.State.Iteration != 10 {
		t.Fatalf("checkpoint: iteration %d, %v; want the last evaluation's, 10", ck.State.Iteration, err)
	}
	if _, err := rundir.ReadP(filepath.Join(dir, rundir.PFile)); err != nil {
		t.Errorf("p.csv: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ResultFile)); err == nil {
		t.Errorf("the stopped run has a %s", rundir.ResultFile)
	}
}
