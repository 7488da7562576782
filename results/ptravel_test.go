package results

import (
	"math"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
)

func TestPTravel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		weights [][]float64
		want    PTravel
	}{
		{"fixed", [][]float64{{0.25, 0.25, 0.25, 0.25}, {0.25, 0.25, 0.25, 0.25}, {0.25, 0.25, 0.25, 0.25}},
			PTravel{Final: 0, Max: 0, Effective: 4, Top: "a", TopWeight: 0.25, TopRatio: 1}},
		// TV after each row: 0, 0.15, 0.3, 0.25: half of 0.25 first at 200,
		// 90% first at 300, the max 0.3 at 300.
		{"moving", [][]float64{{0.25, 0.25, 0.25, 0.25}, {0.4, 0.1, 0.25, 0.25}, {0.55, 0.05, 0.15, 0.25}, {0.5, 0.05, 0.2, 0.25}},
			PTravel{Final: 0.25, Max: 0.3, Half: 200, Most: 300, Top: "a", TopWeight: 0.5, TopRatio: 2,
				Effective: math.Exp(-(0.5*math.Log(0.5) + 0.05*math.Log(0.05) + 0.2*math.Log(0.2) + 0.25*math.Log(0.25)))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Dir: "runs/x"}
			r.Config.Name, r.Config.Seed = "g-trmaml-second", 2
			r.P.Tasks = []string{"a", "b", "c", "d"}
			for k, w := range tc.weights {
				r.P.Iterations = append(r.P.Iterations, 100*(k+1))
				r.P.Weights = append(r.P.Weights, w)
			}
			got, err := PTravelOf(r)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Run, want.Tasks, want.Iterations = "g-trmaml-second seed 2", 4, 100*len(tc.weights)
			if math.Abs(got.Final-want.Final) > 1e-12 || math.Abs(got.Max-want.Max) > 1e-12 || math.Abs(got.Effective-want.Effective) > 1e-12 {
				t.Errorf("distances %+v, want %+v", got, want)
			}
			got.Final, got.Max, got.Effective = want.Final, want.Max, want.Effective
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
	d := &Run{Dir: "d", P: PHistory{Tasks: []string{"a"}, Iterations: []int{0}, Weights: [][]float64{{1}}}}
	d.Config.Name, d.Config.Seed = "d", 1
	md, err := PTravelMarkdown([]*Run{d}, func(*Run) string { return "1e-4" })
	if err != nil || !strings.Contains(md, "| d seed 1 | 1e-4 | 0 | 0.000 | 0.000 | - | - | 1.0 of 1 | a | 1.000 | 1.0 |") {
		t.Errorf("markdown %q, %v", md, err)
	}
	if _, err := PTravelOf(&Run{Dir: "e"}); err == nil {
		t.Error("a run without p rows: no error")
	}
}

// TestStepP: the step size of each method's ascent on p, named by its own
// setting; none for a method that keeps p fixed.
func TestStepP(t *testing.T) {
	for _, c := range []struct{ alg, want string }{
		{"trmaml", "p_lr = 0.0001"},
		{"trmaml_entropic", "p_lr = 0.001"},
		{"cvar", "p_lr = 0.0001"},
		{"dromaml", "eta_q = 0.01"},
		{"maml", ""},
		{"drmaml", ""},
	} {
		r := &Run{Config: configs.Defaults()}
		r.Config.Algorithm = c.alg
		if got := StepP(r); got != c.want {
			t.Errorf("%s: %q, want %q", c.alg, got, c.want)
		}
	}
}
