// Package omniglot is the task family of Omniglot classification (the
// paper's Section 5.2): each of the 25 meta-training and 20 meta-test
// alphabets is a task, an instance is an N-way problem over N distinct
// characters of one alphabet. Its config section is task.omniglot; it
// trains the CNN of model.cnn with softmax cross-entropy and reports
// accuracy. The data lies under the data root (package data/omniglot).
package omniglot

import (
	"context"
	"fmt"
	"io"

	"github.com/trmaml/trmaml/configs"
)

// Name is the family's task.family value.
const Name = "omniglot"

// Config is the section task.omniglot.
type Config struct {
	// Ways is N >= 2, the classes of an instance; it may not exceed the
	// characters of the smallest alphabet of a split (20, Angelic, among the
	// meta-test alphabets), which the run refuses.
	Ways int `yaml:"ways"`
	// Rotate turns each character of an instance by a random multiple of 90
	// degrees, the paper's augmentation.
	Rotate bool `yaml:"rotate"`
	// RotateEval says whether evaluation instances are rotated like
	// training ones; a file that does not state it gets Rotate's value. The
	// paper's code rotates meta-training instances only.
	RotateEval bool `yaml:"rotate_eval"`
	// ImageSize is the side the 105x105 drawings are shrunk to (paper: 28).
	ImageSize int `yaml:"image_size"`
	// Resize is how the drawings are shrunk: "bilinear" (antialiased, the
	// default), "lanczos" (Pillow's LANCZOS on the grayscale drawing) or
	// "nearest" (what Pillow does to the 1-bit PNGs whatever filter is
	// asked, so what the paper's code trains and evaluates on).
	Resize string `yaml:"resize"`
}

// Resizes lists the allowed values of task.omniglot.resize, the default
// first (data/omniglot's Resizes).
var Resizes = []string{"bilinear", "lanczos", "nearest"}

// Bounds of the Omniglot fields.
const (
	// MaxDrawings is the number of drawings of every Omniglot character: an
	// instance's support and query images per class must fit in it.
	MaxDrawings = 20
	// MaxWays is the characters of the smallest alphabet of a split (the
	// meta-test alphabet Angelic has 20): an N-way instance needs N distinct
	// characters of one alphabet.
	MaxWays = 20
	// MaxFilters bounds model.cnn.filters (paper: 64).
	MaxFilters = 1024
	// MaxImageSize bounds task.omniglot.image_size (paper: 28; the drawings
	// are 105x105).
	MaxImageSize = 105
	// PaperFinalInstances is the paper's evaluation: 5,000 instances per
	// split, what eval.final_instances defaults to for omniglot.
	PaperFinalInstances = 5000
)

// Family is the Omniglot task family.
type Family struct{}

// Name implements configs.Family.
func (Family) Name() string { return Name }

// NewSection implements configs.Family: the paper's 5-way setting with
// rotations on 28x28 images.
func (Family) NewSection() any {
	return &Config{Ways: 5, Rotate: true, ImageSize: 28, Resize: "bilinear", RotateEval: true}
}

// EvalFields implements configs.EvalFielder: an evaluation may prepare
// the images otherwise than training did.
func (Family) EvalFields() []string {
	return []string{"task.omniglot.resize", "task.omniglot.rotate_eval"}
}

// Noun implements configs.Family: Omniglot's tasks are alphabets.
func (Family) Noun() string { return "alphabet" }

// Model implements configs.Family.
func (Family) Model() string { return "cnn" }

// Ways implements configs.Family.
func (Family) Ways(c configs.Config) int { return section(c).Ways }

func section(c configs.Config) *Config { return Section(c) }

// Section is c's task.omniglot section.
func Section(c configs.Config) *Config { return c.Task.Section(Name).(*Config) }

