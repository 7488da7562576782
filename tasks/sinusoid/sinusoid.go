// Package sinusoid is the task family of sinusoid regression (the paper's
// Section 5.1): an instance draws an amplitude A and a phase phi and samples
// points (x, A sin(x - phi)); a task is an amplitude interval, so the task
// distribution can be imbalanced between easy (small A) and hard (large A)
// tasks. Its config section is task.sinusoid; it trains the MLP of
// model.mlp.hidden on the squared error. The sampler of its tasks (New) is
// here too, beside the family that registers it.
package sinusoid

import (
	"fmt"
	"math"

	"github.com/trmaml/trmaml/configs"
	"gopkg.in/yaml.v3"
)

// Name is the family's task.family value.
const Name = "sinusoid"

// Config is the section task.sinusoid. A task is an amplitude interval of
// width TaskWidth.
type Config struct {
	// PhaseMax bounds the phase, drawn uniformly from [0, PhaseMax]; it must
	// lie in (0, 2pi]. It defaults to pi because the authors' code that
	// produced the paper's table draws phases from [0, pi], while the paper's
	// text says 2pi; 2pi stays available.
	PhaseMax Radians `yaml:"phase_max"`
	// XMin is the lower end of the input range; inputs are drawn uniformly
	// from [XMin, XMax].
	XMin float64 `yaml:"x_min"`
	// XMax is the upper end of the input range; XMin < XMax.
	XMax float64 `yaml:"x_max"`
	// TaskWidth > 0 is the width of the amplitude interval that forms one
	// task: the amplitude ranges below are split into tasks of this width.
	TaskWidth float64 `yaml:"task_width"`
	// TestAmplitudes is [lo, hi] with 0 < lo < hi: the amplitude range of the
	// meta-test tasks.
	TestAmplitudes [2]float64 `yaml:"test_amplitudes"`
	// TrainAmplitudes is the non-empty list of amplitude ranges [lo, hi],
	// lo < hi, of the meta-training tasks; each lies inside TestAmplitudes and
	// no two overlap. Unequal ranges make an imbalanced task set.
	TrainAmplitudes [][2]float64 `yaml:"train_amplitudes"`
}

// Radians is an angle in radians. In YAML it is a number or one of the strings
// "pi" and "2pi", the two phase ranges worth naming; it is written back as a
// number.
type Radians float64

// UnmarshalYAML accepts a number, "pi" or "2pi".
func (r *Radians) UnmarshalYAML(n *yaml.Node) error {
	var f float64
	switch tag := n.ShortTag(); {
	case n.Kind != yaml.ScalarNode:
		return fmt.Errorf("cannot use a %s: want a number, \"pi\" or \"2pi\"", kind(n))
	case tag == "!!str" && n.Value == "pi":
		*r = math.Pi
		return nil
	case tag == "!!str" && n.Value == "2pi":
		*r = 2 * math.Pi
		return nil
	case (tag == "!!int" || tag == "!!float") && n.Decode(&f) == nil:
		*r = Radians(f)
		return nil
	}
	return fmt.Errorf("cannot use %q (%s): want a number, \"pi\" or \"2pi\"", n.Value, kind(n))
}

// kind names a YAML node's kind for an error message.
func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return fmt.Sprintf("list of %d", len(n.Content))
	}
	if k := n.ShortTag()[2:]; k != "str" {
		return k
	}
	return "string"
}

// Family is the sinusoid task family.
type Family struct{}

// Name implements configs.Family.
func (Family) Name() string { return Name }

// NewSection implements configs.Family: the authors' setting, amplitudes
// [0.1, 5] split into tasks of width 0.01, meta-training on the easy
// [0.1, 1.05] and the hard [4.95, 5].
func (Family) NewSection() any {
	return &Config{
		PhaseMax: math.Pi, XMin: -5, XMax: 5, TaskWidth: 0.01,
		TestAmplitudes:  [2]float64{0.1, 5},
		TrainAmplitudes: [][2]float64{{0.1, 1.05}, {4.95, 5}},
	}
}

// Noun implements configs.Family.
func (Family) Noun() string { return "task" }

// Sampling implements configs.SamplingDescriber: every meta-training
// amplitude interval is equally likely.
func (Family) Sampling(configs.Config) configs.Sampling {
	return configs.Sampling{Formula: "1 / n", Terms: "for n tasks, all equally likely"}
}

// Model implements configs.Family: the fully connected network.
func (Family) Model() string { return "mlp" }

// IO implements configs.Family: x in, y out.
func (Family) IO(configs.Config) configs.IO {
	return configs.IO{Height: 1, Width: 1, Channels: 1, Outputs: 1}
}

// Ways implements configs.Family: regression.
func (Family) Ways(configs.Config) int { return 0 }

// Defaults implements configs.Family: the sinusoid's are Defaults'.
func (Family) Defaults(*configs.Config, func(string) bool) []error { return nil }

