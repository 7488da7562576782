package configs

import (
	"fmt"
	"math"
	"slices"
)

// Upper bounds on the size fields. They lie far beyond what a real
// experiment needs (the paper's settings are in parentheses) and keep every
// size product representable, so that a mistyped value is refused with the
// field's name instead of crashing an allocation. MaxMemory then bounds the
// sizes' combination.
const (
	MaxPoints     = 10_000      // task.support, task.query (paper: 5 or 10)
	MaxEvalQuery  = 100_000     // eval.query (paper: 1000)
	MaxBatch      = 10_000      // meta.batch (paper: 25), eval.batch (500)
	MaxInstances  = 10_000_000  // eval.instances, eval.train_instances (5000)
	MaxWidth      = 100_000     // each model.hidden entry (40)
	MaxLayers     = 16          // len(model.hidden) (2)
	MaxSteps      = 100         // inner.steps, unrolled in the graph (1)
	MaxIterations = 100_000_000 // meta.iterations, eval.every (70,000)
	MaxTasks      = 100_000     // tasks of a task set, (hi-lo)/task_width (490)
	MaxRanges     = 1_000       // len(task.sinusoid.train_amplitudes) (2)
	// MaxFileBytes bounds a config or experiment file, checked before the
	// YAML is parsed (the built-in files are about 3 KB).
	MaxFileBytes = 64 << 10
	// MaxMemory bounds Memory(): a config needing more is refused before
	// anything is allocated (the paper's settings need about 0.32 GiB).
	MaxMemory = 4 << 30
)

// maxListLen bounds each list field, checked before it is decoded.
var maxListLen = map[string]int{
	"model.hidden":                   MaxLayers,
	"task.sinusoid.train_amplitudes": MaxRanges,
}

// MemoryEstimate is the memory a run of a config needs, in bytes, by part.
type MemoryEstimate struct {
	// TrainGraph is the meta-training graph: every inner step's adapted
	// parameters and activations for meta.batch instances, and their
	// gradients through the meta-gradient.
	TrainGraph float64
	// EvalGraph is the evaluation graph, eval.batch instances scored on
	// eval.query points each, and the evaluation's per-instance order.
	EvalGraph float64
	// Records are metrics.csv and p.csv, kept in memory while training: one
	// row per evaluation.
	Records float64
	// Data is the task family's data held in memory (Omniglot's decoded
	// images, one byte per pixel); 0 for generated tasks.
	Data float64
}

// Total is the whole estimate in bytes, with 64 MiB for the runtime.
func (m MemoryEstimate) Total() float64 {
	return m.TrainGraph + m.EvalGraph + m.Records + m.Data + 64<<20
}

// Omniglot's size: images in the two sets of the data, and meta-training
// alphabets (p.csv's columns).
const (
	omniglotImages     = 32460
	omniglotTrainTasks = 25
)

// cnnMemory estimates a run of the omniglot family. The graph's large
// values are the activations of every image: per block its convolution
// output at that block's resolution, per filter. The factors are measured:
// the training graph's peak of the paper's model (scripts/bench_cnn.sh: 64
// filters, 4 blocks, meta-batch 8, J = 10, float32, second order: 600 MiB
// at 5-way 1-shot, 2290 MiB at 20-way) is 5.0 and 4.9 times the
// activations of one pass over the meta-batch's images, so training counts
// 5.5; the evaluation graph's factor, 5, brings the whole estimate of
// configs/omniglot_quick.yaml (633 MB) near its measured resident peak
// (717 MB, /usr/bin/time -v, with the Go collector's slack): an estimate to
// refuse configs far beyond the machine, not a guarantee. The paper's
// 20-way 5-shot setting (3.8 GiB with eval.batch 1) is the largest.
func (c Config) cnnMemory() MemoryEstimate {
	o, n := c.Task.Omniglot, c.Model.CNN
	float := 8.0
	if c.Model.Dtype == "float32" {
		float = 4
	}
	perImage, side := 0.0, o.ImageSize
	for range min(n.Blocks, 62) {
		perImage += float64(n.Filters * side * side)
		side /= 2
	}
	perImage += float64(o.ImageSize * o.ImageSize) // the input
	params := 9*float64(n.Filters)*float64(n.Filters+1)*float64(n.Blocks) + float64(side*side*n.Filters+1)*float64(o.Ways)
	graph := func(tasks, support, query int, factor float64) float64 {
		images := float64(tasks) * float64(o.Ways) * float64(support+query)
		return float * (factor*images*perImage + params*float64(tasks*(c.Inner.Steps+2)))
	}
	rows := float64(c.Meta.Iterations)/float64(max(c.Eval.Every, 1)) + 2
	instances := max(c.Eval.Instances, c.Eval.TrainInstances, c.Eval.FinalInstances)
	return MemoryEstimate{
		TrainGraph: graph(c.Meta.Batch, c.Task.Support, c.Task.Query, 5.5),
		EvalGraph:  graph(c.Eval.Batch, c.Task.Support, c.Eval.Query, 5) + 8*float64(instances),
		Records:    rows * (200 + 25*omniglotTrainTasks),
		Data:       omniglotImages * float64(o.ImageSize*o.ImageSize),
	}
}

