package graph

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestTaskGroups runs a 5-task meta-gradient objective as one graph and
// in task groups (of 1, 2 and 2 tasks, in turn): the same losses,
// accuracies and meta-gradient up to rounding, in less buffer memory.
func TestTaskGroups(t *testing.T) {
	const tasks, ways = 5, 3
	m, err := Conv4{Filters: 8, Blocks: 2, Channels: 3, Height: 16, Width: 15, Pool: PoolMax, BatchNorm: BatchNormAdapt}.CNN(ways)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	b := randomImages(rng, tasks, ways, 1, 3, 16, 15, 3)
	w := m.Init(rng)
	weights := []float64{0.1, 0.3, 0.2, 0.25, 0.15}
	spec := Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: tasks, Support: ways, Query: 3 * ways,
		InShape: m.InShape(), OutDim: ways, Steps: 2, Alpha: 0.2, MetaGradient: true}
	type result struct {
		losses, acc, grad []float64
		bytes             int64
	}
	run := func(inputs int) result {
		obj, err := newObjective(spec, tuning{groupInputs: inputs})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := obj.inTurn, inputs == 1; got != want {
			t.Fatalf("tuning.groupInputs %d: in groups %v, want %v", inputs, got, want)
		}
		r := result{make([]float64, tasks), make([]float64, tasks), make([]float64, len(w)), 0}
		for range 2 { // the second call reuses the buffers and the summed gradient
			if err := obj.LossesMetric(w, b, weights, r.losses, r.acc, r.grad); err != nil {
				t.Fatal(err)
			}
		}
		r.bytes = obj.bufferBytes()
		return r
	}
	one, groups := run(1<<30), run(1)
	if relErr(groups.losses, one.losses) > 1e-13 || relErr(groups.grad, one.grad) > 1e-12 || !reflect.DeepEqual(groups.acc, one.acc) {
		t.Errorf("in groups: losses %v, accuracies %v, meta-gradient relative error %.3g; one graph: %v, %v",
			groups.losses, groups.acc, relErr(groups.grad, one.grad), one.losses, one.acc)
	}
	if groups.bytes >= one.bytes*3/5 {
		t.Errorf("in groups of 2 tasks the buffers take %d bytes, one graph of 5 %d", groups.bytes, one.bytes)
	}
	t.Logf("buffers: %d bytes in groups, %d in one graph", groups.bytes, one.bytes)
}
