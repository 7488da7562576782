package graph

import (
	"fmt"
	"sort"
	"testing"
)

func TestZZProbe(t *testing.T) {
	for _, fo := range []bool{false, true} {
		mlp, _ := NewMLP([]int{1, 40, 40, 1}, ReLU)
		obj, err := NewObjective(Spec{Model: mlp, Tasks: 25, Support: 5, Query: 5, InDim: 1, OutDim: 1, Steps: 1, Alpha: 1e-3, FirstOrder: fo, MetaGradient: true})
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for _, n := range obj.Graph().AllNodes() {
			k := "input"
			if n.Op() != nil {
				k = fmt.Sprintf("%T %v", n.Op(), n.Op())
			}
			counts[k]++
		}
		var keys []string
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Println("firstOrder", fo, "nodes", len(obj.Graph().AllNodes()))
		for _, k := range keys {
			fmt.Printf("%4d %s\n", counts[k], k)
		}
	}
}
