package configs

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is one experiment: which meta-learning algorithm to run on which task
// family with which model, inner loop, meta-optimizer and evaluation protocol.
type Config struct {
	// Name identifies the experiment in output paths and reports; it must be
	// non-empty and use only [A-Za-z0-9_.-] so it is safe as a file name.
	Name string `yaml:"name"`
	// Algorithm is the meta-training objective and how the task
	// distribution p is chosen, one of Algorithms:
	//   - "maml": the average post-adaptation loss over the empirical
	//     meta-training distribution (p fixed);
	//   - "trmaml": the worst task's loss, Algorithm 1 (projected stochastic
	//     ascent of p on the simplex; settings in trmaml);
	//   - "trmaml_entropic": the same min-max with exponentiated-gradient
	//     ascent of p (mirror ascent in the KL geometry; settings in
	//     trmaml_entropic);
	//   - "cvar": the CVaR of the task losses at level cvar.level, the
	//     average over the worst fraction a of the tasks (projected ascent of
	//     p on the capped simplex p_i <= 1/(a n); settings in cvar). Level 1
	//     is the tasks' uniform average, level 1/n is TR-MAML.
	// Each method reads only its own section; the others are ignored.
	Algorithm string `yaml:"algorithm"`
	// Order is "second" for the exact meta-gradient through the inner loop or
	// "first" for the first-order approximation that drops second derivatives.
	Order string `yaml:"order"`
	// Seed seeds every random draw of the run, so a run is reproducible.
	Seed uint64 `yaml:"seed"`
	// Task is the task family and the few-shot instance size.
	Task TaskConfig `yaml:"task"`
	// Model is the network whose initialisation is meta-learned.
	Model ModelConfig `yaml:"model"`
	// Inner is the adaptation on each instance's support set.
	Inner InnerConfig `yaml:"inner"`
	// Meta is the outer loop over meta-batches.
	Meta MetaConfig `yaml:"meta"`
	// TRMAML holds the settings only TR-MAML uses; the other methods ignore
	// them.
	TRMAML TRMAMLConfig `yaml:"trmaml"`
	// Entropic holds the settings of algorithm trmaml_entropic.
	Entropic EntropicConfig `yaml:"trmaml_entropic"`
	// CVaR holds the settings of algorithm cvar.
	CVaR CVaRConfig `yaml:"cvar"`
	// Eval is the periodic evaluation protocol.
	Eval EvalConfig `yaml:"eval"`
	// Data says where the task family's files are (Omniglot).
	Data DataConfig `yaml:"data"`
}

// DataConfig locates the data of file-based task families.
type DataConfig struct {
	// Root is the data root holding omniglot/ (see data/omniglot). Empty
	// means $TRMAML_DATA, else the user cache directory; the -data flag of
	// train, resume, eval and experiment overrides it without changing the
	// config (omniglot.ResolveRoot).
	Root string `yaml:"root"`
}

// TaskConfig selects the task family and the size of each few-shot instance.
type TaskConfig struct {
	// Family is the task family: "sinusoid" (regression, the MLP of model,
	// metric MSE) or "omniglot" (alphabets as N-way classification tasks,
	// the CNN of model.cnn, metric accuracy).
	Family string `yaml:"family"`
	// Support is K >= 1, the number of support points the inner loop adapts
	// on; for omniglot the number of support images per class (K-shot), so
	// an instance has ways*K support images.
	Support int `yaml:"support"`
	// Query is J >= 1, the number of query points the adapted model is scored
	// on during meta-training; for omniglot per class (paper: 10).
	Query int `yaml:"query"`
	// Sinusoid configures the "sinusoid" family.
	Sinusoid SinusoidConfig `yaml:"sinusoid"`
	// Omniglot configures the "omniglot" family.
	Omniglot OmniglotConfig `yaml:"omniglot"`
}

