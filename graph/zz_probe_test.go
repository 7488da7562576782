package graph

import (
	"fmt"
	"testing"

	"gorgonia.org/gorgonia"
)

func TestZZProbe(t *testing.T) {
	for _, fo := range []bool{false, true} {
		mlp, _ := NewMLP([]int{1, 40, 40, 1}, ReLU)
		obj, err := NewObjective(Spec{Model: mlp, Tasks: 25, Support: 5, Query: 5, InDim: 1, OutDim: 1, Steps: 1, Alpha: 1e-3, FirstOrder: fo, MetaGradient: true})
		if err != nil {
			t.Fatal(err)
		}
		g := obj.Graph()
		var roots gorgonia.Nodes
		for _, n := range g.AllNodes() {
			if n.Op() != nil && fmt.Sprint(n.Op()) == "print" {
				roots = append(roots, n)
			}
		}
		live := map[*gorgonia.Node]bool{}
		var visit func(n *gorgonia.Node)
		visit = func(n *gorgonia.Node) {
			if live[n] {
				return
			}
			live[n] = true
			for _, c := range g.children(n) {
				visit(c)
			}
		}
		for _, r := range roots {
			visit(r)
		}
		fmt.Println("firstOrder", fo, "nodes", len(g.AllNodes()), "live", len(live))
		for _, n := range g.AllNodes() {
			if !live[n] {
				fmt.Printf("  dead %v %v\n", n.Op(), n.Shape())
			}
		}
	}
}
