// Package exec runs a gorgonia graph: it lists the nodes a set of outputs
// depends on in an order where every node follows its inputs, runs them,
// and hands the large values' buffers back to a pool after their last
// reader in a run (liveness), so that a run peaks at the values alive at
// once, not at the whole graph. It replaces gorgonia's TapeMachine, whose
// per-run cost (a goroutine locked to a thread, per-instruction
// bookkeeping, reallocation of every register after Reset) showed in
// profiles.
package exec

import (
	"fmt"

	"github.com/trmaml/trmaml/graph/internal/memory"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Pooled is an op that keeps its output buffer between runs or takes it
// from an arena: the program places the large ones in arenas.
type Pooled interface {
	gorgonia.Op
	// OutSize is the number of values of the op's output, OutDtype their
	// type.
	OutSize() int
	OutDtype() tensor.Dtype
	// UseArena makes the op's output the part of a at offset off.
	UseArena(a *memory.Arena, off int)
	// Release hands the output back to the arena: its last reader in this
	// run is done.
	Release()
}

// Program evaluates the nodes a set of outputs depends on; nodes nothing
// reads (differentiation also builds the gradients of data and constants)
// are never run.
type Program struct {
	Steps []Step
	Vals  []gorgonia.Value
	Pool  *memory.Pool // shared with other programs by graph.Objective.ShareBuffers
	// Arenas hold the large values, one per dtype, their buffers taken
	// from Pool.
	Arenas []*memory.Arena
	// First is the number of steps the first output needs: they come
	// first, so runs of [0, First) and [First, len(Steps)) are the whole
	// program in its order, with the first output known in between.
	First int
}

// Step computes Vals[I] = Op(Vals[Args]...) for a node with an op; input
// nodes have no step and keep the value bound to them. After the step, the
// ops in release have had their last reader.
type Step struct {
	I       int
	Op      gorgonia.Op
	Args    []int
	Name    string
	release []Pooled
}

// PooledSize is the smallest output (in values) whose buffer is recycled:
// below it, the bookkeeping costs more than the memory is worth.
const PooledSize = 1 << 14

// Compile lists the steps of g for outputs and returns the program and the
// value index of each output, its large values in arenas (placeArenas).
func Compile(g *gorgonia.ExprGraph, outputs gorgonia.Nodes) (*Program, []int) {
	p := &Program{}
	index := map[*gorgonia.Node]int{}
	for k, out := range outputs {
		for _, n := range PostOrder(g, out) {
			if _, ok := index[n]; ok {
				continue
			}
			i := len(p.Vals)
			index[n] = i
			p.Vals = append(p.Vals, n.Value())
			if n.Op() == nil {
				continue
			}
			s := Step{I: i, Op: n.Op(), Name: n.Name()}
			for _, c := range Inputs(g, n) {
				s.Args = append(s.Args, index[c])
			}
			p.Steps = append(p.Steps, s)
		}
		if k == 0 {
			p.First = len(p.Steps)
		}
	}
	idx := make([]int, len(outputs))
	isOut := map[int]bool{}
	for k, out := range outputs {
		idx[k] = index[out]
		isOut[idx[k]] = true
	}
	p.placeArenas(isOut)
	return p, idx
}

// placeArenas puts the outputs of the Pooled ops of at least PooledSize
// values that no gorgonia op reads (such an op may return a view of its
// input) and that are no output (isOut) in arenas, one per dtype, taken
// from the program's new pool, at places memory.Plan gives them by their
// lifetimes: from their step to their last reader, which releases them.
func (p *Program) placeArenas(isOut map[int]bool) {
	last := map[int]int{}
	foreign := map[int]bool{}
	for si, s := range p.Steps {
		_, ours := s.Op.(Pooled)
		for _, a := range s.Args {
			last[a] = si
			foreign[a] = foreign[a] || !ours
		}
	}
	p.Pool = memory.NewPool()
	type placed struct {
		ops  []Pooled
		vals []memory.Value
	}
	byDtype := map[tensor.Dtype]*placed{}
	var dtypes []tensor.Dtype
	for si, s := range p.Steps {
		o, ok := s.Op.(Pooled)
		if !ok || isOut[s.I] || foreign[s.I] || o.OutSize() < PooledSize {
			continue
		}
		if r, read := last[s.I]; read {
			d := byDtype[o.OutDtype()]
			if d == nil {
				d = &placed{}
				byDtype[o.OutDtype()] = d
				dtypes = append(dtypes, o.OutDtype())
			}
			d.ops = append(d.ops, o)
			d.vals = append(d.vals, memory.Value{Size: o.OutSize(), First: si, Last: r})
			p.Steps[r].release = append(p.Steps[r].release, o)
		}
	}
	for _, dt := range dtypes {
		d := byDtype[dt]
		offsets, size := memory.Plan(d.vals)
		a := memory.NewArena(p.Pool, dt, size)
		for i, o := range d.ops {
			o.UseArena(a, offsets[i])
		}
		p.Arenas = append(p.Arenas, a)
	}
}

// Run evaluates every step once.
func (p *Program) Run() error { return p.RunSteps(p.Steps) }

// RunSteps runs steps, a part of p.Steps in its order.
func (p *Program) RunSteps(steps []Step) error {
	var in [8]gorgonia.Value
	for _, s := range steps {
		args := in[:0]
		for _, a := range s.Args {
			args = append(args, p.Vals[a])
		}
		v, err := s.Op.Do(args...)
		if err != nil {
			return fmt.Errorf("node %q (%v): %w", s.Name, s.Op, err)
		}
		p.Vals[s.I] = v
		for _, o := range s.release {
			o.Release()
		}
	}
	return nil
}

// Inputs returns the inputs of n in argument order.
func Inputs(g *gorgonia.ExprGraph, n *gorgonia.Node) gorgonia.Nodes {
	it := g.From(n.ID())
	out := make(gorgonia.Nodes, 0, it.Len())
	for it.Next() {
		out = append(out, it.Node().(*gorgonia.Node))
	}
	return out
}

// PostOrder lists the nodes root depends on, every node after its inputs.
func PostOrder(g *gorgonia.ExprGraph, root *gorgonia.Node) gorgonia.Nodes {
	var order gorgonia.Nodes
	seen := map[*gorgonia.Node]bool{}
	type frame struct {
		n        *gorgonia.Node
		children gorgonia.Nodes
		next     int
	}
	stack := []frame{{n: root, children: Inputs(g, root)}}
	seen[root] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.children) {
			c := top.children[top.next]
			top.next++
			if !seen[c] {
				seen[c] = true
				stack = append(stack, frame{n: c, children: Inputs(g, c)})
			}
			continue
		}
		order = append(order, top.n)
		stack = stack[:len(stack)-1]
	}
	return order
}
