package metalearn

import (
	"math"
	"testing"
)

// TestGoldenTrajectories pins the exact results (float64 bits) of short runs
// on quadTasks, recorded with the code before the Method refactoring, so that
// the reshaped driver is proven to reproduce TR-MAML and MAML bit for bit.
func TestGoldenTrajectories(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	q.mass = []float64{1, 2, 3}
	cases := []struct {
		alg    string
		out    OutputRule
		radius float64
		w      uint64    // solution's w
		p      [3]uint64 // solution's p (TR-MAML only)
		last   uint64    // last iterate's w
	}{
		{"trmaml", "last", 0, 0x3fecc8e294810c0c, [3]uint64{0x3fe7f2ea1075a36a, 0x0, 0x3fd01a2bdf14b92c}, 0x3fecc8e294810c0c},
		{"trmaml", "T1", 0, 0x3fe838142d8044b4, [3]uint64{0x3fe2b1734421f7d9, 0x3f61e5a62c3f9e36, 0x3fda794e2b639119}, 0x3fecc8e294810c0c},
		{"trmaml", "T2", 1.5, 0x3ff2b18016841cd1, [3]uint64{0x3fe124e0986e3835, 0x3f92863d1e029ff3, 0x3fdc8ddafd436597}, 0x3fee12068933ff74},
		{"maml", "T1", 0, 0x3ff5e9785e4ba792, [3]uint64{}, 0x3ff2fa59f726f6a9},
		{"maml", "T2", 0, 0x3ff5ae32f65cb83b, [3]uint64{}, 0x3ff2b00b5bc0e212},
	}
	for _, c := range cases {
		var m Method = TRMAML{PLR: 0.05}.New()
		if c.alg == "maml" {
			m = MAML{}.New()
		}
		s := Settings{Method: m, Iterations: 500, Batch: 2, BallRadius: c.radius, Output: c.out}
		s.Optimizer, s.Seed = &SGD{LR: 0.05}, 7
		tr, err := NewTrainer(quadObjective{q: q, alpha: alpha, tasks: 2}, q, []float64{3}, s)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < s.Iterations; i++ {
			if _, err := tr.Step(); err != nil {
				t.Fatal(err)
			}
		}
		w, p := tr.Solution()
		if math.Float64bits(w[0]) != c.w || math.Float64bits(tr.State.W[0]) != c.last {
			t.Errorf("%s %s: w = %v (last %v), want %v (last %v)", c.alg, c.out, w[0], tr.State.W[0],
				math.Float64frombits(c.w), math.Float64frombits(c.last))
		}
		if c.alg == "trmaml" {
			for i := range p {
				if math.Float64bits(p[i]) != c.p[i] {
					t.Errorf("%s %s: p[%d] = %v, want %v", c.alg, c.out, i, p[i], math.Float64frombits(c.p[i]))
				}
			}
		}
	}
}
