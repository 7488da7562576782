package graph

import (
	"github.com/trmaml/trmaml/graph/internal/exec"
	"gorgonia.org/gorgonia"
)

// compile makes the program of g for outputs (graph/internal/exec: the
// steps in order, the large values in arenas by their lifetimes) and
// returns it with the value index of each output; the ops take tune's
// elemsPiece, and the tiles only the first copy where that is all that is
// read (firstTiles).
func compile(g *Graph, outputs gorgonia.Nodes, tune tuning) (*exec.Program, []int) {
	p, idx := exec.Compile(g.ExprGraph, outputs)
	isOut := map[int]bool{}
	for _, i := range idx {
		isOut[i] = true
	}
	firstTiles(p, isOut)
	for _, s := range p.Steps {
		if o, ok := s.Op.(*op); ok {
			o.a.piece = tune.elemsPiece
		}
	}
	return p, idx
}

// firstTiles makes every tile step whose value is read only as the tiled
// b of products (bmm's tiledB, which reads b[0]) and is no output write its
// first copy only, and every other tile step all copies: the meta-weights'
// tiles of an MLP, (25, 40, 40) for the sine MLP, of which the products
// read one (40, 40) copy. It changes the graph's ops in place, so it
// relies on every graph being compiled into one program (newObjective).
func firstTiles(p *exec.Program, isOut map[int]bool) {
	onlyFirst := map[int]bool{}
	for _, s := range p.Steps {
		if o, ok := s.Op.(*op); ok {
			if _, ok := o.k.(tileKernel); ok && !isOut[s.I] {
				onlyFirst[s.I] = true
			}
		}
	}
	for _, s := range p.Steps {
		o, ours := s.Op.(*op)
		k, isBmm := bmmKernel{}, false
		if ours {
			k, isBmm = o.k.(bmmKernel)
		}
		for j, a := range s.Args {
			if !isBmm || !k.tiledB || j != 1 {
				delete(onlyFirst, a)
			}
		}
	}
	for _, s := range p.Steps {
		if o, ok := s.Op.(*op); ok {
			if k, ok := o.k.(tileKernel); ok {
				o.k = tileKernel{n: k.n, first: onlyFirst[s.I]}
			}
		}
	}
}
