// Command cachebench measures the image-folder family on a set of
// mini-ImageNet's size: it writes a synthetic folder in mini-ImageNet's
// layout (images/ of 84x84 colour JPEGs and train.csv, val.csv, test.csv
// of 64, 16 and 20 classes), loads it as the built-in mini-ImageNet
// configs do (decoding and caching on the first start, reading the cache
// on the next), and times the sampling of a meta-batch against a
// meta-iteration of MAML's mini-ImageNet network, so that the data's share
// of an iteration is measured, not guessed:
//
//	go run ./tasks/imagefolder/internal/cachebench -dir DIR -gen      # write the folder (once)
//	go run ./tasks/imagefolder/internal/cachebench -dir DIR -load     # first or second start
//	go run ./tasks/imagefolder/internal/cachebench -dir DIR -share 3  # sampling vs iteration
//
// scripts/imagecache_bench.sh runs the three in turn. The folder is not
// part of the repository.
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/tasks/imagefolder"
	"gorgonia.org/tensor"
)

func main() {
	dir := flag.String("dir", "", "the synthetic folder (required)")
	gen := flag.Bool("gen", false, "write the folder: 100 classes of -images 84x84 JPEGs")
	images := flag.Int("images", 600, "images per class (mini-ImageNet: 600, so 60,000 in all)")
	load := flag.Bool("load", false, "load the folder as the mini-ImageNet configs do and print where the pixels came from and how long it took")
	share := flag.Int("share", 0, "time this many meta-iterations of MAML's mini-ImageNet network (5-way 1-shot, 15 queries, 4 tasks, 5 inner steps, second order, float32) and the sampling of their meta-batches")
	flag.Parse()
	if *dir == "" || (!*gen && !*load && *share == 0) {
		flag.Usage()
		os.Exit(2)
	}
	var err error
	switch {
	case *gen:
		err = generate(*dir, *images)
	case *load:
		_, err = loadFolder(*dir, true)
	default:
		err = measureShare(*dir, *share)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cachebench:", err)
		os.Exit(1)
	}
}

// section is the built-in mini-ImageNet configs' task section.
func section() imagefolder.Config {
	s := *imagefolder.Family{}.NewSection().(*imagefolder.Config)
	s.Layout, s.Channels, s.Image, s.Ways = "csv", 3, [2]int{84, 84}, 5
	s.CSV = imagefolder.SplitLists{Train: []string{"train.csv"}, Test: []string{"val.csv", "test.csv"}}
	s.GroupSizes = imagefolder.SizeLists{Train: []int{7, 7, 6, 8, 8, 9, 9, 10}, Test: []int{9, 9, 10, 8}}
	return s
}

