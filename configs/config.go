package configs

import (
	"reflect"
	"slices"

	"github.com/trmaml/trmaml/metalearn"
)

// Config is one experiment: which meta-learning algorithm to run on which task
// family with which model, inner loop, meta-optimizer and evaluation protocol.
type Config struct {
	// Name identifies the experiment in output paths and reports; it must be
	// non-empty and use only [A-Za-z0-9_.-] so it is safe as a file name.
	Name string `yaml:"name"`
	// Algorithm is the meta-training objective and how the task
	// distribution p is chosen: the name of a registered method
	// (metalearn.MethodNames: "maml", "trmaml", "trmaml_entropic", "cvar"
	// and any a program registers). Each method's settings are the config
	// section of its name (e.g. trmaml: {p_lr}, cvar: {level, p_lr}); each
	// method reads only its own section.
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
	// Methods holds the section of every registered method, keyed by its
	// name: the method with its settings (metalearn.MethodInfo). In YAML
	// each is a top-level key after meta.
	Methods map[string]metalearn.MethodSettings `yaml:"-"`
	// Eval is the periodic evaluation protocol.
	Eval EvalConfig `yaml:"eval"`
	// Data says where the task family's files are (Omniglot).
	Data DataConfig `yaml:"data"`
	// Init says where the initial meta-parameters come from.
	Init InitConfig `yaml:"init"`
}

// InitConfig is where meta-training starts.
type InitConfig struct {
	// From, if not empty, is a safetensors file (trmaml export's, or one
	// written elsewhere with the same names, shapes and dtype F32) whose
	// tensors are the model's initial parameters; empty draws them as the
	// model's initialisation does.
	From string `yaml:"from"`
}

// DataConfig locates the data of file-based task families.
type DataConfig struct {
	// Root is the data root holding omniglot/ (see tasks/omniglot/data).
	// Empty means $TRMAML_DATA, else the user cache directory; the -data flag of
	// train, resume, eval and experiment overrides it without changing the
	// config (omniglot.ResolveRoot).
	Root string `yaml:"root"`
}

// TaskConfig selects the task family and the size of each few-shot instance.
type TaskConfig struct {
	// Family is the task family, the name of a registered Family (the
	// built-in ones are the table of package tasks, e.g. "sinusoid":
	// regression with the MLP of model, metric MSE; "omniglot": alphabets as
	// N-way classification tasks, the model's class scores, metric accuracy).
	Family string `yaml:"family"`
	// Support is K >= 1, the number of support points the inner loop adapts
	// on; for omniglot the number of support images per class (K-shot), so
	// an instance has ways*K support images.
	Support int `yaml:"support"`
	// Query is J >= 1, the number of query points the adapted model is scored
	// on during meta-training; for omniglot per class (paper: 10).
	Query int `yaml:"query"`
	// Sections holds the section of every registered family, keyed by its
	// name (a pointer to the family's type, Family.NewSection). In YAML
	// each is a key under task.
	Sections map[string]any `yaml:"-"`
}

// ModelConfig chooses the network that is meta-learned, a registered
// model (ModelNames: the built-in mlp and conv4, and any a program
// registers), and the graphs' dtype. The model's settings are the section
// of its name under model, e.g. model: {kind: mlp, mlp: {hidden: [40, 40]}}.
type ModelConfig struct {
	// Kind is the registered model; a file that leaves it out gets its
	// task family's model (Family.Model).
	Kind string `yaml:"kind"`
	// Dtype is the floating-point type of the graphs: "float64" or
	// "float32" (about twice as fast for the CNN, half the memory).
	Dtype string `yaml:"dtype"`
	// Sections holds the section of every registered model, keyed by its
	// name (a pointer to the model's type, Model.NewSection). In YAML each
	// is a key under model.
	Sections map[string]any `yaml:"-"`
}

