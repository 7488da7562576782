package results_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trmaml/trmaml/models/mlp"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/tasks/sinusoid"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/run"
)

// Training two tiny sinusoid runs into run directories (package run), then
// loading them and printing the results table, as trmaml report does. The
// reading side (results and rundir) needs only the directories' files.
func Example() {
	root, err := os.MkdirTemp("", "trmaml-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	var dirs []string
	for _, alg := range []string{"maml", "trmaml"} {
		c := configs.Defaults()
		c.Name, c.Algorithm = "tiny", alg
		// 9 meta-test tasks of amplitude width 0.5, 3 of them for training.
		sine := c.Task.Section(sinusoid.Name).(*sinusoid.Config)
		sine.TaskWidth = 0.5
		sine.TestAmplitudes = [2]float64{0.5, 5}
		sine.TrainAmplitudes = [][2]float64{{0.5, 1.5}, {4.5, 5}}
		mlp.Section(c).Hidden = []int{8}
		c.Meta.Iterations, c.Meta.Batch = 30, 10
		c.Meta.LR, c.Settings("trmaml").(*metalearn.TRMAML).PLR = 0.01, 0.05
		c.Eval.Every, c.Eval.Instances, c.Eval.TrainInstances, c.Eval.Batch = 10, 50, 30, 10
		dir := filepath.Join(root, alg)
		if _, err := run.Train(context.Background(), c, dir, run.Options{}); err != nil {
			panic(err)
		}
		dirs = append(dirs, dir)
	}

	runs, err := results.LoadAll(dirs)
	if err != nil {
		panic(err)
	}
	for _, r := range runs {
		fmt.Printf("%s: %s, seed %d, %d iterations\n", r.Dir[len(root)+1:], r.Result.Algorithm, r.Result.Seed, r.Result.Iterations)
	}
	groups, err := results.GroupRuns(runs)
	if err != nil {
		panic(err)
	}
	table, err := results.Table(groups)
	if err != nil {
		panic(err)
	}
	fmt.Print(table.Markdown())
	// Output:
	// maml: maml, seed 1, 30 iterations
	// trmaml: trmaml, seed 1, 30 iterations
	// Task MSE statistics across the 9 meta-test tasks after meta-training (Mean, Worst, Std. Dev.), and the meta-training tasks' mean weighted by the training distribution. Each entry is the mean over seeds ± the half-width of its 95% confidence interval (Student t, n-1 degrees of freedom; none for a single seed).
	//
	// | Setting | Algorithm | Seeds | Mean | Worst | Std. Dev. | Meta-train weighted mean |
	// |---|---|---:|---:|---:|---:|---:|
	// | 5-shot | MAML | 1 | **4.30** | **11.00** | 3.38 | **3.84** |
	// | 5-shot | TR-MAML | 1 | 4.40 | 11.04 | **3.37** | 3.91 |
}
