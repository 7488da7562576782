package tasks_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	_ "github.com/trmaml/trmaml/tasks"
)

// Slopes is a task family: task i is y = slope_i x + noise on x in [-1, 1].
type Slopes struct{}

// SlopesConfig is its section, task.slopes.
type SlopesConfig struct {
	Slopes []float64 `yaml:"slopes"`
}

func section(c configs.Config) *SlopesConfig { return c.Task.Section("slopes").(*SlopesConfig) }

func (Slopes) Name() string                                        { return "slopes" }
func (Slopes) NewSection() any                                     { return &SlopesConfig{Slopes: []float64{1, -2}} }
func (Slopes) Noun() string                                        { return "slope" }
func (Slopes) Model() string                                       { return "mlp" }
func (Slopes) Ways(configs.Config) int                             { return 0 }
func (Slopes) Defaults(*configs.Config, func(string) bool) []error { return nil }
func (Slopes) PLR(configs.Config) (float64, error)                 { return 0.01, nil }

func (Slopes) Check(c configs.Config, k *configs.Checker) {
	if len(section(c).Slopes) == 0 {
		k.Fail("task.slopes.slopes", "an empty list", "must list at least one slope")
	}
}

func (Slopes) IO(configs.Config) configs.IO {
	return configs.IO{Height: 1, Width: 1, Channels: 1, Outputs: 1}
}

func (Slopes) Memory(c configs.Config) configs.MemoryEstimate {
	return configs.MemoryEstimate{Records: configs.RecordsMemory(c, float64(len(section(c).Slopes)))}
}

func (Slopes) Tasks(c configs.Config, _ configs.Env) (*configs.TaskSets, error) {
	s := slopeTasks(section(c).Slopes)
	return &configs.TaskSets{Train: s, Test: s, EvalTrain: s, EvalTest: s,
		Support: c.Task.Support, Query: c.Task.Query, EvalQuery: c.Eval.Query}, nil
}

// slopeTasks is the family's metalearn.TaskSet.
type slopeTasks []float64

func (s slopeTasks) Len() int          { return len(s) }
func (s slopeTasks) Name(i int) string { return fmt.Sprintf("slope %g", s[i]) }
func (s slopeTasks) Mass(int) float64  { return 1 }
func (s slopeTasks) Dims() (int, int)  { return 1, 1 }
func (s slopeTasks) Sample(i int, rng *rand.Rand, b *metalearn.Batch, t int) {
	sx, sy, qx, qy := b.Row(t)
	for _, xy := range [][2][]float64{{sx, sy}, {qx, qy}} {
		for j := range xy[0] {
			xy[0][j] = 2*rng.Float64() - 1
			xy[1][j] = s[i]*xy[0][j] + 0.1*rng.NormFloat64()
		}
	}
}

// The family's registration, in an init function of its package (the
// built-in families are lines of package tasks' table instead).
func init() { configs.RegisterFamily(Slopes{}) }

// Example_newFamily uses a task family added in its own package: its
// section, checks, defaults, memory estimate and task sets, registered
// once. Configs then name it; training, evaluation, reports and plots need
// nothing else.
func Example_newFamily() {
	file := `
name: slopes_trmaml
algorithm: trmaml
task: {family: slopes, slopes: {slopes: [0.5, -1, 3]}}
model: {kind: mlp, mlp: {hidden: []}}
inner: {alpha: 0.1}
meta: {iterations: 50, batch: 6, lr: 1.0e-2}
eval: {every: 50, instances: 30, train_instances: 30, query: 20}
`
	cfg, err := configs.Parse("slopes.yaml", []byte(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "slopes")
	defer os.RemoveAll(dir)
	res, err := run.Train(context.Background(), cfg, dir, run.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.MetaTest.Tasks)

	_, err = configs.Parse("bad.yaml", []byte("task: {family: slopes, slopes: {slopes: []}}\n"))
	fmt.Println(err)
	_, err = configs.Parse("typo.yaml", []byte("task: {family: slope}\n"))
	msg, registered, _ := strings.Cut(err.Error(), " (registered: ")
	fmt.Println(msg)
	fmt.Println("the error lists slopes among the registered families:", strings.Contains(registered, "slopes"))
	// Output:
	// [slope 0.5 slope -1 slope 3]
	// bad.yaml:1: task.slopes.slopes = "an empty list": must list at least one slope
	// typo.yaml:1: task.family = "slope": is not registered
	// the error lists slopes among the registered families: true
}