// InnerConfig is the inner loop: a registered loop (InnerLoopNames: sgd,
// MAML's plain gradient steps, and metasgd, anil, mamlpp and any a program
// registers) with its steps and step size; a loop's own settings are the
// section of its name under inner.
type InnerConfig struct {
	// Kind is the registered inner loop.
	Kind string `yaml:"kind"`
	// Steps >= 1 is the number of inner gradient steps.
	Steps int `yaml:"steps"`
	// Alpha > 0 is the inner step size (Meta-SGD's and MAML++'s learned
	// step sizes start at it).
	Alpha float64 `yaml:"alpha"`
	// Sections holds the section of every registered inner loop, keyed by
	// its name. In YAML each is a key under inner.
	Sections map[string]any `yaml:"-"`
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
	// output rules: "last", "T1" or "T2"; or "best_val", the iterate of the
	// evaluation whose meta-validation eval.select was best (a family with
	// meta-validation tasks only).
	Output string `yaml:"output"`
}

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
	// changes memory and speed, not results. A batch's instances run in
	// parallel, so fewer than the CPUs leave some idle. Equal to Meta.Batch,
	// with Query equal to Task.Query, the evaluation graph reuses the
	// training graph's buffers and costs no memory of its own; any other
	// value adds the evaluation graph's own buffers, smaller at a smaller
	// batch.
	Batch int `yaml:"batch"`
	// FinalInstances is the number of instances of each split in the
	// evaluation of the trained solution (result.json, trmaml eval). 0 means
	// eval.instances and eval.train_instances, as during training; an
	// omniglot file that leaves it out gets the paper's 5,000, so that
	// evaluation during training can be cheaper.
	FinalInstances int `yaml:"final_instances"`
	// CVaRAlpha lists the levels alpha in (0, 1), without duplicates, at
	// which results and reports give CVaR_alpha over the tasks beside the
	// mean and the worst: the mean loss of the worst fraction 1-alpha of the
	// tasks (DR-MAML's convention; the cvar method's level a is 1-alpha).
	// Empty: none.
	CVaRAlpha []float64 `yaml:"cvar_alpha"`
	// Steps is the number of inner gradient steps of the evaluated
	// adaptation; 0 means inner.steps, the paper's protocol (one step in
	// training and at meta-test). MAML's mini-ImageNet setting trains with
	// 5 steps and evaluates with 10. An inner loop that learns a setting
	// per step (mamlpp) evaluates with inner.steps only. Left out of
	// config.yaml when 0, so that the files of runs that do not use it
	// are as before.
	Steps int `yaml:"steps,omitempty"`
	// Select is the statistic over the meta-validation tasks that picks
	// the best model of meta.output best_val: "worst" (also "", the
	// default), "mean" or "cvar" (CVaR at the first eval.cvar_alpha level).
	Select string `yaml:"select"`
}

// Defaults returns the paper's sine K=5 MAML setting, with every registered
// method's and family's section at its defaults. Load and Parse decode a
// file over it, so a file need only state what differs, except for the
// defaults that depend on the task family and its instance size, which
// Parse fills from the family and the methods (Family.Defaults and PLR,
// metalearn.MethodInfo.Defaults): trmaml.p_lr follows the family's
// instance size, trmaml_entropic.p_lr and cvar.p_lr follow a stated
// trmaml.p_lr (metalearn.MethodDefaults.PLR).
// eval.query, 1000 held-out points, does not depend on K (see
// EvalConfig.Query).
func Defaults() Config {
	c := Config{
		Name:      "sine_k5_maml",
		Algorithm: "maml",
		Order:     "second",
		Seed:      1,
		Task: TaskConfig{
			Family:   "sinusoid",
			Support:  5,
			Query:    5,
			Sections: map[string]any{},
		},
		Model: ModelConfig{Dtype: "float64", Sections: map[string]any{}},
		Inner: InnerConfig{Kind: "sgd", Steps: 1, Alpha: 1e-3, Sections: map[string]any{}},
		Meta: MetaConfig{
			Iterations: 70000,
			Batch:      25,
			Optimizer:  "adam",
			LR:         1e-3,
			Schedule:   "constant",
			BallRadius: 0,
			Output:     "last",
		},
		Methods: map[string]metalearn.MethodSettings{},
		Eval: EvalConfig{
			Every:          10000,
			Instances:      5000,
			TrainInstances: 5000,
			Query:          1000,
			Batch:          100,
		},
	}
	for _, f := range families {
		c.Task.Sections[f.Name()] = f.NewSection()
	}
	for _, m := range models {
		c.Model.Sections[m.Name()] = m.NewSection()
	}
	for _, l := range innerLoops {
		c.Inner.Sections[l.Name()] = l.NewSection()
	}
	if f, ok := LookupFamily(c.Task.Family); ok {
		c.Model.Kind = f.Model()
	}
	for _, m := range metalearn.Methods() {
		c.Methods[m.Name] = m.New()
	}
	return c
}

// Clone returns a copy of c that shares no section with it, so that
// changing a setting of the copy leaves c as it was.
func (c Config) Clone() Config {
	methods := make(map[string]metalearn.MethodSettings, len(c.Methods))
	for k, m := range c.Methods {
		methods[k] = copySection(m).(metalearn.MethodSettings)
	}
	sections := make(map[string]any, len(c.Task.Sections))
	for k, s := range c.Task.Sections {
		v := reflect.New(reflect.TypeOf(s).Elem())
		v.Elem().Set(reflect.ValueOf(s).Elem())
		sections[k] = v.Interface()
	}
	c.Methods, c.Task.Sections = methods, sections
	c.Model.Sections = copySections(c.Model.Sections)
	c.Eval.CVaRAlpha = slices.Clone(c.Eval.CVaRAlpha)
	c.Inner.Sections = copySections(c.Inner.Sections)
	return c
}

// EvalSteps is the number of inner steps of the evaluated adaptation:
// eval.steps, or inner.steps if it is 0.
func (c Config) EvalSteps() int {
	if c.Eval.Steps > 0 {
		return c.Eval.Steps
	}
	return c.Inner.Steps
}
