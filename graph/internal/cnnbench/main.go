// Command cnnbench runs meta-iterations of MAML's Omniglot CNN on random
// data and prints the time per iteration and the achieved GFLOP/s of its
// matrix products, so that peak memory can be measured on one configuration
// at a time:
//
//	GOEXPERIMENT=simd /usr/bin/time -v go run -tags openblas ./graph/internal/cnnbench -ways 5 -order second
//
// (go run's own memory is not counted: /usr/bin/time reports the largest
// process, the benchmark.) Without -tags openblas it uses gonum's pure-Go
// BLAS, without GOEXPERIMENT=simd plain Go loops for the elementwise work.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"syscall"
	"time"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"gorgonia.org/tensor"
)

func main() {
	ways := flag.Int("ways", 5, "classes per instance (N)")
	shots := flag.Int("shots", 1, "support images per class (K)")
	query := flag.Int("query", 10, "query images per class (J)")
	tasks := flag.Int("tasks", 8, "instances per meta-batch")
	filters := flag.Int("filters", 64, "filters per block")
	order := flag.String("order", "second", "second or first")
	dtype := flag.String("dtype", "float32", "float32 or float64")
	iters := flag.Int("iters", 5, "timed iterations (after one warm-up)")
	flag.Parse()
	if err := run(*ways, *shots, *query, *tasks, *filters, *order, *dtype, *iters); err != nil {
		fmt.Fprintln(os.Stderr, "cnnbench:", err)
		os.Exit(1)
	}
}

func run(ways, shots, query, tasks, filters int, order, dtype string, iters int) error {
	dt := map[string]tensor.Dtype{"float32": tensor.Float32, "float64": tensor.Float64}[dtype]
	if dt == (tensor.Dtype{}) || (order != "first" && order != "second") || iters < 1 {
		return fmt.Errorf("-dtype must be float32 or float64, -order second or first, -iters >= 1")
	}
	cnn, err := graph.NewCNN(28, 28, 1, filters, 4, ways, false)
	if err != nil {
		return err
	}
	obj, err := graph.NewObjective(graph.Spec{Model: cnn, Loss: graph.SoftmaxCrossEntropy, Score: graph.Accuracy,
		Tasks: tasks, Support: ways * shots, Query: ways * query, InShape: cnn.InShape(), OutDim: ways,
		Steps: 1, Alpha: 0.1, FirstOrder: order == "first", MetaGradient: true, Dtype: dt})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := metalearn.NewBatch(tasks, ways*shots, ways*query, 28*28, ways)
	for _, x := range [][]float64{b.SupportX, b.QueryX} {
		for i := range x {
			x[i] = rng.Float64()
		}
	}
	for _, y := range [][]float64{b.SupportY, b.QueryY} {
		for p := 0; p < len(y)/ways; p++ {
			y[p*ways+p%ways] = 1
		}
	}
	w := cnn.Init(rng)
	weights := make([]float64, tasks)
	for i := range weights {
		weights[i] = 1 / float64(tasks)
	}
	losses, acc, grad := make([]float64, tasks), make([]float64, tasks), make([]float64, len(w))
	var times, cpu []float64
	for i := 0; i <= iters; i++ {
		start, cpu0 := time.Now(), cpuSeconds()
		if err := obj.LossesMetric(w, b, weights, losses, acc, grad); err != nil {
			return err
		}
		if i > 0 { // the first run allocates the buffers
			times, cpu = append(times, time.Since(start).Seconds()), append(cpu, cpuSeconds()-cpu0)
		}
	}
	sort.Float64s(times)
	sort.Float64s(cpu)
	med := times[len(times)/2]
	fmt.Printf("%d-way %d-shot, %d tasks, %d filters, %s order, %s, %s, GOMAXPROCS %d: median %.3f s (min %.3f s, CPU %.3f s) per meta-iteration, %.1f GFLOP per iteration, %.1f GFLOP/s\n",
		ways, shots, tasks, filters, order, dtype, graph.Engine(), runtime.GOMAXPROCS(0), med, times[0], cpu[len(cpu)/2], obj.FLOPs()/1e9, obj.FLOPs()/med/1e9)
	return nil
}

// cpuSeconds is the user and system CPU time of the process so far: on a
// loaded machine it shows the work of an iteration better than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
