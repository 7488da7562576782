package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/graph/internal/exec"
	"gorgonia.org/tensor"
)

// TestBuffersNearLiveValues runs a first-order meta-gradient of 5-shot
// colour tasks, whose support and query activations differ in size, and
// checks that the buffer pool allocates less than 1.1 times the most bytes
// the program holds alive at once: the values' places in the program's
// arena (memory.Plan) reuse the room of dead values of other sizes. A pool
// reusing buffers only for values of their size allocated 1.63 times.
func TestBuffersNearLiveValues(t *testing.T) {
	t.Parallel()
	const ways, side = 5, 20
	m, err := Conv4{Filters: 8, Blocks: 2, Channels: 3, Height: side, Width: side, Pool: PoolMax, BatchNorm: BatchNormAdapt}.CNN(ways)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Model: m, Loss: SoftmaxCrossEntropy, Score: Accuracy, Tasks: 2, Support: ways * 5, Query: ways * 15,
		InShape: m.InShape(), OutDim: ways, Steps: 3, Alpha: 0.1, FirstOrder: true, MetaGradient: true, Dtype: tensor.Float32}
	obj, err := NewObjective(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	b := randomImages(rng, spec.Tasks, ways, 5, 15, side, side, 3)
	w := m.Init(rng)
	losses, grad := make([]float64, spec.Tasks), make([]float64, len(w))
	for range 2 {
		if err := obj.LossesMetric(w, b, []float64{0.5, 0.5}, losses, nil, grad); err != nil {
			t.Fatal(err)
		}
	}
	live, got := liveBytes(obj.prog), obj.bufferBytes()
	if 10*got >= 11*live {
		t.Errorf("the pool allocated %d bytes for at most %d alive at once", got, live)
	}
	t.Logf("pool %d bytes, at most %d alive at once", got, live)
}

// liveBytes is the most bytes of pooled values p holds at once: each from
// its step to its last reader.
func liveBytes(p *exec.Program) int64 {
	last := map[int]int{}
	for si, s := range p.Steps {
		for _, a := range s.Args {
			last[a] = si
		}
	}
	live := map[int]int64{}
	var now, peak int64
	for si, s := range p.Steps {
		if o, ok := s.Op.(*op); ok && o.arena != nil {
			live[s.I] = int64(o.outShape.TotalSize()) * int64(o.dtype.Size())
			now += live[s.I]
			peak = max(peak, now)
		}
		for _, a := range s.Args {
			if n, ok := live[a]; ok && last[a] == si {
				delete(live, a)
				now -= n
			}
		}
	}
	return peak
}
