// Package omniglot is the task family of Omniglot classification (the
// paper's Section 5.2): each of the 25 meta-training and 20 meta-test
// alphabets is a task, an instance is an N-way problem over N distinct
// characters of one alphabet. Its config section is task.omniglot; it
// trains a classifier (by default conv4) with softmax cross-entropy and
// reports accuracy. Its data side, which reads the drawings under the data
// root, is package tasks/omniglot/data.
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
// first (package data's Resizes).
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

// Sampling implements configs.SamplingDescriber: an alphabet's mass is the
// number of its N-way character sets.
func (Family) Sampling(configs.Config) configs.Sampling {
	return configs.Sampling{Formula: "C(Z_i, N) / sum_j C(Z_j, N)", Terms: "for an alphabet of Z_i characters and N ways", Order: "fewest characters Z_i first"}
}

// Model implements configs.Family: MAML's CNN.
func (Family) Model() string { return "conv4" }

// IO implements configs.Family: one-channel square images, one score per
// class.
func (Family) IO(c configs.Config) configs.IO {
	o := section(c)
	return configs.IO{Height: o.ImageSize, Width: o.ImageSize, Channels: 1, Outputs: o.Ways, Classes: true}
}

// Ways implements configs.Family.
func (Family) Ways(c configs.Config) int { return section(c).Ways }

func section(c configs.Config) *Config { return Section(c) }

// Section is c's task.omniglot section.
func Section(c configs.Config) *Config { return c.Task.Section(Name).(*Config) }

// Check implements configs.Family: the instance sizes against the data (N
// distinct characters of an alphabet, K + J distinct drawings of a
// character).
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

// Memory implements configs.Family: the records of the 25 meta-training
// alphabets and the decoded images.
func (Family) Memory(c configs.Config) configs.MemoryEstimate {
	o := section(c)
	return configs.MemoryEstimate{
		Records: configs.RecordsMemory(c, omniglotTrainTasks),
		Data:    omniglotImages * float64(o.ImageSize*o.ImageSize), // dense pixels: Omniglot's row spans take a third of it
	}
}

// DataPackage registers the family's data side (configs.DataSide): it
// reads, decodes and downloads the drawings, so reading configs and run
// directories links none of that; package run imports it.
const DataPackage = "github.com/trmaml/trmaml/tasks/omniglot/data"

// Tasks implements configs.Family with the registered data side: the
// alphabets of the two splits, N-way K-shot; an instance's points are ways
// times the per-class counts.
func (Family) Tasks(c configs.Config, env configs.Env) (*configs.TaskSets, error) {
	d, err := configs.DataSideOf(Name, DataPackage)
	if err != nil {
		return nil, err
	}
	return d.Tasks(c, env)
}

// ReadsData implements configs.DataReader: the alphabets are read from
// omniglot/ under the data root.
func (Family) ReadsData() {}

// DataCommand implements configs.DataCommander with the registered data
// side: it downloads, verifies or lists the Omniglot archives.
func (Family) DataCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	d, err := configs.DataSideOf(Name, DataPackage)
	if err != nil {
		return err
	}
	cmd, ok := d.(configs.DataCommander)
	if !ok {
		return fmt.Errorf("task family %q: its data side (%T) has no data command", Name, d)
	}
	return cmd.DataCommand(ctx, args, stdout, stderr)
}