// Check implements configs.Family: the instance sizes against the data (N
// distinct characters of an alphabet, K + J distinct drawings of a
// character) and the CNN against the image size.
func (Family) Check(c configs.Config, k *configs.Checker) {
	o, t := section(c), c.Task
	if o.Ways < 2 || o.Ways > MaxWays {
		k.Fail("task.omniglot.ways", o.Ways, "must be in [2, %d]: the smallest alphabet of a split (Angelic, meta-test) has %d characters", MaxWays, MaxWays)
	}
	if t.Support+t.Query > MaxDrawings {
		k.Fail("task.query", t.Query, "must be <= %d with task.support = %d: a character has %d drawings for its support and query images",
			MaxDrawings-t.Support, t.Support, MaxDrawings)
	}
	if t.Support+c.Eval.Query > MaxDrawings {
		k.Fail("eval.query", c.Eval.Query, "must be <= %d with task.support = %d: a character has %d drawings for its support and query images (for omniglot eval.query counts query images per class)",
			MaxDrawings-t.Support, t.Support, MaxDrawings)
	}
	k.Between("task.omniglot.image_size", o.ImageSize, 1, MaxImageSize)
	k.OneOf("task.omniglot.resize", o.Resize, Resizes...)
	n := c.Model.CNN
	k.Between("model.cnn.filters", n.Filters, 1, MaxFilters)
	if o.ImageSize >= 1 && (n.Blocks < 1 || o.ImageSize>>min(n.Blocks, 62) < 1) {
		k.Fail("model.cnn.blocks", n.Blocks, "must be >= 1 and leave images of at least 1x1: each block halves the side, so at most %d for task.omniglot.image_size = %d",
			log2(o.ImageSize), o.ImageSize)
	}
}

// log2 is floor(log2(n)) for n >= 1.
func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// paperOmniglotPLR is eta_p of TR-MAML on Omniglot in Algorithm 1's
// convention, per number of ways: the authors' p step sizes (2e-5 at 5-way,
// 1.6e-5 at 10-way, 1e-5 at 20-way) add p_lr times each sampled task's loss
// without the n/C factor of g_p, so eta_p = p_lr * C / n with their
// meta-batch C = 8 and n = 25 meta-training alphabets.
var paperOmniglotPLR = map[int]float64{5: 2e-5 * 8 / 25, 10: 1.6e-5 * 8 / 25, 20: 1e-5 * 8 / 25}

// Defaults implements configs.Family: task.omniglot.rotate_eval is
// task.omniglot.rotate, eval.query is task.query (query images per class;
// the sinusoid's 1000 held-out points do not exist) and
// eval.final_instances the paper's 5,000.
func (Family) Defaults(c *configs.Config, stated func(string) bool) []error {
	if o := section(*c); !stated("task.omniglot.rotate_eval") {
		o.RotateEval = o.Rotate
	}
	if !stated("eval.query") {
		c.Eval.Query = c.Task.Query
	}
	if !stated("eval.final_instances") {
		c.Eval.FinalInstances = PaperFinalInstances
	}
	return nil
}

// PLR implements configs.Family: the paper's value for the file's ways.
func (Family) PLR(c configs.Config) (float64, error) {
	ways := section(c).Ways
	if v, ok := paperOmniglotPLR[ways]; ok {
		return v, nil
	}
	return 0, configs.NotSet("trmaml.p_lr", fmt.Sprintf(
		"must be stated for task.omniglot.ways = %d: the paper gives eta_p only for 5, 10 and 20 ways (6.4e-6, 5.12e-6, 3.2e-6); "+
			"experiment grids can turn any config into a TR-MAML run", ways))
}

// Omniglot's size: images in the two sets of the data, and meta-training
// alphabets (p.csv's columns).
const (
	omniglotImages     = 32460
	omniglotTrainTasks = 25
)