// generate writes 100 classes of smooth colour textures with noise, so that
// the JPEGs are about as large as mini-ImageNet's.
func generate(dir string, perClass int) error {
	if err := os.MkdirAll(filepath.Join(dir, "images"), 0o755); err != nil {
		return err
	}
	splits := []struct {
		file    string
		classes int
	}{{"train.csv", 64}, {"val.csv", 16}, {"test.csv", 20}}
	class := 0
	for _, sp := range splits {
		var csv strings.Builder
		csv.WriteString("filename,label\n")
		for range sp.classes {
			label := fmt.Sprintf("n%08d", 1000+class)
			names := make([]string, perClass)
			var wg sync.WaitGroup
			errs := make([]error, runtime.GOMAXPROCS(0))
			for w := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := w; j < perClass; j += len(errs) {
						names[j] = fmt.Sprintf("%s%08d.jpg", label, j)
						if err := writeJPEG(filepath.Join(dir, "images", names[j]), class, j); err != nil {
							errs[w] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return err
				}
			}
			for _, n := range names {
				fmt.Fprintf(&csv, "%s,%s\n", n, label)
			}
			class++
		}
		if err := os.WriteFile(filepath.Join(dir, sp.file), []byte(csv.String()), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d images of 100 classes under %s\n", 100*perClass, dir)
	return nil
}

func writeJPEG(path string, class, j int) error {
	rng := rand.New(rand.NewPCG(uint64(class), uint64(j)))
	img := image.NewRGBA(image.Rect(0, 0, 84, 84))
	fx, fy, ph := 0.05+0.2*rng.Float64(), 0.05+0.2*rng.Float64(), float64(class)
	for y := range 84 {
		for x := range 84 {
			v := 128 + 60*sin(fx*float64(x)+ph) + 50*sin(fy*float64(y)-ph)
			img.SetRGBA(x, y, color.RGBA{clamp(v + 20*rng.NormFloat64()), clamp(255 - v + 20*rng.NormFloat64()), clamp(float64(class*2) + 20*rng.NormFloat64()), 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := jpeg.Encode(f, img, &jpeg.Options{Quality: 90}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func sin(x float64) float64 {
	// a cheap smooth periodic function: the texture need not be exact
	x -= 6.283185307179586 * float64(int(x/6.283185307179586))
	if x < 0 {
		x += 6.283185307179586
	}
	if x > 3.141592653589793 {
		return -sin(x - 3.141592653589793)
	}
	return 4 * x * (3.141592653589793 - x) / (3.141592653589793 * 3.141592653589793)
}

func clamp(v float64) uint8 { return uint8(max(0, min(255, v))) }

func loadFolder(dir string, report bool) (*imagefolder.Dataset, error) {
	start := time.Now()
	d, err := imagefolder.Load(dir, imagefolder.Options{Section: section()})
	if err != nil {
		return nil, err
	}
	if report {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		size := int64(0)
		if fi, err := os.Stat(d.Info.CachePath); err == nil {
			size = fi.Size()
		}
		fmt.Printf("%d images %dx%dx%d: %.2f s in all (listing and hashing the files %.2f s, %s %.2f s); cache %s, %.3f GB; heap %.2f GB\n",
			d.Images(), d.H(), d.W(), d.C(), time.Since(start).Seconds(), d.Info.HashTime.Seconds(),
			map[bool]string{true: "reading the cache", false: "decoding and writing the cache"}[d.Info.FromCache],
			d.Info.LoadTime.Seconds(), d.Info.CachePath, float64(size)/1e9, float64(ms.HeapAlloc)/1e9)
		if d.Info.CacheErr != nil {
			fmt.Println("cache not written:", d.Info.CacheErr)
		}
	}
	return d, nil
}

func measureShare(dir string, iters int) error {
	d, err := loadFolder(dir, false)
	if err != nil {
		return err
	}
	const ways, shots, query, tasks = 5, 1, 15, 4
	ts, err := imagefolder.NewTaskSet(d, imagefolder.Train, imagefolder.Spec{Ways: ways, Shots: shots, Queries: query})
	if err != nil {
		return err
	}
	cnn, err := graph.NewCNN(84, 84, 3, 32, 4, ways, false)
	if err != nil {
		return err
	}
	obj, err := graph.NewObjective(graph.Spec{Model: cnn, Loss: graph.SoftmaxCrossEntropy, Score: graph.Accuracy,
		Tasks: tasks, Support: ways * shots, Query: ways * query, InShape: cnn.InShape(), OutDim: ways,
		Steps: 5, Alpha: 0.01, MetaGradient: true, Dtype: tensor.Float32})
	if err != nil {
		return err
	}
	in, _ := ts.Dims()
	b := metalearn.NewBatch(tasks, ways*shots, ways*query, in, ways)
	rng := rand.New(rand.NewPCG(1, 2))
	w := cnn.Init(rng)
	weights := []float64{0.25, 0.25, 0.25, 0.25}
	losses, grad := make([]float64, tasks), make([]float64, len(w))
	var sample, step []float64
	for i := 0; i <= iters; i++ {
		start := time.Now()
		for t := range tasks { // as the Trainer: one row after the other
			ts.Sample(rng.IntN(ts.Len()), rng, b, t)
		}
		s := time.Since(start).Seconds()
		start = time.Now()
		if err := obj.Losses(w, b, weights, losses, grad); err != nil {
			return err
		}
		if i > 0 { // the first iteration allocates the buffers
			sample, step = append(sample, s), append(step, time.Since(start).Seconds())
		}
	}
	sort.Float64s(sample)
	sort.Float64s(step)
	ms, mi := sample[len(sample)/2], step[len(step)/2]
	fmt.Printf("meta-batch of %d tasks, %d-way %d-shot, %d queries, 84x84x3: sampling %.4f s, meta-iteration (second order, 5 steps, 32 filters, float32, %s) %.3f s (medians of %d); data %.2f%% of an iteration\n",
		tasks, ways, shots, query, ms, graph.Engine(), mi, iters, 100*ms/(ms+mi))
	return nil
}
