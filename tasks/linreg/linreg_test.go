package linreg_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/models/mlp"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/tasks/linreg"
)

// load reads a linreg config of the repository, shortened to seconds.
func load(t *testing.T, name string) configs.Config {
	t.Helper()
	c, err := configs.Load("../../configs/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Meta.Iterations, c.Eval.Every = 600, 600
	c.Eval.Instances, c.Eval.TrainInstances, c.Eval.Query = 900, 900, 200
	return c
}

// TestTRMAMLWorstTaskBelowMAML trains MAML and TR-MAML end to end on the
// skewed tasks of configs/linreg_skewed_*.yaml: MAML fits the task that
// carries most of the mass and leaves the noisiest, rare task 1 the worst;
// TR-MAML's worst task must be clearly better, and TR-MAML must have moved p
// towards task 1.
func TestTRMAMLWorstTaskBelowMAML(t *testing.T) {
	t.Parallel()
	results := map[string]*rundir.Result{}
	for _, alg := range []string{"maml", "trmaml"} {
		r, err := run.Train(context.Background(), load(t, "linreg_skewed_"+alg), t.TempDir(), run.Options{})
		if err != nil {
			t.Fatal(err)
		}
		results[alg] = r
	}
	m, tr := results["maml"].MetaTest, results["trmaml"].MetaTest
	if m.WorstTask != "task 1" {
		t.Errorf("MAML's worst task is %s, want task 1 (rare and noisiest)", m.WorstTask)
	}
	if !(tr.Worst < 0.85*m.Worst) {
		t.Errorf("worst-task MSE: TR-MAML %.4f, MAML %.4f: want TR-MAML's at least 15%% lower", tr.Worst, m.Worst)
	}
	if p := results["trmaml"].FinalP; len(p) != 3 || !(p[0] > 1.0/3) {
		t.Errorf("TR-MAML's final p %v: want task 1's weight above uniform", p)
	}
}

// TestAdaptedLossClosedForm checks the family's instances through the
// training graph against a closed form: from the zero linear model, one
// inner step of size alpha on the support MSE (1/K) sum (y - w'x - b)^2
// gives w' = (2 alpha / K) sum y x and b' = (2 alpha / K) sum y, whatever the
// parameter layout, and the query loss is the MSE of that model.
func TestAdaptedLossClosedForm(t *testing.T) {
	t.Parallel()
	c := load(t, "linreg_skewed_maml")
	s, err := run.Build(c, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, out := s.Train.Dims()
	if in != 2 || out != 1 {
		t.Fatalf("dims %d, %d: want 2, 1", in, out)
	}
	b := metalearn.NewBatch(c.Meta.Batch, c.Task.Support, c.Task.Query, in, out)
	rng := rand.New(rand.NewPCG(1, 2))
	for row := range b.Tasks {
		s.Train.Sample(row%s.Train.Len(), rng, b, row)
	}
	losses := make([]float64, b.Tasks)
	if err := s.Objective.Losses(make([]float64, s.Objective.NumParams()), b, nil, losses, nil); err != nil {
		t.Fatal(err)
	}
	alpha := c.Inner.Alpha
	for row := range b.Tasks {
		sx, sy, qx, qy := b.Row(row)
		k := float64(len(sy))
		w, bias := make([]float64, in), 0.0
		for p, y := range sy {
			for j := range w {
				w[j] += 2 * alpha / k * y * sx[p*in+j]
			}
			bias += 2 * alpha / k * y
		}
		want := 0.0
		for p, y := range qy {
			r := y - bias
			for j := range w {
				r -= w[j] * qx[p*in+j]
			}
			want += r * r / float64(len(qy))
		}
		if math.Abs(losses[row]-want) > 1e-12*math.Max(1, want) {
			t.Errorf("instance %d: graph loss %.15g, closed form %.15g", row, losses[row], want)
		}
	}
}

// TestRefusals: the section is checked field by field, in the file's terms.
func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{"task:\n  family: linreg\n  linreg:\n    tasks: []\n", "task.linreg.tasks = \"an empty list\": must list at least one task"},
		{"task:\n  family: linreg\n  linreg:\n    tasks: [{theta: [1, 2], variances: [1], noise: 0, mass: 1}]\n", "task.linreg.tasks[0].variances"},
		{"task:\n  family: linreg\n  linreg:\n    tasks: [{theta: [1], variances: [0], noise: -1, mass: 0}]\n", "task.linreg.tasks[0].noise = -1: must be >= 0"},
		{"task:\n  family: linreg\n  linreg:\n    tasks: [{theta: [1], variances: [1], nois: 1}]\n", `x.yaml:4: unknown field "nois" in task.linreg.tasks[0] (allowed: theta, variances, noise, mass)`},
	} {
		if _, err := configs.Parse("x.yaml", []byte(tc.yaml)); err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
	c, err := configs.Parse("x.yaml", []byte("task:\n  family: linreg\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mlp.Section(c).Hidden) != 0 || c.Inner.Alpha != 0.25 || c.Settings("trmaml").(*metalearn.TRMAML).PLR != linreg.DefaultPLR {
		t.Errorf("family defaults: hidden %v, alpha %v, p_lr %v", mlp.Section(c).Hidden, c.Inner.Alpha, c.Settings("trmaml"))
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
