package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/tensor"
)

// TestLanesSameValues: an evaluation objective split into lanes computes
// every task's loss and accuracy bit for bit the same on 1, 2 and 3
// goroutines, alone and in a pool shared with a training objective, call
// after call, and within rounding of one graph of all the tasks (a
// product's kernel may round a row differently for fewer rows), for even
// and uneven splits.
func TestLanesSameValues(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cnn, err := NewCNN(12, 12, 1, 8, 2, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := NewMLP([]int{1, 16, 16, 1}, ReLU)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	const tasks = 5
	for _, c := range []struct {
		name  string
		spec  Spec
		batch *metalearn.Batch
		w     []float64
		tol   float64 // against one graph, relative
	}{
		{"CNN, float32", Spec{Model: cnn, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: tasks, Support: 3, Query: 12,
			InShape: cnn.InShape(), OutDim: 3, Steps: 1, Alpha: 0.2, Dtype: tensor.Float32},
			randomImages(rng, tasks, 3, 1, 4, 12, 12, 1), cnn.Init(rng), 1e-6},
		{"MLP, float64, two steps", Spec{Model: mlp, Loss: MSELoss, Tasks: tasks, Support: 5, Query: 7,
			InShape: []int{1}, OutDim: 1, Steps: 2, Alpha: 0.01},
			randomBatch(rng, tasks, 5, 7, 1), randomParams(rng, 1*16+16+16*16+16+16+1, 0.5), 1e-14},
	} {
		build := func(s Spec) *Objective {
			obj, err := NewObjective(s)
			if err != nil {
				t.Fatal(err)
			}
			return obj
		}
		call := func(obj *Objective) (losses, acc []float64) {
			losses = make([]float64, tasks)
			if c.spec.Score != nil {
				acc = make([]float64, tasks)
			}
			if err := obj.LossesMetric(c.w, c.batch, nil, losses, acc, nil); err != nil {
				t.Fatal(err)
			}
			return losses, acc
		}
		one := c.spec
		one.Lanes = 1
		oneLosses, oneAcc := call(build(one))
		for _, lanes := range []int{2, 3, tasks, tasks + 3} {
			for _, shared := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s, %d lanes, shared pool %v", c.name, lanes, shared), func(t *testing.T) {
					var wantLosses, wantAcc []float64
					for _, procs := range []int{1, 2, 3} {
						runtime.GOMAXPROCS(procs)
						s := c.spec
						s.Lanes = lanes
						obj := build(s)
						if want := min(lanes, tasks); len(obj.lanes) != want {
							t.Fatalf("%d lanes built, want %d", len(obj.lanes), want)
						}
						if shared {
							train := c.spec
							train.MetaGradient, train.Lanes = true, 1
							trainObj := build(train)
							obj.ShareBuffers(trainObj)
							if err := trainObj.Losses(c.w, c.batch, make([]float64, tasks), make([]float64, tasks), make([]float64, len(c.w))); err != nil {
								t.Fatal(err)
							}
						}
						for round := range 2 {
							losses, acc := call(obj)
							if wantLosses == nil {
								wantLosses, wantAcc = losses, acc
								if d := relErr(losses, oneLosses); d > c.tol || !reflect.DeepEqual(acc, oneAcc) {
									t.Errorf("losses %v (%g from one graph's), accuracies %v; one graph: %v", losses, d, acc, oneAcc)
								}
							}
							if !reflect.DeepEqual(losses, wantLosses) || !reflect.DeepEqual(acc, wantAcc) {
								t.Errorf("GOMAXPROCS %d, call %d: losses %v, accuracies %v; on 1 goroutine %v, %v", procs, round, losses, acc, wantLosses, wantAcc)
							}
						}
					}
				})
			}
		}
	}
}

// TestLanesSpec: lanes only without a meta-gradient, by default only for
// tasks of at least laneFLOPs, and a negative count is refused.
func TestLanesSpec(t *testing.T) {
	mlp, err := NewMLP([]int{1, 8, 1}, ReLU)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Model: mlp, Loss: MSELoss, Tasks: 4, Support: 2, Query: 2, InShape: []int{1}, OutDim: 1, Steps: 1, Alpha: 0.1}
	for _, c := range []struct {
		lanes     int
		meta      bool
		wantLanes int
		wantErr   string
	}{
		{lanes: 2, wantLanes: 2},
		{lanes: 1, wantLanes: 0},
		{lanes: 4, meta: true, wantLanes: 0},
		{lanes: 0, wantLanes: 0}, // the MLP's small tasks: one graph
		{lanes: -1, wantErr: "Spec.Lanes must be >= 0"},
	} {
		s := spec
		s.Lanes, s.MetaGradient = c.lanes, c.meta
		obj, err := NewObjective(s)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Lanes %d: error %v, want %q", c.lanes, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(obj.lanes) != c.wantLanes {
			t.Errorf("Lanes %d, meta-gradient %v: %d lanes, want %d", c.lanes, c.meta, len(obj.lanes), c.wantLanes)
		}
		if obj.FLOPs() < 0 || obj.firstGraph() == nil || obj.NumParams() != 1*8+8+8+1 {
			t.Errorf("Lanes %d: FLOPs %v, graph %v, %d parameters", c.lanes, obj.FLOPs(), obj.firstGraph(), obj.NumParams())
		}
	}
}

// TestLanesDefault: Lanes 0 splits the paper's CNN's evaluation into one
// lane per four tasks, whatever GOMAXPROCS (the values must not depend on
// the machine), and keeps training in one graph.
func TestLanesDefault(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cnn, err := NewCNN(28, 28, 1, 64, 4, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, c := range []struct {
			tasks, want int
			meta        bool
		}{{8, 2, false}, {8, 0, true}, {5, 2, false}, {4, 0, false}, {1, 0, false}} {
			obj, err := NewObjective(Spec{Model: cnn, Loss: SoftmaxCrossEntropy, Tasks: c.tasks, Support: 5, Query: 50,
				InShape: cnn.InShape(), OutDim: 5, Steps: 1, Alpha: 0.1, MetaGradient: c.meta, Dtype: tensor.Float32})
			if err != nil {
				t.Fatal(err)
			}
			if len(obj.lanes) != c.want {
				t.Errorf("GOMAXPROCS %d, %d tasks, meta-gradient %v: %d lanes, want %d", procs, c.tasks, c.meta, len(obj.lanes), c.want)
			}
		}
	}
}
