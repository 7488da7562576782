// Package imagefolder is the task family of a user's own images: folders
// of PNG or JPEG files, grouped into tasks (Omniglot's alphabets,
// tieredImageNet's categories, FC100's superclasses, or the TR-MAML code's
// random groups of mini-ImageNet classes). A task is a group of classes; an
// instance is an N-way K-shot problem over N distinct classes of one group,
// with J query images per class. Its config section is task.imagefolder
// (checked in validate.go); it trains the model of model.kind (conv4 by
// default) with softmax cross-entropy and reports accuracy.
//
// The package reads the layouts (layout.go), decodes and resizes the
// images once into an 8-bit cache (decode.go, dataset.go, package
// data/imagecache), samples instances (taskset.go) and describes a folder
// for `trmaml data check` (check.go).
package imagefolder

import (
	"fmt"
	"path/filepath"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/data/dataroot"
)

// Name is the family's task.family value.
const Name = "imagefolder"

// Layouts are the accepted values of task.imagefolder.layout.
var Layouts = []string{"groups", "classes", "csv"}

// Filters are the accepted values of task.imagefolder.resize, the default
// first.
var Filters = []string{"bilinear", "nearest", "box"}

// Config is the section task.imagefolder.
type Config struct {
	// Dir is the dataset's folder; a relative path is under the data root
	// (data.root, the -data flag, $TRMAML_DATA or the user cache folder).
	Dir string `yaml:"dir"`
	// Layout is how the folder holds the classes: "groups"
	// (DIR/GROUP/CLASS/IMAGE, every group a task), "classes"
	// (DIR/CLASS/IMAGE) or "csv" (DIR/IMAGES/FILE with split files of
	// "filename,label" rows, mini-ImageNet's layout).
	Layout string `yaml:"layout"`
	// Images is the csv layout's folder of images, under Dir.
	Images string `yaml:"images"`
	// CSV lists the csv layout's split files (under Dir) of each split.
	CSV SplitLists `yaml:"csv"`
	// Splits names the groups of each split explicitly (layout groups, or
	// the groups of GroupFile); a group listed nowhere is not used.
	Splits SplitLists `yaml:"splits"`
	// Fractions, [train, validation, test], splits the groups at random
	// (from Seed) when Splits and CSV do not.
	Fractions []float64 `yaml:"fractions"`
	// GroupFile is a CSV of "class,group" rows (under Dir) that groups the
	// classes of layouts classes and csv.
	GroupFile string `yaml:"group_file"`
	// GroupSizes forms the groups of layouts classes and csv as the TR-MAML
	// code does: each split's classes shuffled (from Seed) and cut into
	// disjoint groups of these sizes, named SPLIT-1, SPLIT-2, ...
	GroupSizes SizeLists `yaml:"group_sizes"`
	// Seed seeds the random splits and groups; the config, and so the run
	// directory, records it, and `trmaml data check` lists the groups.
	Seed uint64 `yaml:"seed"`
	// Noun is what a task is called in tables and figures ("group",
	// "category", "superclass", "alphabet").
	Noun string `yaml:"noun"`
	// Ways is N >= 2, the classes of an instance.
	Ways int `yaml:"ways"`
	// Channels is 1 (greyscale) or 3 (colour); 0 infers it from the files,
	// which must then agree.
	Channels int `yaml:"channels"`
	// Convert turns a file whose channels differ from Channels into
	// Channels (luma for colour to grey, the grey copied for grey to
	// colour) instead of refusing it.
	Convert bool `yaml:"convert"`
	// Image is [height, width] the images are resized to; [0, 0] keeps the
	// files' size, which must then be the same for all.
	Image [2]int `yaml:"image"`
	// Resize is the filter: "bilinear" (x/image/draw's, antialiased when
	// shrinking; the Omniglot family's default), "nearest" (Pillow's
	// NEAREST) or "box" (the area average, OpenCV's INTER_AREA).
	Resize string `yaml:"resize"`
	// Normalize subtracts each channel's mean and divides by its standard
	// deviation over the meta-training images; otherwise pixels are
	// value/255 in [0, 1].
	Normalize bool `yaml:"normalize"`
	// Rotate turns each class of a training instance by a random multiple
	// of 90 degrees (square images; Omniglot's augmentation).
	Rotate bool `yaml:"rotate"`
	// RotateEval rotates evaluation instances too; a file that does not
	// state it gets Rotate's value.
	RotateEval bool `yaml:"rotate_eval"`
	// Flip mirrors each image of a training instance left to right with
	// probability 1/2.
	Flip bool `yaml:"flip"`
}

