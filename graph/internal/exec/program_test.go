package exec

import (
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestCompileRunsOutputsInOrder: a program lists every node after its
// inputs, runs only what its outputs need, puts the first output's steps
// first, and computes the values gorgonia's own machine does.
func TestCompileRunsOutputsInOrder(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithBacking([]float64{1, 2, 3}))))
	sq := gorgonia.Must(gorgonia.Square(x))
	sum := gorgonia.Must(gorgonia.Sum(sq))
	twice := gorgonia.Must(gorgonia.Add(x, x))
	unused := gorgonia.Must(gorgonia.Neg(x)) // no output reads it
	p, idx := Compile(g, gorgonia.Nodes{sum, twice})
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if got := p.Vals[idx[0]].Data(); got != 14.0 {
		t.Errorf("sum of squares %v, want 14", got)
	}
	if got := p.Vals[idx[1]].Data().([]float64); !slices.Equal(got, []float64{2, 4, 6}) {
		t.Errorf("x + x = %v, want [2 4 6]", got)
	}
	if p.First != 2 || len(p.Steps) != 3 {
		t.Errorf("%d steps, %d for the first output, want 3 and 2", len(p.Steps), p.First)
	}
	done := map[int]bool{}
	for _, s := range p.Steps {
		if s.Op == unused.Op() && s.Name == unused.Name() {
			t.Errorf("the program runs %s, which no output reads", s.Name)
		}
		for _, a := range s.Args {
			if p.Vals[a] == nil && !done[a] {
				t.Errorf("step %s reads value %d before it is computed", s.Name, a)
			}
		}
		done[s.I] = true
	}
}