// paperPLR is the appendix's eta_p for each K it reports.
var paperPLR = map[int]float64{5: 1e-4, 10: 2e-4}

// PLR implements configs.Family: the appendix's eta_p at K = 5 and 10.
func (Family) PLR(c configs.Config) (float64, error) {
	if v, ok := paperPLR[c.Task.Support]; ok {
		return v, nil
	}
	if c.Task.Support < 1 || c.Task.Support > configs.MaxPoints {
		return 0, nil // validation reports task.support
	}
	return 0, configs.NotSet("trmaml.p_lr", fmt.Sprintf(
		"must be stated for task.support = %d: the paper gives eta_p only for K = 5 (1e-4) and K = 10 (2e-4); "+
			"experiment grids can turn any config into a TR-MAML run", c.Task.Support))
}

func section(c configs.Config) *Config { return c.Task.Section(Name).(*Config) }

// ScaleFields names the input range, which sets the scale of the inputs
// (configs.ScaleFielder).
func (Family) ScaleFields(c configs.Config) string {
	s := section(c)
	return fmt.Sprintf("task.sinusoid.x_min = %g, task.sinusoid.x_max = %g", s.XMin, s.XMax)
}

// Check implements configs.Family.
func (Family) Check(c configs.Config, k *configs.Checker) {
	s := section(c)
	p := float64(s.PhaseMax)
	k.Float("task.sinusoid.phase_max", p, p > 0 && p <= 2*math.Pi, "in (0, 2pi]")
	k.Float("task.sinusoid.x_min", s.XMin, true, "")
	k.Float("task.sinusoid.x_max", s.XMax, s.XMax > s.XMin, fmt.Sprintf("> x_min (%v)", s.XMin))
	k.Float("task.sinusoid.task_width", s.TaskWidth, s.TaskWidth > 0, "> 0")
	lo, hi := s.TestAmplitudes[0], s.TestAmplitudes[1]
	k.Interval("task.sinusoid.test_amplitudes", s.TestAmplitudes, 0 < lo && lo < hi, "with 0 < lo < hi")
	if n := taskCount(lo, hi, s.TaskWidth); s.TaskWidth > 0 && n > configs.MaxTasks {
		k.Fail("task.sinusoid.task_width", s.TaskWidth, "makes %v meta-test tasks of test_amplitudes %s: at most %d are allowed", n, show(s.TestAmplitudes), configs.MaxTasks)
	}
	if len(s.TrainAmplitudes) == 0 {
		k.Fail("task.sinusoid.train_amplitudes", s.TrainAmplitudes, "must be a non-empty list of [lo, hi] ranges")
	}
	inside := fmt.Sprintf("with lo < hi inside test_amplitudes %s", show(s.TestAmplitudes))
	for i, a := range s.TrainAmplitudes {
		path := fmt.Sprintf("task.sinusoid.train_amplitudes[%d]", i)
		k.Interval(path, a, a[0] < a[1] && a[0] >= lo && a[1] <= hi, inside)
		for j, b := range s.TrainAmplitudes[:i] {
			if a[0] < b[1] && b[0] < a[1] {
				k.Fail(path, a, "must not overlap train_amplitudes[%d] = %s", j, show(b))
			}
		}
	}
}

func show(v [2]float64) string { return fmt.Sprintf("[%v, %v]", v[0], v[1]) }

// taskCount is the number of tasks an amplitude range of the given width
// makes, or +Inf when it cannot be computed.
func taskCount(lo, hi, width float64) float64 {
	n := math.Ceil((hi-lo)/width - 1e-9)
	if math.IsNaN(n) {
		return math.Inf(1)
	}
	return n
}

// Memory implements configs.Family: the records of the training tasks
// (generated tasks hold no data).
func (Family) Memory(c configs.Config) configs.MemoryEstimate {
	s, trainTasks := section(c), 0.0
	for _, a := range s.TrainAmplitudes {
		trainTasks += (a[1] - a[0]) / s.TaskWidth
	}
	return configs.MemoryEstimate{Records: configs.RecordsMemory(c, trainTasks)}
}

// Tasks implements configs.Family.
func (Family) Tasks(c configs.Config, _ configs.Env) (*configs.TaskSets, error) {
	s := section(c)
	train, test, err := New(Spec{
		PhaseMax: float64(s.PhaseMax), XMin: s.XMin, XMax: s.XMax, TaskWidth: s.TaskWidth,
		TestAmplitudes: s.TestAmplitudes, TrainAmplitudes: s.TrainAmplitudes,
	})
	if err != nil {
		return nil, &configs.ConfigError{Field: "task.sinusoid", Problem: err.Error()}
	}
	return &configs.TaskSets{
		Train: train, Test: test, EvalTrain: train, EvalTest: test,
		Support: c.Task.Support, Query: c.Task.Query, EvalQuery: c.Eval.Query,
	}, nil
}