// SplitLists holds a list of names per split.
type SplitLists struct {
	Train      []string `yaml:"train"`
	Validation []string `yaml:"validation"`
	Test       []string `yaml:"test"`
}

// SizeLists holds a list of group sizes per split.
type SizeLists struct {
	Train      []int `yaml:"train"`
	Validation []int `yaml:"validation"`
	Test       []int `yaml:"test"`
}

func (s SplitLists) empty() bool { return len(s.Train)+len(s.Validation)+len(s.Test) == 0 }
func (s SizeLists) empty() bool  { return len(s.Train)+len(s.Validation)+len(s.Test) == 0 }

// of returns the lists in split order.
func (s SplitLists) of() [3][]string { return [3][]string{s.Train, s.Validation, s.Test} }
func (s SizeLists) of() [3][]int     { return [3][]int{s.Train, s.Validation, s.Test} }

// Bounds of the section's fields.
const (
	// MaxSide bounds task.imagefolder.image.
	MaxSide = 1024
	// MaxFilters bounds model.cnn.filters.
	MaxFilters = 1024
)

// Family is the image-folder task family.
type Family struct{}

// Name implements configs.Family.
func (Family) Name() string { return Name }

// NewSection implements configs.Family. The lists are empty, not nil, as
// a written and read config has them.
func (Family) NewSection() any {
	return &Config{Layout: "groups", Images: "images", Seed: 1, Noun: "group", Ways: 5, Resize: "bilinear",
		CSV: emptyLists(), Splits: emptyLists(), Fractions: []float64{}, GroupSizes: SizeLists{[]int{}, []int{}, []int{}}}
}

func emptyLists() SplitLists { return SplitLists{[]string{}, []string{}, []string{}} }

// Noun implements configs.Family; TaskNoun gives a config's own noun.
func (Family) Noun() string { return "group" }

// TaskNoun implements configs.TaskNouner: task.imagefolder.noun.
func (Family) TaskNoun(c configs.Config) string { return Section(c).Noun }

// Sampling implements configs.SamplingDescriber: a group's mass is the
// number of its N-way class sets.
func (Family) Sampling(c configs.Config) configs.Sampling {
	return configs.Sampling{Formula: "C(Z_i, N) / sum_j C(Z_j, N)", Terms: "for a " + Section(c).Noun + " of Z_i classes and N ways", Order: "fewest classes Z_i first"}
}

// EvalFields implements configs.EvalFielder.
func (Family) EvalFields() []string {
	return []string{"task.imagefolder.rotate_eval"}
}

// Model implements configs.Family: MAML's CNN.
func (Family) Model() string { return "conv4" }

// IO implements configs.Family: images of task.imagefolder.image and
// .channels, one score per class. A size or channel count left to the
// files (0) is known once they are read: Tasks then states it
// (configs.TaskSets.IO).
func (Family) IO(c configs.Config) configs.IO {
	s := Section(c)
	return configs.IO{Height: s.Image[0], Width: s.Image[1], Channels: s.Channels, Outputs: s.Ways, Classes: true}
}

// Ways implements configs.Family.
func (Family) Ways(c configs.Config) int { return Section(c).Ways }

// Section is c's task.imagefolder section.
func Section(c configs.Config) *Config { return c.Task.Section(Name).(*Config) }

// Defaults implements configs.Family: rotate_eval is rotate, eval.query is
// task.query (query images per class).
func (Family) Defaults(c *configs.Config, stated func(string) bool) []error {
	if s := Section(*c); !stated("task.imagefolder.rotate_eval") {
		s.RotateEval = s.Rotate
	}
	if !stated("eval.query") {
		c.Eval.Query = c.Task.Query
	}
	return nil
}

// PLR implements configs.Family: no published value fits every image
// folder, so a TR-MAML config states trmaml.p_lr.
func (Family) PLR(configs.Config) (float64, error) {
	return 0, configs.NotSet("trmaml.p_lr", "must be stated for task.family = imagefolder: the step size of p depends on the data set "+
		"(the paper's Omniglot value, 6.4e-6 at 5-way with 25 tasks, is a starting point)")
}

// Memory implements configs.Family: the records of the p.csv rows (the
// number of meta-training groups is known once the folder is read; 200
// bytes a row bounds it for hundreds of groups); the model estimates the
// graphs. The data itself (one byte per pixel and image) is not known from
// the config: `trmaml data check` prints it.
func (Family) Memory(c configs.Config) configs.MemoryEstimate {
	rows := float64(c.Meta.Iterations)/float64(max(c.Eval.Every, 1)) + 2
	return configs.MemoryEstimate{Records: rows * 200}
}

// ReadsData implements configs.DataReader: a relative
// task.imagefolder.dir lies under the data root.
func (Family) ReadsData() {}

