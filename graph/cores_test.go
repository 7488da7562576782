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
					got := metaSteps(t, tasks, smallColour, tuning{winograd: wino, chunkValues: 1})
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

// TestSameBitsOnEveryCoreCountMiniImageNet is TestSameBitsOnEveryCoreCount
// at MAML's mini-ImageNet shape (84x84x3 images, four max-pool blocks with
// batch norm adapted, 5 inner steps; 4 filters to keep it short), second
// and first order, on the kernel paths the cost model picks for it: the
// first block's im2col convolution of 3 channels and, at meta-batch 3,
// task groups of 2 and 1 (tuning.groupInputs lowered), each group's tasks split
// over the cores at GOMAXPROCS 3.
func TestSameBitsOnEveryCoreCountMiniImageNet(t *testing.T) {
	if testing.Short() {
		t.Skip("about 15 s of CPU")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, sh := range []stepsShape{miniImageNet, miniImageNetFirst} {
		for _, tasks := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s order, meta-batch %d", map[bool]string{false: "second", true: "first"}[sh.first], tasks), func(t *testing.T) {
				var first []byte
				for _, procs := range []int{1, 2, 3} {
					runtime.GOMAXPROCS(procs)
					got := metaSteps(t, tasks, sh, tuning{groupInputs: 1})
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

// stepsShape is the network, images and inner loop of metaSteps.
type stepsShape struct {
	net     Conv4
	queries int // per class
	steps   int
	first   bool // first-order meta-gradient
}

var (
	// smallColour: a 2-block CNN on 10x9x3 images, 2 inner steps.
	smallColour = stepsShape{Conv4{Filters: 8, Blocks: 2, Channels: 3, Height: 10, Width: 9, Pool: PoolMax, BatchNorm: BatchNormAdapt}, 2, 2, false}
	// miniImageNet: MAML's mini-ImageNet network but for its filters.
	miniImageNet      = stepsShape{Conv4{Filters: 4, Blocks: 4, Channels: 3, Height: 84, Width: 84, Pool: PoolMax, BatchNorm: BatchNormAdapt}, 1, 5, false}
	miniImageNetFirst = stepsShape{miniImageNet.net, 1, 5, true}
)

// metaSteps runs 3 plain meta-gradient steps of sh's CNN, float32, 5-way
// with 1 support image per class, with the engine's choices of tune, and
// returns the bytes of the final parameters, losses and accuracies.
func metaSteps(t *testing.T, tasks int, sh stepsShape, tune tuning) []byte {
	const ways = 5
	m, err := sh.net.CNN(ways)
	if err != nil {
		t.Fatal(err)
	}
	m.tune = tune
	rng := rand.New(rand.NewPCG(9, 9))
	b := randomImages(rng, tasks, ways, 1, sh.queries, sh.net.Height, sh.net.Width, sh.net.Channels)
	obj, err := newObjective(Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: tasks, Support: ways,
		Query: sh.queries * ways, InShape: m.InShape(), OutDim: ways, Steps: sh.steps, Alpha: 0.1, MetaGradient: true,
		FirstOrder: sh.first, Dtype: tensor.Float32}, tune)
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
