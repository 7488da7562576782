package configs

import (
	"fmt"
	"maps"
	"math"
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
	MaxSteps      = 100         // inner.steps, unrolled in the graph (1)
	MaxIterations = 100_000_000 // meta.iterations, eval.every (70,000)
	MaxTasks      = 100_000     // tasks of a task set, (hi-lo)/task_width (490)
	// MaxName bounds name, the start of the run's directory name (which
	// a file system keeps within 255 bytes) and of an experiment's cells'.
	MaxName = 200
	// MaxFileBytes bounds a config or experiment file, checked before the
	// YAML is parsed (the built-in files are about 3 KB).
	MaxFileBytes = 64 << 10
	// MaxMemory bounds Memory(): a config needing more is refused before
	// anything is allocated (the paper's settings need about 0.32 GiB).
	MaxMemory = 4 << 30
)

// MemoryEstimate is the memory a run of a config needs, in bytes, by part.
type MemoryEstimate struct {
	// TrainGraph is the meta-training graph: every inner step's adapted
	// parameters and activations for meta.batch instances, and their
	// gradients through the meta-gradient.
	TrainGraph float64
	// EvalGraph is the evaluation graph, eval.batch instances scored on
	// eval.query points each, and the evaluation's per-instance order.
	EvalGraph float64
	// SharedGraphs says that the evaluation graph's large values have the
	// training graph's sizes, so that the two reuse one set of buffers
	// (graph.Objective.ShareBuffers): the run holds the larger graph, not
	// both.
	SharedGraphs bool
	// Records are metrics.csv and p.csv, kept in memory while training: one
	// row per evaluation.
	Records float64
	// Data is the task family's data held in memory (Omniglot's decoded
	// images, one byte per pixel); 0 for generated tasks.
	Data float64
}

// Graphs is what the two graphs hold together: the larger one when they
// share their buffers, else both.
func (m MemoryEstimate) Graphs() float64 {
	if m.SharedGraphs {
		return max(m.TrainGraph, m.EvalGraph)
	}
	return m.TrainGraph + m.EvalGraph
}

// Total is the whole estimate in bytes, with 64 MiB for the runtime.
func (m MemoryEstimate) Total() float64 {
	return m.Graphs() + m.Records + m.Data + 64<<20
}

// Memory estimates the memory a run of c needs from its sizes alone,
// without allocating anything: the graphs as its model says (Model.Memory,
// whose meta.batch is then the instances the method draws, DrawnOrBatch),
// the records and data as its task family says (Family.Memory). A config of
// an unregistered family or model estimates nothing of it.
func (c Config) Memory() MemoryEstimate {
	f, err := c.Family()
	if err != nil {
		return MemoryEstimate{}
	}
	m := f.Memory(c)
	if model, ok := LookupModel(c.Model.Kind); ok {
		// The training graph adapts the method's drawn instances: DR-MAML's
		// candidate batch, more than meta.batch.
		d := c
		d.Meta.Batch = c.DrawnOrBatch()
		g := model.Memory(d, f.IO(c))
		m.TrainGraph, m.EvalGraph, m.SharedGraphs = g.TrainGraph, g.EvalGraph, g.SharedGraphs
	}
	return m
}

// RecordsMemory is the records of a run of c with trainTasks meta-training
// tasks (p.csv's columns): metrics.csv and p.csv, one row per evaluation,
// kept in memory while training.
func RecordsMemory(c Config, trainTasks float64) float64 {
	rows := float64(c.Meta.Iterations)/float64(max(c.Eval.Every, 1)) + 2
	return rows * (200 + 25*trainTasks)
}

// checkMemory refuses a config whose estimate exceeds MaxMemory, naming the
// field that dominates it: the one whose smallest value would shrink the
// estimate most.
func (k *Checker) checkMemory(c Config) {
	m := c.Memory()
	if !(m.Total() > MaxMemory) {
		return
	}
	type candidate struct {
		name  string
		value any
		small func(*Config)
	}
	var cands []candidate
	if model, ok := LookupModel(c.Model.Kind); ok {
		for _, s := range model.Shrink(c) {
			cands = append(cands, candidate{s.Path, s.Value, func(d *Config) {
				d.Model.Sections = maps.Clone(d.Model.Sections)
				d.Model.Sections[d.Model.Kind] = s.Section
			}})
		}
	}
	field, v, least := "", any(nil), math.Inf(1)
	for _, cand := range append(cands, []candidate{
		{"meta.batch", c.Meta.Batch, func(c *Config) { c.Meta.Batch = 1 }},
		{"eval.batch", c.Eval.Batch, func(c *Config) { c.Eval.Batch = 1 }},
		{"eval.query", c.Eval.Query, func(c *Config) { c.Eval.Query = 1 }},
		{"task.query", c.Task.Query, func(c *Config) { c.Task.Query = 1 }},
		{"inner.steps", c.Inner.Steps, func(c *Config) { c.Inner.Steps = 1 }},
		{"eval.every", c.Eval.Every, func(c *Config) { c.Eval.Every = max(c.Meta.Iterations, 1) }},
	}...) {
		d := c
		cand.small(&d)
		if t := d.Memory().Total(); t < least {
			field, v, least = cand.name, cand.value, t
		}
	}
	eval := "evaluation graph " + gib(m.EvalGraph)
	if m.SharedGraphs {
		eval += " in the training graph's buffers"
	}
	k.fail(field, v, "the config needs about %s (training graph %s, %s, records %s), more than the limit of %s; %s dominates it: make it or the sizes it multiplies smaller",
		gib(m.Total()), gib(m.TrainGraph), eval, gib(m.Records), gib(MaxMemory), field)
}

func gib(b float64) string { return fmt.Sprintf("%.2f GiB", b/(1<<30)) }
