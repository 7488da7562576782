package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/cputime"
	"github.com/trmaml/trmaml/metalearn"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gorgonia.org/tensor"
)

func main() {
	ways := flag.Int("ways", 5, "classes per instance (N)")
	shots := flag.Int("shots", 1, "support images per class (K)")
	query := flag.Int("query", 10, "query images per class (J)")
	tasks := flag.Int("tasks", 8, "instances per meta-batch")
	filters := flag.Int("filters", 64, "filters per block")
	image := flag.Int("image", 28, "image side in pixels (84 for mini-ImageNet)")
	channels := flag.Int("channels", 1, "input channels (3 for colour)")
	steps := flag.Int("steps", 1, "inner SGD steps")
	bn := flag.String("bn", graph.BatchNormFixed, "batch norm: adapt (scale and shift adapted in the inner loop, as the PyTorch yardstick does), fixed or off")
	pool := flag.String("pool", graph.PoolMax, "block pooling: max, stride or none")
	order := flag.String("order", "second", "second or first")
	dtype := flag.String("dtype", "float32", "float32 or float64")
	iters := flag.Int("iters", 5, "timed iterations (after one warm-up)")
	eval := flag.Bool("eval", false, "time the evaluation graph (adapted losses and accuracy, no meta-gradient) and report instances per second")
	gemm := flag.Bool("gemm", false, "instead, time single float32 matrix products (a 1024^3 one and the second block's convolution product) on one goroutine: the machine's GEMM peak per core, to read the GFLOP/s of the other lines against")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed iterations to this file")
	memprofile := flag.String("memprofile", "", "write a profile of the heap allocations (go tool pprof -sample_index=alloc_space) to this file at the end")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cnnbench:", err)
			os.Exit(1)
		}
	}
	if n := graph.BLASNote(); n != "" {
		fmt.Fprintln(os.Stderr, "cnnbench: note:", n)
	}
	var err error
	if *gemm {
		err = gemmPeak(*iters)
	} else {
		err = run(shape{*ways, *shots, *query, *tasks, *filters, *image, *channels, *steps, *bn, *pool}, *order, *dtype, *iters, *eval)
	}
	pprof.StopCPUProfile()
	if err == nil && *memprofile != "" {
		err = writeHeapProfile(*memprofile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cnnbench:", err)
		os.Exit(1)
	}
}

// shape is one benchmark setting: the instances and the network.
type shape struct {
	ways, shots, query, tasks int
	filters, image, channels  int
	steps                     int
	bn, pool                  string
}

func run(sh shape, order, dtype string, iters int, eval bool) error {
	ways, shots, query, tasks, filters := sh.ways, sh.shots, sh.query, sh.tasks, sh.filters
	dt := map[string]tensor.Dtype{"float32": tensor.Float32, "float64": tensor.Float64}[dtype]
	if dt == (tensor.Dtype{}) || (order != "first" && order != "second") || iters < 1 {
		return fmt.Errorf("-dtype must be float32 or float64, -order second or first, -iters >= 1")
	}
	if sh.steps < 1 {
		return fmt.Errorf("-steps must be >= 1, got %d", sh.steps)
	}
	cnn, err := graph.Conv4{Filters: filters, Blocks: 4, Channels: sh.channels, Height: sh.image, Width: sh.image,
		Pool: sh.pool, BatchNorm: sh.bn}.CNN(ways)
	if err != nil {
		return err
	}
	obj, err := graph.NewObjective(graph.Spec{Model: cnn, Loss: graph.SoftmaxCrossEntropy, Score: graph.Accuracy,
		Tasks: tasks, Support: ways * shots, Query: ways * query, InShape: cnn.InShape(), OutDim: ways,
		Steps: sh.steps, Alpha: 0.1, FirstOrder: order == "first" && !eval, MetaGradient: !eval, Dtype: dt})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := metalearn.NewBatch(tasks, ways*shots, ways*query, sh.image*sh.image*sh.channels, ways)
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
	if eval { // as trmaml's evaluation: adapted query losses and accuracies
		grad, weights = nil, nil
	}
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
	if eval {
		fmt.Printf("evaluation, %d-way %d-shot, %d query images per class, %d instances per graph, %d filters, %s, %s, GOMAXPROCS %d: median %.3f s (min %.3f s, CPU %.3f s) per batch, %.0f instances per second, %.1f GFLOP per batch, %.1f GFLOP/s\n",
			ways, shots, query, tasks, filters, dtype, graph.Engine(), runtime.GOMAXPROCS(0), med, times[0], cpu[len(cpu)/2], float64(tasks)/med, obj.FLOPs()/1e9, obj.FLOPs()/med/1e9)
		return nil
	}
	fmt.Printf("%d-way %d-shot, %d query images per class, %d tasks, %dx%dx%d images, %d filters, %s pooling, batch norm %s, %d inner steps, %s order, %s, %s, GOMAXPROCS %d: median %.3f s (min %.3f s, CPU %.3f s) per meta-iteration, %.1f GFLOP per iteration, %.1f GFLOP/s\n",
		ways, shots, query, tasks, sh.image, sh.image, sh.channels, filters, sh.pool, sh.bn, sh.steps, order, dtype, graph.Engine(), runtime.GOMAXPROCS(0), med, times[0], cpu[len(cpu)/2], obj.FLOPs()/1e9, obj.FLOPs()/med/1e9)
	return nil
}

// gemmPeak prints the best GFLOP/s of iters float32 products through the
// build's BLAS on the calling goroutine (OpenBLAS is single-threaded unless
// OPENBLAS_NUM_THREADS says otherwise): a large square one, and the shape of
// the CNN's costliest product (the 14x14 pixels of 37 images by 3x3x64
// inputs, times 64 filters).
func gemmPeak(iters int) error {
	for _, d := range []struct{ m, k, n int }{{1024, 1024, 1024}, {196 * 37, 9 * 64, 64}} {
		a := blas32.General{Rows: d.m, Cols: d.k, Stride: d.k, Data: make([]float32, d.m*d.k)}
		b := blas32.General{Rows: d.k, Cols: d.n, Stride: d.n, Data: make([]float32, d.k*d.n)}
		c := blas32.General{Rows: d.m, Cols: d.n, Stride: d.n, Data: make([]float32, d.m*d.n)}
		for i := range a.Data {
			a.Data[i] = float32(i%7) / 7
		}
		for i := range b.Data {
			b.Data[i] = float32(i%5) / 5
		}
		best := 0.0
		for i := 0; i <= iters; i++ {
			start := time.Now()
			reps := 0
			for time.Since(start) < 200*time.Millisecond {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c)
				reps++
			}
			if g := 2 * float64(d.m*d.k*d.n) * float64(reps) / time.Since(start).Seconds() / 1e9; i > 0 && g > best {
				best = g
			}
		}
		fmt.Printf("single-core sgemm %dx%d by %dx%d, %s: %.1f GFLOP/s (best of %d)\n", d.m, d.k, d.k, d.n, graph.Engine(), best, iters)
	}
	return nil
}

// cpuSeconds is the process's user and system CPU time so far: on a shared
// machine it shows an iteration's work better than wall time.
func cpuSeconds() float64 {
	d, _ := cputime.Process()
	return d.Seconds()
}

// writeHeapProfile writes the allocations so far to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
