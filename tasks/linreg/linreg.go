// Package linreg is the task family of linear regression tasks, the convex
// family of the Theorem 1 study (package theory) with sampled data instead
// of population losses: task i draws inputs x with independent coordinates
// of variances Variances_i and labels y = x'Theta_i + e with noise e of
// variance Noise_i. Tasks differ in difficulty through their optimum, input
// scale and noise floor, and the meta-training distribution can be skewed
// through their masses. Its config section is task.linreg; it trains a
// linear model (the MLP of model.mlp.hidden, empty unless the file says
// otherwise) on the squared error. Meta-training and meta-test tasks are
// the same tasks; the meta-test set weighs them equally.
package linreg

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models/mlp"
)

// Name is the family's task.family value.
const Name = "linreg"

// Config is the section task.linreg.
type Config struct {
	// Tasks lists the tasks, at least one; all have the same dimension d,
	// the length of their theta.
	Tasks []Task `yaml:"tasks"`
}

// Task is one linear regression task.
type Task struct {
	// Theta is the task's optimum, d >= 1 finite numbers.
	Theta []float64 `yaml:"theta"`
	// Variances are the variances of the d input coordinates, each > 0
	// (the diagonal of the input covariance Sigma_i).
	Variances []float64 `yaml:"variances"`
	// Noise >= 0 is the variance of the label noise: the task's loss floor
	// is Noise/2 for the halved squared error, Noise for the MSE.
	Noise float64 `yaml:"noise"`
	// Mass > 0 is the task's relative weight in the meta-training
	// distribution that MAML samples from.
	Mass float64 `yaml:"mass"`
}

// MaxDim bounds d, the tasks' dimension.
const MaxDim = 10_000

// Family is the linear regression task family.
type Family struct{}

// Name implements configs.Family.
func (Family) Name() string { return Name }

// NewSection implements configs.Family: the three tasks of the Theorem 1
// study (theory.DefaultFamily): optima 120 degrees apart on a circle of
// radius 1/2, covariances diag(s, 0.7 s) of scales s = 1, 1.5 and 0.7,
// noise floors 0.3, 0.1 and 0.2, equal masses.
func (Family) NewSection() any {
	c := &Config{}
	for i, s := range []float64{1, 1.5, 0.7} {
		a := 2 * math.Pi * float64(i) / 3
		c.Tasks = append(c.Tasks, Task{
			Theta:     []float64{0.5 * math.Cos(a), 0.5 * math.Sin(a)},
			Variances: []float64{s, 0.7 * s},
			Noise:     []float64{0.3, 0.1, 0.2}[i],
			Mass:      1,
		})
	}
	return c
}

// Noun implements configs.Family.
func (Family) Noun() string { return "task" }

// Sampling implements configs.SamplingDescriber: the tasks' masses as the
// config gives them.
func (Family) Sampling(configs.Config) configs.Sampling {
	return configs.Sampling{Formula: "m_i / sum_j m_j", Terms: "for the masses m_i of task.linreg.tasks", Order: "least mass first"}
}

// Model implements configs.Family: the fully connected network, linear
// unless model.mlp.hidden is stated.
func (Family) Model() string { return "mlp" }

// IO implements configs.Family: d inputs, one output.
func (Family) IO(c configs.Config) configs.IO {
	return configs.IO{Height: 1, Width: 1, Channels: dim(c), Outputs: 1}
}

// dim is the input dimension d of c's tasks, 0 without tasks.
func dim(c configs.Config) int {
	if s := section(c); len(s.Tasks) > 0 {
		return len(s.Tasks[0].Theta)
	}
	return 0
}

// Ways implements configs.Family: regression.
func (Family) Ways(configs.Config) int { return 0 }

// Defaults implements configs.Family: a linear model (model.mlp.hidden empty)
// and the Theorem 1 study's inner step size 1/4 (below 1/L for the
// default tasks, whose largest input variance is 1.5).
func (Family) Defaults(c *configs.Config, stated func(string) bool) []error {
	if m, ok := c.Model.Section().(*mlp.Config); ok && !stated("model.mlp.hidden") {
		m.Hidden = nil
	}
	if !stated("inner.alpha") {
		c.Inner.Alpha = 0.25
	}
	return nil
}

// DefaultPLR is the family's eta_p: not from the paper, chosen so that p
// moves visibly within a few hundred iterations on tasks whose losses are
// of order 0.1 to 1.
const DefaultPLR = 0.02