// OmniglotConfig configures Omniglot classification: each of the 25
// meta-training and 20 meta-test alphabets is a task, an instance is an
// N-way problem over N distinct characters of one alphabet.
type OmniglotConfig struct {
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

// OmniglotResizes lists the allowed values of task.omniglot.resize, the
// default first (data/omniglot's Resizes).
var OmniglotResizes = []string{"bilinear", "lanczos", "nearest"}

// MaxDrawings is the number of drawings of every Omniglot character: an
// instance's support and query images per class must fit in it.
const MaxDrawings = 20

// SinusoidConfig configures sinusoid regression: an instance draws an
// amplitude A and a phase phi and samples points (x, A sin(x - phi)). A task is
// an amplitude interval of width TaskWidth, so the task distribution can be
// imbalanced between easy (small A) and hard (large A) tasks.
type SinusoidConfig struct {
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
	return fmt.Errorf("cannot use %s: want a number, \"pi\" or \"2pi\"", describe(n))
}

// ModelConfig describes the network that is meta-learned: the fully
// connected MLP of the sinusoid family (hidden, activation, init,
// init_std) or the CNN of the omniglot family (cnn, initialised as
// graph.CNN.Init says), and the graphs' dtype.
type ModelConfig struct {
	// Hidden lists the hidden layer widths, each >= 1; empty gives a linear
	// model.
	Hidden []int `yaml:"hidden"`
	// Activation is the hidden nonlinearity: "relu", "tanh", "sigmoid" or
	// "softplus".
	Activation string `yaml:"activation"`
	// Init is the weight initialisation: "truncated_normal" (as in the
	// authors' code) or "he".
	Init string `yaml:"init"`
	// InitStd > 0 is the standard deviation of the truncated normal
	// initialisation.
	InitStd float64 `yaml:"init_std"`
	// CNN is the convolutional network of the omniglot family; the fields
	// above describe the sinusoid family's MLP.
	CNN CNNConfig `yaml:"cnn"`
	// Dtype is the floating-point type of the graphs: "float64" or
	// "float32" (about twice as fast for the CNN, half the memory).
	Dtype string `yaml:"dtype"`
}

// CNNConfig is MAML's Omniglot network: Blocks blocks of [3x3 conv with
// Filters filters, batch norm, ReLU, 2x2 max-pool] and a linear layer.
type CNNConfig struct {
	// Filters >= 1 per convolution (paper: 64).
	Filters int `yaml:"filters"`
	// Blocks >= 1 (paper: 4); each halves the image side, which must stay
	// >= 1 (28 -> 14 -> 7 -> 3 -> 1).
	Blocks int `yaml:"blocks"`
	// AdaptBN adapts batch norm's scale and shift in the inner loop too
	// (the paper: false, only conv and linear weights and biases).
	AdaptBN bool `yaml:"adapt_bn"`
}

// InnerConfig is the inner loop: plain gradient steps on the support set.
type InnerConfig struct {
	// Steps >= 1 is the number of inner gradient steps.
	Steps int `yaml:"steps"`
	// Alpha > 0 is the inner step size.
	Alpha float64 `yaml:"alpha"`
}

// MetaConfig is the outer loop that updates the meta-parameters w.
type MetaConfig struct {
	// Iterations >= 1 is the number of meta-updates.
	Iterations int `yaml:"iterations"`
	// Batch is C >= 1, the number of task instances per iteration.
	Batch int `yaml:"batch"`
	// Optimizer is the update rule for w: "adam" or "sgd".
	Optimizer string `yaml:"optimizer"`
	// LR > 0 is the meta learning rate of w (with schedule cosine, the
	// rate at the start).
	LR float64 `yaml:"lr"`
	// Schedule is how the meta learning rate changes over the run:
	// "constant" (LR throughout) or "cosine" (annealed from LR at the first
	// iteration to LRMin at the last along half a cosine, as the authors'
	// Omniglot code: lr_t = lr_min + (lr - lr_min)(1 + cos(pi t / T)) / 2).
	Schedule string `yaml:"schedule"`
	// LRMin in [0, LR] is the final learning rate of the cosine schedule;
	// the constant schedule ignores it.
	LRMin float64 `yaml:"lr_min"`
	// BallRadius >= 0 is the radius of the ball w is projected onto after
	// each update; 0 means w is unconstrained.
	BallRadius float64 `yaml:"ball_radius"`
	// Output selects which iterate the run returns, following Algorithm 1's
	// output rules: "last", "T1" or "T2".
	Output string `yaml:"output"`
}

// TRMAMLConfig holds TR-MAML's extra settings.
type TRMAMLConfig struct {
	// PLR is eta_p >= 0, the step size of the ascent on the task distribution
	// p, in Algorithm 1's convention (the n/C factor is inside g_p). Its
	// good value depends on K, so a file that leaves it out gets the
	// appendix's value for its task.support: 1e-4 at K = 5, 2e-4 at K = 10;
	// for any other K the file must state it (Parse refuses it otherwise).
	// It is derived even for MAML configs, which ignore it, because
	// experiment grids turn a config into TR-MAML runs.
	PLR float64 `yaml:"p_lr"`
}

// EntropicConfig holds the settings of entropic TR-MAML.
type EntropicConfig struct {
	// PLR is eta_p >= 0 of the exponentiated-gradient step
	// p_i <- p_i exp(eta_p g_i) / Z, with Algorithm 1's g_p (n/C inside).
	// It moves log p_i where TR-MAML's p_lr moves p_i, so comparable speeds
	// need a larger value (roughly TR-MAML's divided by a typical weight).
	// A file that leaves it out gets ten times its trmaml.p_lr (stated or
	// derived from K), as the paper configs use.
	PLR float64 `yaml:"p_lr"`
}

// CVaRConfig holds the settings of CVaR meta-learning.
type CVaRConfig struct {
	// Level is a in (0, 1]: p is restricted to p_i <= 1/(a n), so the
	// objective is the mean loss of the worst fraction a of the n
	// meta-training tasks.
	Level float64 `yaml:"level"`
	// PLR is eta_p >= 0 of the projected ascent, in TR-MAML's convention.
	// A file that leaves it out gets its trmaml.p_lr (stated or derived from
	// K), so level 1/n reproduces TR-MAML.
	PLR float64 `yaml:"p_lr"`
}

// Algorithms lists the allowed values of Config.Algorithm.
var Algorithms = []string{"maml", "trmaml", "trmaml_entropic", "cvar"}

// EvalConfig is the evaluation protocol, run periodically during training.
type EvalConfig struct {
	// Every >= 1: evaluate (and checkpoint) every Every iterations, and at
	// the end.
	Every int `yaml:"every"`
	// Instances >= 1 is the number of meta-test task instances per
	// evaluation (paper: 5000).
	Instances int `yaml:"instances"`
	// TrainInstances >= 1 is the number of meta-train task instances per
	// evaluation (paper: 5000).
	TrainInstances int `yaml:"train_instances"`
	// Query >= 1 is the number of held-out points each evaluated instance is
	// scored on after adapting on its K support points. It defaults to 1000,
	// independent of K, as in the authors' code that produced the paper's
	// Table 1: scoring on only J = K points makes each task's MSE noisy and
	// biases the worst task, a maximum over many noisy estimates, upwards.
	// For omniglot it counts query images per class (a character has 20
	// drawings, support included) and defaults to task.query.
	Query int `yaml:"query"`
	// Batch >= 1 is the number of instances per evaluation graph batch; it
	// bounds memory, not results.
	Batch int `yaml:"batch"`
	// FinalInstances is the number of instances of each split in the
	// evaluation of the trained solution (result.json, trmaml eval). 0 means
	// eval.instances and eval.train_instances, as during training; an
	// omniglot file that leaves it out gets the paper's 5,000, so that
	// evaluation during training can be cheaper.
	FinalInstances int `yaml:"final_instances"`
}

// Defaults returns the paper's sine K=5 MAML setting. Load and Parse decode a
// file over it, so a file need only state what differs, except for the
// defaults that depend on K: trmaml.p_lr follows the file's task.support
// (see TRMAMLConfig.PLR), trmaml_entropic.p_lr and cvar.p_lr follow
// trmaml.p_lr. eval.query, 1000 held-out points, does not depend
// on K (see EvalConfig.Query).
func Defaults() Config {
	return Config{
		Name:      "sine_k5_maml",
		Algorithm: "maml",
		Order:     "second",
		Seed:      1,
		Task: TaskConfig{
			Family:  "sinusoid",
			Support: 5,
			Query:   5,
			Sinusoid: SinusoidConfig{
				PhaseMax:        math.Pi,
				XMin:            -5,
				XMax:            5,
				TaskWidth:       0.01,
				TestAmplitudes:  [2]float64{0.1, 5},
				TrainAmplitudes: [][2]float64{{0.1, 1.05}, {4.95, 5}},
			},
			Omniglot: OmniglotConfig{Ways: 5, Rotate: true, ImageSize: 28, Resize: "bilinear", RotateEval: true},
		},
		Model: ModelConfig{
			Hidden:     []int{40, 40},
			Activation: "relu",
			Init:       "truncated_normal",
			InitStd:    0.01,
			CNN:        CNNConfig{Filters: 64, Blocks: 4},
			Dtype:      "float64",
		},
		Inner: InnerConfig{Steps: 1, Alpha: 1e-3},
		Meta: MetaConfig{
			Iterations: 70000,
			Batch:      25,
			Optimizer:  "adam",
			LR:         1e-3,
			Schedule:   "constant",
			BallRadius: 0,
			Output:     "last",
		},
		TRMAML:   TRMAMLConfig{PLR: 1e-4},
		Entropic: EntropicConfig{PLR: 1e-3},
		CVaR:     CVaRConfig{Level: 0.1, PLR: 1e-4},
		Eval: EvalConfig{
			Every:          10000,
			Instances:      5000,
			TrainInstances: 5000,
			Query:          1000,
			Batch:          100,
		},
	}
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Validate checks every field's range and returns all violations joined, each
// naming the field path and what is allowed. It knows no file or line; Load
// and Parse add them.
func (c Config) Validate() error { return errors.Join(c.validate()...) }

// validate returns every range violation as a *fieldError.
func (c Config) validate() []error {
	var k checker
	if !validName.MatchString(c.Name) {
		k.fail("name", c.Name, "must be non-empty and use only A-Z a-z 0-9 _ . -")
	}
	k.oneOf("algorithm", c.Algorithm, Algorithms...)
	k.oneOf("order", c.Order, "second", "first")

	t := c.Task
	k.oneOf("task.family", t.Family, Families...)
	k.between("task.support", t.Support, 1, MaxPoints)
	k.between("task.query", t.Query, 1, MaxPoints)
	s := t.Sinusoid
	p := float64(s.PhaseMax)
	k.float("task.sinusoid.phase_max", p, p > 0 && p <= 2*math.Pi, "in (0, 2pi]")
	k.float("task.sinusoid.x_min", s.XMin, true, "")
	k.float("task.sinusoid.x_max", s.XMax, s.XMax > s.XMin, fmt.Sprintf("> x_min (%v)", s.XMin))
	k.float("task.sinusoid.task_width", s.TaskWidth, s.TaskWidth > 0, "> 0")
	lo, hi := s.TestAmplitudes[0], s.TestAmplitudes[1]
	k.interval("task.sinusoid.test_amplitudes", s.TestAmplitudes, 0 < lo && lo < hi, "with 0 < lo < hi")
	if n := taskCount(lo, hi, s.TaskWidth); s.TaskWidth > 0 && n > MaxTasks {
		k.fail("task.sinusoid.task_width", s.TaskWidth, "makes %v meta-test tasks of test_amplitudes %s: at most %d are allowed", n, show(s.TestAmplitudes), MaxTasks)
	}
	if len(s.TrainAmplitudes) == 0 {
		k.fail("task.sinusoid.train_amplitudes", s.TrainAmplitudes, "must be a non-empty list of [lo, hi] ranges")
	}
	inside := fmt.Sprintf("with lo < hi inside test_amplitudes %s", show(s.TestAmplitudes))
	for i, a := range s.TrainAmplitudes {
		path := fmt.Sprintf("task.sinusoid.train_amplitudes[%d]", i)
		k.interval(path, a, a[0] < a[1] && a[0] >= lo && a[1] <= hi, inside)
		for j, b := range s.TrainAmplitudes[:i] {
			if a[0] < b[1] && b[0] < a[1] {
				k.fail(path, a, "must not overlap train_amplitudes[%d] = %s", j, show(b))
			}
		}
	}

	if t.Family == "omniglot" {
		k.omniglot(c)
	}

	m := c.Model
	k.oneOf("model.dtype", m.Dtype, "float64", "float32")
	if len(m.Hidden) > MaxLayers {
		k.fail("model.hidden", fmt.Sprintf("a list of %d", len(m.Hidden)), "must have at most %d entries", MaxLayers)
	}
	for i, h := range m.Hidden {
		k.between(fmt.Sprintf("model.hidden[%d]", i), h, 1, MaxWidth)
	}
	k.oneOf("model.activation", m.Activation, "relu", "tanh", "sigmoid", "softplus")
	k.oneOf("model.init", m.Init, "truncated_normal", "he")
	k.float("model.init_std", m.InitStd, m.InitStd > 0, "> 0")

	k.between("inner.steps", c.Inner.Steps, 1, MaxSteps)
	k.float("inner.alpha", c.Inner.Alpha, c.Inner.Alpha > 0, "> 0")

	o := c.Meta
	k.between("meta.iterations", o.Iterations, 1, MaxIterations)
	k.between("meta.batch", o.Batch, 1, MaxBatch)
	k.oneOf("meta.optimizer", o.Optimizer, "adam", "sgd")
	k.float("meta.lr", o.LR, o.LR > 0, "> 0")
	k.oneOf("meta.schedule", o.Schedule, "constant", "cosine")
	k.float("meta.lr_min", o.LRMin, o.LRMin >= 0 && o.LRMin <= o.LR, fmt.Sprintf("in [0, meta.lr] = [0, %v]", o.LR))
	k.float("meta.ball_radius", o.BallRadius, o.BallRadius >= 0, ">= 0 (0: unconstrained)")
	k.oneOf("meta.output", o.Output, "last", "T1", "T2")

	k.float("trmaml.p_lr", c.TRMAML.PLR, c.TRMAML.PLR >= 0, ">= 0")
	k.float("trmaml_entropic.p_lr", c.Entropic.PLR, c.Entropic.PLR >= 0, ">= 0")
	k.float("cvar.level", c.CVaR.Level, c.CVaR.Level > 0 && c.CVaR.Level <= 1, "in (0, 1]")
	k.float("cvar.p_lr", c.CVaR.PLR, c.CVaR.PLR >= 0, ">= 0")

	e := c.Eval
	k.between("eval.every", e.Every, 1, MaxIterations)
	k.between("eval.instances", e.Instances, 1, MaxInstances)
	k.between("eval.train_instances", e.TrainInstances, 1, MaxInstances)
	k.between("eval.query", e.Query, 1, MaxEvalQuery)
	k.between("eval.batch", e.Batch, 1, MaxBatch)
	k.between("eval.final_instances", e.FinalInstances, 0, MaxInstances)
	if len(k.errs) == 0 {
		k.checkMemory(c)
	}
	return k.errs
}

// fieldError is a range violation of the field at path (e.g. "inner.alpha").
type fieldError struct{ path, value, rule string }

func (e *fieldError) Error() string { return e.path + " = " + e.value + ": " + e.rule }

// checker collects the violations found by Validate.
type checker struct{ errs []error }

func (k *checker) fail(path string, v any, rule string, args ...any) {
	k.errs = append(k.errs, &fieldError{path, show(v), fmt.Sprintf(rule, args...)})
}

func (k *checker) oneOf(path, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		k.fail(path, v, "must be one of %s", strings.Join(allowed, ", "))
	}
}

// between checks lo <= v <= hi; hi is the field's upper bound (bounds.go).
func (k *checker) between(path string, v, lo, hi int) {
	if v < lo || v > hi {
		k.fail(path, v, "must be in [%d, %d]", lo, hi)
	}
}

// float checks that v is finite and that ok holds, which rule describes.
func (k *checker) float(path string, v float64, ok bool, rule string) {
	switch {
	case !finite(v):
		k.fail(path, v, "%s", strings.TrimSpace("must be a finite number "+rule))
	case !ok:
		k.fail(path, v, "must be %s", rule)
	}
}

// interval checks that a range [lo, hi] is finite and that ok holds.
func (k *checker) interval(path string, v [2]float64, ok bool, rule string) {
	switch {
	case !finite(v[0]) || !finite(v[1]):
		k.fail(path, v, "must be [lo, hi] of finite numbers %s", rule)
	case !ok:
		k.fail(path, v, "must be [lo, hi] %s", rule)
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// show formats a field value for an error message.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case [2]float64:
		return fmt.Sprintf("[%v, %v]", v[0], v[1])
	}
	return fmt.Sprint(v)
}