// Memory estimates the memory a run of c needs from its sizes alone, without
// allocating anything: graph nodes hold, per instance and inner step, a copy
// of the parameters and the activations of every point, and the backward
// sweeps hold as much again. The factors are upper estimates measured on the
// sine configs (the paper's K=5 run with eval.query 1000 and eval.batch 100
// estimates 0.32 GiB; six such runs at once held 1.8 GB resident). Computed in float64 so
// that no size product overflows.
func (c Config) Memory() MemoryEstimate {
	if c.Task.Family == "omniglot" {
		return c.cnnMemory()
	}
	const in, out, float = 1, 1, 8 // the sinusoid family's dimensions; bytes per value
	params, units := 0.0, float64(in+out)
	prev := float64(in)
	for _, h := range append(append([]int(nil), c.Model.Hidden...), out) {
		params += prev*float64(h) + float64(h)
		units += float64(h)
		prev = float64(h)
	}
	units -= out // the output layer is counted once below, in the loss
	graph := func(tasks, query int, factor float64) float64 {
		t, steps := float64(tasks), float64(c.Inner.Steps)
		perStep := t * (params + float64(c.Task.Support)*units)
		final := t * float64(query) * units
		return factor * float * (params + steps*perStep + final)
	}
	rows := float64(c.Meta.Iterations)/float64(max(c.Eval.Every, 1)) + 2
	trainTasks := 0.0
	for _, a := range c.Task.Sinusoid.TrainAmplitudes {
		trainTasks += (a[1] - a[0]) / c.Task.Sinusoid.TaskWidth
	}
	return MemoryEstimate{
		TrainGraph: graph(c.Meta.Batch, c.Task.Query, 8),
		EvalGraph:  graph(c.Eval.Batch, c.Eval.Query, 4) + float*float64(max(c.Eval.Instances, c.Eval.TrainInstances)),
		Records:    rows * (200 + 25*trainTasks),
	}
}

// checkMemory refuses a config whose estimate exceeds MaxMemory, naming the
// field that dominates it: the one whose smallest value would shrink the
// estimate most.
func (k *checker) checkMemory(c Config) {
	m := c.Memory()
	if !(m.Total() > MaxMemory) {
		return
	}
	field, v, least := "", any(nil), math.Inf(1)
	for _, f := range []struct {
		name  string
		value any
		small func(*Config)
	}{
		{"model.hidden", c.Model.Hidden, func(c *Config) { c.Model.Hidden = slices.Repeat([]int{1}, len(c.Model.Hidden)) }},
		{"model.cnn.filters", c.Model.CNN.Filters, func(c *Config) { c.Model.CNN.Filters = 1 }},
		{"meta.batch", c.Meta.Batch, func(c *Config) { c.Meta.Batch = 1 }},
		{"eval.batch", c.Eval.Batch, func(c *Config) { c.Eval.Batch = 1 }},
		{"eval.query", c.Eval.Query, func(c *Config) { c.Eval.Query = 1 }},
		{"task.query", c.Task.Query, func(c *Config) { c.Task.Query = 1 }},
		{"inner.steps", c.Inner.Steps, func(c *Config) { c.Inner.Steps = 1 }},
		{"eval.every", c.Eval.Every, func(c *Config) { c.Eval.Every = max(c.Meta.Iterations, 1) }},
	} {
		d := c
		d.Model.Hidden = slices.Clone(c.Model.Hidden)
		f.small(&d)
		if t := d.Memory().Total(); t < least {
			field, v, least = f.name, f.value, t
		}
	}
	k.fail(field, v, "the config needs about %s (training graph %s, evaluation graph %s, records %s), more than the limit of %s; %s dominates it: make it or the sizes it multiplies smaller",
		gib(m.Total()), gib(m.TrainGraph), gib(m.EvalGraph), gib(m.Records), gib(MaxMemory), field)
}

func gib(b float64) string { return fmt.Sprintf("%.2f GiB", b/(1<<30)) }

// taskCount is the number of tasks an amplitude range of the given width
// makes, or +Inf when it cannot be computed.
func taskCount(lo, hi, width float64) float64 {
	n := math.Ceil((hi-lo)/width - 1e-9)
	if math.IsNaN(n) {
		return math.Inf(1)
	}
	return n
}
