package graph

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gorgonia.org/tensor"
)

// TestSameBitsOnEveryCoreCount runs the same meta-gradient steps of a
// colour CNN at GOMAXPROCS 1, 2 and 3 and compares every byte of the
// parameters, losses and accuracies after them: meta-batch 1 and 2 split a
// task's convolutions over the cores (splitTasks), meta-batch 4 does not,
// and neither may change a bit. Chunks of one image make the split
// convolutions many chunks on the im2col path and on both Winograd paths.
func TestSameBitsOnEveryCoreCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tasks := range []int{1, 2, 4} {
		for _, wino := range []int{0, 2, 4} {
			t.Run(fmt.Sprintf("meta-batch %d, Winograd %d", tasks, wino), func(t *testing.T) {
				var first []byte
				for _, procs := range []int{1, 2, 3} {
					runtime.GOMAXPROCS(procs)
					got := metaSteps(t, tasks, tuning{winograd: wino, chunkValues: 1})
					if first == nil {
						first = got
					} else if !bytes.Equal(got, first) {
						t.Errorf("GOMAXPROCS %d: the parameters and losses after 3 steps differ from GOMAXPROCS 1's", procs)
					}
				}
			})
		}
	}
}

// metaSteps runs 3 plain meta-gradient steps of a 2-block CNN on 10x9x3
// images (5 support and 10 query images per task, 2 inner steps, float32)
// and returns the bytes of the final parameters, losses and accuracies.
func metaSteps(t *testing.T, tasks int, tune tuning) []byte {
	const ways = 5
	m, err := Conv4{Filters: 8, Blocks: 2, Channels: 3, Height: 10, Width: 9, Pool: PoolMax, BatchNorm: BatchNormAdapt}.CNN(ways)
	if err != nil {
		t.Fatal(err)
	}
	m.tune = tune
	rng := rand.New(rand.NewPCG(9, 9))
	b := randomImages(rng, tasks, ways, 1, 2, 10, 9, 3)
	obj, err := NewObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: tasks, Support: ways,
		Query: 2 * ways, InShape: m.InShape(), OutDim: ways, Steps: 2, Alpha: 0.1, MetaGradient: true, Dtype: tensor.Float32})
	if err != nil {
		t.Fatal(err)
	}
	w := m.Init(rng)
	weights := make([]float64, tasks)
	for i := range weights {
		weights[i] = 1 / float64(tasks)
	}
	losses, acc, grad := make([]float64, tasks), make([]float64, tasks), make([]float64, len(w))
	var out bytes.Buffer
	for range 3 {
		if err := obj.LossesMetric(w, b, weights, losses, acc, grad); err != nil {
			t.Fatal(err)
		}
		for i := range w {
			w[i] -= 0.05 * grad[i]
		}
		binary.Write(&out, binary.LittleEndian, losses)
		binary.Write(&out, binary.LittleEndian, acc)
	}
	binary.Write(&out, binary.LittleEndian, w)
	return out.Bytes()
}