// PLR implements configs.Family.
func (Family) PLR(configs.Config) (float64, error) { return DefaultPLR, nil }

func section(c configs.Config) *Config { return c.Task.Section(Name).(*Config) }

// Check implements configs.Family.
func (Family) Check(c configs.Config, k *configs.Checker) {
	s := section(c)
	if len(s.Tasks) == 0 {
		k.Fail("task.linreg.tasks", "an empty list", "must list at least one task")
		return
	}
	if len(s.Tasks) > configs.MaxTasks {
		k.Fail("task.linreg.tasks", fmt.Sprintf("a list of %d", len(s.Tasks)), "must have at most %d entries", configs.MaxTasks)
	}
	d := len(s.Tasks[0].Theta)
	for i, t := range s.Tasks {
		path := fmt.Sprintf("task.linreg.tasks[%d]", i)
		switch {
		case d < 1 || d > MaxDim:
			k.Fail(path+".theta", fmt.Sprintf("a list of %d", len(t.Theta)), "must have 1 to %d entries", MaxDim)
		case len(t.Theta) != d:
			k.Fail(path+".theta", fmt.Sprintf("a list of %d", len(t.Theta)), "must have %d entries, as tasks[0].theta", d)
		case len(t.Variances) != d:
			k.Fail(path+".variances", fmt.Sprintf("a list of %d", len(t.Variances)), "must have %d entries, one per coordinate of theta", d)
		}
		for j, v := range t.Theta {
			k.Float(fmt.Sprintf("%s.theta[%d]", path, j), v, true, "")
		}
		for j, v := range t.Variances {
			k.Float(fmt.Sprintf("%s.variances[%d]", path, j), v, v > 0, "> 0")
		}
		k.Float(path+".noise", t.Noise, t.Noise >= 0, ">= 0")
		k.Float(path+".mass", t.Mass, t.Mass > 0, "> 0")
	}
}

// Memory implements configs.Family: the records of the tasks (generated
// tasks hold no data).
func (Family) Memory(c configs.Config) configs.MemoryEstimate {
	return configs.MemoryEstimate{Records: configs.RecordsMemory(c, float64(len(section(c).Tasks)))}
}

// Tasks implements configs.Family.
func (Family) Tasks(c configs.Config, _ configs.Env) (*configs.TaskSets, error) {
	s := section(c)
	train := &Tasks{Tasks: s.Tasks}
	test := &Tasks{Tasks: s.Tasks, EqualMass: true}
	return &configs.TaskSets{
		Train: train, Test: test, EvalTrain: train, EvalTest: test,
		Support: c.Task.Support, Query: c.Task.Query, EvalQuery: c.Eval.Query,
	}, nil
}

// Tasks is a set of linear regression tasks, a metalearn.TaskSet with d
// inputs and one output.
type Tasks struct {
	Tasks []Task
	// EqualMass gives every task mass 1 instead of its Mass.
	EqualMass bool
}

// Len implements metalearn.TaskSet.
func (s *Tasks) Len() int { return len(s.Tasks) }

// Name implements metalearn.TaskSet: "task 1", "task 2", ... in the
// config's order.
func (s *Tasks) Name(i int) string { return fmt.Sprintf("task %d", i+1) }

// Mass implements metalearn.TaskSet.
func (s *Tasks) Mass(i int) float64 {
	if s.EqualMass {
		return 1
	}
	return s.Tasks[i].Mass
}

// Dims implements metalearn.TaskSet.
func (s *Tasks) Dims() (int, int) { return len(s.Tasks[0].Theta), 1 }

// Sample implements metalearn.TaskSet: the support and query points of row
// t are independent draws of task i.
func (s *Tasks) Sample(i int, rng *rand.Rand, b *metalearn.Batch, t int) {
	sx, sy, qx, qy := b.Row(t)
	s.points(i, rng, sx, sy)
	s.points(i, rng, qx, qy)
}

// points fills x (rows of d inputs) and y with draws of task i.
func (s *Tasks) points(i int, rng *rand.Rand, x, y []float64) {
	task := s.Tasks[i]
	d := len(task.Theta)
	noise := math.Sqrt(task.Noise)
	for r := range y {
		row := x[r*d : (r+1)*d]
		v := noise * rng.NormFloat64()
		for j := range row {
			row[j] = math.Sqrt(task.Variances[j]) * rng.NormFloat64()
			v += row[j] * task.Theta[j]
		}
		y[r] = v
	}
}