// Memory implements configs.Family. The graphs' large values are the
// activations of every image: per block its convolution output at that
// block's resolution, per filter, and their gradients. A support image
// costs more than a query image (its activations are differentiated twice
// by the meta-gradient), so each counts with its own factor, in units of
// one image's activations. They are fitted to the resident peaks of
// 12-iteration `trmaml train` runs of the paper's 5-way 1-shot, 20-way
// 1-shot and 20-way 5-shot settings in the default build (/usr/bin/time
// -v, GOMAXPROCS 2; docs/cluster.md), less about 67 MiB of data and
// runtime (the estimate adds 88): per support and query image 5.06 and
// 2.81 in training at one inner step, 3.0 and 0.52 in evaluation, rounded
// up to 5.2, 3, 3.2 and 0.75. The fast build's fused first block
// (float32 with vector kernels) needs about 1.0 per training query image,
// so there the estimate is 1.5 to 2 times the peak. The two
// graphs share their buffers when their sizes agree
// (graph.Objective.ShareBuffers).
func (Family) Memory(c configs.Config) configs.MemoryEstimate {
	o, n := section(c), c.Model.CNN
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
	graph := func(tasks, query int, supportFactor, queryFactor float64) float64 {
		images := float64(tasks) * float64(o.Ways) * (supportFactor*float64(c.Task.Support) + queryFactor*float64(query))
		return float * (images*perImage + params*float64(tasks*(c.Inner.Steps+2)))
	}
	// Exact second order keeps every inner step's support activations for
	// the meta-gradient: about 2 more per support image and extra step
	// (1.9 measured at 2 and at 5 steps, 5-shot, in the default build).
	support := 5.2
	if c.Order != "first" {
		support += 2 * float64(c.Inner.Steps-1)
	}
	rows := float64(c.Meta.Iterations)/float64(max(c.Eval.Every, 1)) + 2
	instances := max(c.Eval.Instances, c.Eval.TrainInstances, c.Eval.FinalInstances)
	return configs.MemoryEstimate{
		TrainGraph:   graph(c.Meta.Batch, c.Task.Query, support, 3),
		EvalGraph:    graph(c.Eval.Batch, c.Eval.Query, 3.2, 0.75) + 8*float64(instances),
		SharedGraphs: c.Eval.Batch == c.Meta.Batch && c.Eval.Query == c.Task.Query,
		Records:      rows * (200 + 25*omniglotTrainTasks),
		Data:         omniglotImages * float64(o.ImageSize*o.ImageSize), // dense pixels: Omniglot's row spans take a third of it
	}
}

// loader builds the task sets of a config from the data: package
// tasks/omniglot/load installs it (run links it), so that reading configs
// and run directories links no image decoder or downloader.
var loader func(c configs.Config, env configs.Env) (*configs.TaskSets, error)

// SetLoader installs the data side of the family; package
// tasks/omniglot/load calls it from its init function.
func SetLoader(f func(c configs.Config, env configs.Env) (*configs.TaskSets, error)) { loader = f }

// Tasks implements configs.Family with the installed loader: the alphabets
// of the two splits, N-way K-shot; an instance's points are ways times the
// per-class counts.
func (Family) Tasks(c configs.Config, env configs.Env) (*configs.TaskSets, error) {
	if loader == nil {
		return nil, fmt.Errorf("tasks/omniglot: no data loader: import github.com/trmaml/trmaml/tasks/omniglot/load")
	}
	return loader(c, env)
}

// dataCommand is the family's "trmaml data omniglot", the downloader:
// package tasks/omniglot/load installs it, like the loader.
var dataCommand func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// SetDataCommand installs the family's data command; package
// tasks/omniglot/load calls it from its init function.
func SetDataCommand(f func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	dataCommand = f
}

// DataCommand implements configs.DataCommander with the installed
// command: it downloads, verifies or lists the Omniglot archives.
func (Family) DataCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if dataCommand == nil {
		return fmt.Errorf("tasks/omniglot: no data command: import github.com/trmaml/trmaml/tasks/omniglot/load")
	}
	return dataCommand(ctx, args, stdout, stderr)
}