// DataBytes implements configs.DataSizer: the decoded images of the
// splits, one byte per pixel and channel (3 when task.imagefolder.channels
// leaves them to the files), from a listing of the folder.
func (Family) DataBytes(c configs.Config, env configs.Env) (float64, error) {
	s := Section(c)
	dir, err := resolveDir(s.Dir, c.Data.Root, env.DataRoot)
	if err != nil {
		return 0, err
	}
	l, problems, err := scan(dir, s)
	if err != nil {
		return 0, err
	}
	if len(problems) > 0 {
		return 0, &DataError{dir, problems}
	}
	images := 0
	for _, groups := range l.splits {
		for _, g := range groups {
			for _, c := range g.classes {
				images += len(c.files)
			}
		}
	}
	channels := s.Channels
	if channels == 0 {
		channels = 3
	}
	return float64(images) * float64(s.Image[0]*s.Image[1]*channels), nil
}

// Tasks implements configs.Family: the groups of the train and test
// splits, read and decoded (or taken from the cache) from the folder.
func (Family) Tasks(c configs.Config, env configs.Env) (*configs.TaskSets, error) {
	s := Section(c)
	if s.Dir == "" {
		return nil, &configs.ConfigError{Field: "task.imagefolder.dir", Problem: "must name the dataset's folder (relative: under the data root)"}
	}
	dir, err := resolveDir(s.Dir, c.Data.Root, env.DataRoot)
	if err != nil {
		return nil, err
	}
	d, err := loadCached(dir, s, env)
	if err != nil {
		return nil, err
	}
	t := c.Task
	split := func(queries int, rotate, flip bool) (train, test *TaskSet, err error) {
		spec := Spec{Ways: s.Ways, Shots: t.Support, Queries: queries, Rotate: rotate, Flip: flip}
		if train, err = NewTaskSet(d, Train, spec); err != nil {
			return nil, nil, &configs.ConfigError{Field: "task.imagefolder", Problem: err.Error()}
		}
		if test, err = NewTaskSet(d, Test, spec); err != nil {
			return nil, nil, &configs.ConfigError{Field: "task.imagefolder", Problem: err.Error()}
		}
		return train, test, nil
	}
	train, test, err := split(t.Query, s.Rotate, s.Flip)
	if err != nil {
		return nil, err
	}
	evalTrain, evalTest, err := split(c.Eval.Query, s.RotateEval, false)
	if err != nil {
		return nil, err
	}
	io := configs.IO{Height: d.H(), Width: d.W(), Channels: d.C(), Outputs: s.Ways, Classes: true}
	sets := &configs.TaskSets{
		Train: train, Test: test, EvalTrain: evalTrain, EvalTest: evalTest,
		Support: s.Ways * t.Support, Query: s.Ways * t.Query, EvalQuery: s.Ways * c.Eval.Query,
		IO: &io,
	}
	if len(d.Groups(Validation)) > 0 {
		spec := Spec{Ways: s.Ways, Shots: t.Support, Queries: c.Eval.Query, Rotate: s.RotateEval}
		val, err := NewTaskSet(d, Validation, spec)
		switch {
		case err == nil:
			sets.EvalValidation = val
		case c.Meta.Output == "best_val": // else the run has no validation tasks
			return nil, &configs.ConfigError{Field: "meta.output", Problem: "best_val: " + err.Error()}
		}
	}
	return sets, nil
}

// resolveDir is the dataset folder: dir itself if absolute, else under the
// data root (the flag, the config's data.root, $TRMAML_DATA or the user
// cache folder).
func resolveDir(dir, configRoot, flagRoot string) (string, error) {
	if filepath.IsAbs(dir) {
		return dir, nil
	}
	root, err := dataroot.Resolve(flagRoot, configRoot)
	if err != nil {
		return "", err
	}
	return filepath.Join(root.Dir, dir), nil
}

// loadCached loads the dataset of dir once per env.Cache.
func loadCached(dir string, s *Config, env configs.Env) (*Dataset, error) {
	opt := optionsOf(s)
	d, err := env.Cache.Load(datasetKey{dir, opt.loadKey()}, func() (any, error) {
		d, err := Load(dir, opt)
		if err != nil {
			return nil, err
		}
		if d.Info.CacheErr != nil && env.Warnings != nil {
			fmt.Fprintf(env.Warnings, "trmaml: warning: the decoded image cache cannot be written, so the images are decoded again on every start: %v\n", d.Info.CacheErr)
		}
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	return d.(*Dataset), nil
}

// datasetKey is what makes two runs' datasets the same: the folder and
// Options.loadKey.
type datasetKey struct{ dir, options string }
